//! Test helper: a `kube::Client` backed by an in-process mock HTTP handler that
//! records every request (method, path, content type, JSON body).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use parking_lot::Mutex;
use serde_json::{Value, json};

/// One request seen by the mock.
#[derive(Debug, Clone)]
pub(crate) struct MockRequest {
    pub method: String,
    pub path: String,
    pub content_type: Option<String>,
    pub body: Value,
}

/// The mock's answer.
#[derive(Debug, Clone)]
pub(crate) struct MockResponse {
    code: u16,
    body: Value,
}

impl MockResponse {
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
pub(crate) struct MockApi {
    requests: Arc<Mutex<Vec<MockRequest>>>,
    handler: Handler,
}

impl MockApi {
    pub fn new(handler: impl Fn(&MockRequest) -> MockResponse + Send + Sync + 'static) -> Self {
        Self {
            requests: Arc::default(),
            handler: Arc::new(handler),
        }
    }

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
