//! The metrics and health endpoints: `/metrics`, `/healthz`, `/livez`, `/readyz`.
//!
//! Health answers follow the Kubernetes component convention: `200 ok` when every check
//! passes; otherwise `500` with one line per check (`[+]name ok` / `[-]name failed: reason
//! withheld`) and `healthz check failed`. `?verbose` lists the checks on success too.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use parking_lot::RwLock;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// A named health check: `Ok(())` when healthy, else the reason (logged, not served).
pub type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// Which endpoints a check belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// `/healthz` and `/livez`: the process works (e.g. the leader still renews its lease).
    Live,
    /// `/readyz` only: the process is ready (e.g. caches synced).
    Ready,
}

/// Health checks and the metrics registry served by [`serve`].
#[derive(Clone, Default)]
pub struct Endpoints {
    checks: Arc<RwLock<Vec<(String, Probe, Check)>>>,
    registry: Arc<RwLock<Registry>>,
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .checks
            .read()
            .iter()
            .map(|(n, _, _)| n.clone())
            .collect();
        f.debug_struct("Endpoints")
            .field("checks", &names)
            .finish_non_exhaustive()
    }
}

impl Endpoints {
    /// Endpoints with only the always-passing `ping` check.
    pub fn new() -> Self {
        let endpoints = Endpoints::default();
        endpoints.add_check("ping", Probe::Live, Arc::new(|| Ok(())));
        endpoints
    }

    /// Adds a check; `Live` checks also count for readiness, as in kube-controller-manager.
    pub fn add_check(&self, name: &str, probe: Probe, check: Check) {
        self.checks.write().push((name.to_string(), probe, check));
    }

    /// The registry rendered at `/metrics`; register collectors here.
    pub fn registry(&self) -> Arc<RwLock<Registry>> {
        self.registry.clone()
    }

    /// Answers one request (public for tests).
    pub fn respond(&self, path: &str, query: Option<&str>) -> (StatusCode, String) {
        let verbose =
            query.is_some_and(|q| q.split('&').any(|p| p == "verbose" || p == "verbose=true"));
        match path {
            "/metrics" => {
                let mut out = String::new();
                match prometheus_client::encoding::text::encode(&mut out, &self.registry.read()) {
                    Ok(()) => (StatusCode::OK, out),
                    Err(e) => (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        format!("encoding metrics: {e}\n"),
                    ),
                }
            }
            "/healthz" | "/livez" => self.health(&[Probe::Live], verbose),
            "/readyz" => self.health(&[Probe::Live, Probe::Ready], verbose),
            _ => (StatusCode::NOT_FOUND, "404 page not found\n".to_string()),
        }
    }

    fn health(&self, probes: &[Probe], verbose: bool) -> (StatusCode, String) {
        let mut lines = String::new();
        let mut failed = false;
        for (name, probe, check) in self.checks.read().iter() {
            if !probes.contains(probe) {
                continue;
            }
            match check() {
                Ok(()) => lines.push_str(&format!("[+]{name} ok\n")),
                Err(reason) => {
                    tracing::info!(check = %name, %reason, "health check failed");
                    lines.push_str(&format!("[-]{name} failed: reason withheld\n"));
                    failed = true;
                }
            }
        }
        if failed {
            lines.push_str("healthz check failed\n");
            (StatusCode::INTERNAL_SERVER_ERROR, lines)
        } else if verbose {
            lines.push_str("healthz check passed\n");
            (StatusCode::OK, lines)
        } else {
            (StatusCode::OK, "ok".to_string())
        }
    }
}

/// Serves the endpoints on `addr` until `shutdown` fires; returns the bound address at once.
pub async fn serve(
    addr: SocketAddr,
    endpoints: Endpoints,
    shutdown: CancellationToken,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let task = tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                _ = shutdown.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "accepting a metrics/health connection");
                        continue;
                    }
                },
            };
            let endpoints = endpoints.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let (status, body) = endpoints.respond(req.uri().path(), req.uri().query());
                    let content_type = if req.uri().path() == "/metrics" {
                        "application/openmetrics-text; version=1.0.0; charset=utf-8"
                    } else {
                        "text/plain; charset=utf-8"
                    };
                    let response = Response::builder()
                        .status(status)
                        .header("content-type", content_type)
                        .header("x-content-type-options", "nosniff")
                        .body(Full::new(Bytes::from(body)));
                    async move {
                        Ok::<_, Infallible>(
                            response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))),
                        )
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await
                {
                    tracing::debug!(error = %e, "metrics/health connection ended with an error");
                }
            });
        }
    });
    Ok((local, task))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn health_answers_follow_the_component_convention() {
        let endpoints = Endpoints::new();
        let synced = Arc::new(AtomicBool::new(false));
        let s = synced.clone();
        endpoints.add_check(
            "informer-sync",
            Probe::Ready,
            Arc::new(move || {
                if s.load(Ordering::SeqCst) {
                    Ok(())
                } else {
                    Err("not synced".into())
                }
            }),
        );
        assert_eq!(
            endpoints.respond("/healthz", None),
            (StatusCode::OK, "ok".into())
        );
        assert_eq!(
            endpoints.respond("/livez", None),
            (StatusCode::OK, "ok".into())
        );
        assert_eq!(
            endpoints.respond("/readyz", None),
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "[+]ping ok\n[-]informer-sync failed: reason withheld\nhealthz check failed\n"
                    .into()
            )
        );
        synced.store(true, Ordering::SeqCst);
        assert_eq!(
            endpoints.respond("/readyz", None),
            (StatusCode::OK, "ok".into())
        );
        assert_eq!(
            endpoints.respond("/readyz", Some("verbose")),
            (
                StatusCode::OK,
                "[+]ping ok\n[+]informer-sync ok\nhealthz check passed\n".into()
            )
        );
        assert_eq!(endpoints.respond("/nope", None).0, StatusCode::NOT_FOUND);
    }

    #[test]
    fn metrics_render_registered_collectors() {
        let endpoints = Endpoints::new();
        let gauge = prometheus_client::metrics::gauge::Gauge::<i64>::default();
        gauge.set(1);
        endpoints.registry().write().register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.",
            gauge,
        );
        let (status, body) = endpoints.respond("/metrics", None);
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("leader_election_master_status 1"), "{body}");
    }

    #[tokio::test]
    async fn serves_over_http() {
        let shutdown = CancellationToken::new();
        let (addr, task) = serve(
            "127.0.0.1:0".parse().expect("addr"),
            Endpoints::new(),
            shutdown.clone(),
        )
        .await
        .expect("bind");
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .expect("write");
        let mut response = String::new();
        stream.read_to_string(&mut response).await.expect("read");
        assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
        assert!(response.ends_with("ok"), "{response}");
        shutdown.cancel();
        task.await.expect("server task ends");
    }
}
