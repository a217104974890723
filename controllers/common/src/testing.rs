//! Test helper (feature `testing`): a `kube::Client` backed by an in-process mock HTTP
//! handler that records every request (method, path, content type, JSON body). Controllers
//! built on this crate fake the API server with it in their unit tests.
//!
//! ```
//! use kcm_controller::testing::{MockApi, MockResponse};
//! use serde_json::json;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let api = MockApi::new(|req| match req.method.as_str() {
//!     "GET" => MockResponse::json(200, json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})),
//!     _ => MockResponse::status(405, "MethodNotAllowed", "no", None),
//! });
//! let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::namespaced(api.client(), "default");
//! assert_eq!(pods.get("p").await.unwrap().metadata.name.as_deref(), Some("p"));
//! assert_eq!(api.requests()[0].path, "/api/v1/namespaces/default/pods/p");
//! # }
//! ```

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use parking_lot::Mutex;
use serde_json::{Value, json};

/// One request seen by the mock.
#[derive(Debug, Clone)]
pub struct MockRequest {
    /// `GET`, `PUT`, …
    pub method: String,
    /// The URL path.
    pub path: String,
    /// The URL query (`fieldManager=...&force=true`), empty without one.
    pub query: String,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The JSON body (`null` when empty or not JSON).
    pub body: Value,
}

/// The mock's answer.
#[derive(Debug, Clone)]
pub struct MockResponse {
    code: u16,
    body: Value,
}

impl MockResponse {
    /// `body` with status `code`.
    pub fn json(code: u16, body: Value) -> Self {
        Self { code, body }
    }

    /// A failure `Status` as kube-apiserver sends it, optionally with one cause.
    pub fn status(code: u16, reason: &str, message: &str, cause: Option<&str>) -> Self {
        let mut body = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason, "code": code,
        });
        if let Some(c) = cause {
            body["details"] = json!({"causes": [{"reason": c, "message": message}]});
        }
        Self { code, body }
    }
}

type Handler = Arc<dyn Fn(&MockRequest) -> MockResponse + Send + Sync>;

/// A mock API server.
#[derive(Clone)]
pub struct MockApi {
    requests: Arc<Mutex<Vec<MockRequest>>>,
    handler: Handler,
}

impl fmt::Debug for MockApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockApi")
            .field("requests", &self.requests.lock().len())
            .finish_non_exhaustive()
    }
}

impl MockApi {
    /// A mock answering every request with `handler`.
    pub fn new(handler: impl Fn(&MockRequest) -> MockResponse + Send + Sync + 'static) -> Self {
        Self {
            requests: Arc::default(),
            handler: Arc::new(handler),
        }
    }

    /// The requests seen so far, in order.
    pub fn requests(&self) -> Vec<MockRequest> {
        self.requests.lock().clone()
    }

    /// A client whose requests go to this mock.
    pub fn client(&self) -> kube::Client {
        let this = self.clone();
        let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
            let this = this.clone();
            async move {
                let (parts, body) = req.into_parts();
                let bytes = body
                    .collect()
                    .await
                    .map(|c| c.to_bytes())
                    .unwrap_or_default();
                let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let recorded = MockRequest {
                    method: parts.method.to_string(),
                    path: parts.uri.path().to_string(),
                    query: parts.uri.query().unwrap_or_default().to_string(),
                    content_type: parts
                        .headers
                        .get(http::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string),
                    body,
                };
                let resp = (this.handler)(&recorded);
                this.requests.lock().push(recorded);
                let out = http::Response::builder()
                    .status(resp.code)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Full::new(Bytes::from(resp.body.to_string())))
                    .unwrap_or_default();
                Ok::<_, Infallible>(out)
            }
        });
        kube::Client::new(svc, "default")
    }
}
