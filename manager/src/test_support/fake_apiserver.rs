//! A tiny fake API server over plain HTTP for kcm's integration tests: it records every
//! request (method, path, User-Agent, Authorization, body) and answers with a handler.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use parking_lot::Mutex;
use tokio::net::TcpListener;

/// One request the fake received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub user_agent: String,
    pub authorization: String,
    pub body: serde_json::Value,
}

/// Answers a request: (status, JSON body).
pub type Handler = Arc<dyn Fn(&Seen) -> (u16, serde_json::Value) + Send + Sync>;

/// Answers a request with headers too: (status, headers, JSON body).
pub type HeaderHandler =
    Arc<dyn Fn(&Seen) -> (u16, Vec<(&'static str, String)>, serde_json::Value) + Send + Sync>;

/// A running fake; stops when dropped (its task is aborted).
pub struct FakeApiServer {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeApiServer {
    pub async fn start(handler: Handler) -> FakeApiServer {
        Self::start_with_headers(Arc::new(move |seen: &Seen| {
            let (status, body) = handler(seen);
            (status, Vec::new(), body)
        }))
        .await
    }

    pub async fn start_with_headers(handler: HeaderHandler) -> FakeApiServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (handler, log) = (handler.clone(), log.clone());
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                            let (handler, log) = (handler.clone(), log.clone());
                            async move {
                                let header = |name: &str| {
                                    req.headers()
                                        .get(name)
                                        .and_then(|v| v.to_str().ok())
                                        .unwrap_or_default()
                                        .to_string()
                                };
                                let mut seen = Seen {
                                    method: req.method().to_string(),
                                    path: req.uri().path().to_string(),
                                    user_agent: header("user-agent"),
                                    authorization: header("authorization"),
                                    body: serde_json::Value::Null,
                                };
                                let body = req.into_body().collect().await.map(|b| b.to_bytes());
                                let body: Bytes = body.unwrap_or_default();
                                seen.body = serde_json::from_slice(&body).unwrap_or_default();
                                let (status, headers, answer) = handler(&seen);
                                log.lock().push(seen);
                                let mut response = Response::builder()
                                    .status(status)
                                    .header("content-type", "application/json");
                                for (name, value) in headers {
                                    response = response.header(name, value);
                                }
                                let response = response
                                    .body(Full::new(Bytes::from(answer.to_string())))
                                    .expect("response");
                                Ok::<_, Infallible>(response)
                            }
                        });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        FakeApiServer { addr, seen, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().clone()
    }
}

/// A Kubernetes Status answer.
pub fn status(code: u16, reason: &str) -> (u16, serde_json::Value) {
    (
        code,
        serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": reason, "code": code, "message": reason,
        }),
    )
}
