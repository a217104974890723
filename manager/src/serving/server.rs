//! The HTTPS server: accepts TLS connections, then for each request authenticates,
//! authorizes and answers from the [`Endpoints`].
//!
//! Paths in `--authorization-always-allow-paths` are answered to anyone. Any other request
//! needs a user ([`Authenticator`]): without one it gets `401 Unauthorized`; a user the API
//! server does not allow ([`Authorizer`]) gets `403 Forbidden`. The debugging endpoints
//! ([`Debugging`]) are served only when enabled, and are never among the always-allowed paths
//! by default.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::authn::{Authenticator, ClientCert};
use super::authz::{Authorizer, verb};
use super::debug::Debugging;
use super::endpoints::{Endpoints, PLAIN};
use super::tls::Tls;

/// Everything a request goes through.
#[derive(Debug)]
pub struct Server {
    /// What is served.
    pub endpoints: Endpoints,
    /// TLS configuration.
    pub tls: Tls,
    /// Who is asking.
    pub authenticator: Authenticator,
    /// May they.
    pub authorizer: Authorizer,
}

type Body = Full<Bytes>;

/// The largest request body read (a `PUT /debug/flags/v` needs a few bytes).
const MAX_BODY: usize = 64 * 1024;

fn answer(status: StatusCode, content_type: &str, body: String) -> Response<Body> {
    answer_with(status, content_type, &[], body.into_bytes())
}

fn answer_with(
    status: StatusCode,
    content_type: &str,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
) -> Response<Body> {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", content_type)
        .header("x-content-type-options", "nosniff");
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    builder
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// The request body, at most [`MAX_BODY`] bytes.
async fn read_body(body: Incoming) -> Result<Bytes, String> {
    use http_body_util::BodyExt;
    let limited = http_body_util::Limited::new(body, MAX_BODY);
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => Err(format!("error reading request body: {e}")),
    }
}

impl Server {
    /// Answers one request on a connection whose client certificate was `cert`.
    pub async fn handle(
        &self,
        cert: Option<&ClientCert>,
        request: Request<Incoming>,
    ) -> Response<Body> {
        let path = request.uri().path().to_string();
        let path = path.as_str();
        if !self.authorizer.is_always_allowed(path) {
            let user = match self
                .authenticator
                .authenticate(cert, request.headers())
                .await
            {
                Ok(Some(user)) => user,
                Ok(None) => {
                    return answer(StatusCode::UNAUTHORIZED, PLAIN, "Unauthorized\n".into());
                }
                Err(e) => {
                    tracing::warn!(error = %crate::error_chain::display(&e), "authenticating a request");
                    return answer(StatusCode::UNAUTHORIZED, PLAIN, "Unauthorized\n".into());
                }
            };
            let verb = verb(request.method());
            match self.authorizer.authorize(&user, &verb, path).await {
                Ok(true) => {}
                Ok(false) => {
                    let body = format!(
                        "Forbidden: User {:?} cannot {verb} path {path:?}\n",
                        user.username
                    );
                    return answer(StatusCode::FORBIDDEN, PLAIN, body);
                }
                Err(e) => {
                    tracing::warn!(error = %crate::error_chain::display(&e), "authorizing a request");
                    let body = format!("Forbidden: authorization failed for {path:?}\n");
                    return answer(StatusCode::FORBIDDEN, PLAIN, body);
                }
            }
        }
        if let Some(debugging) = self
            .endpoints
            .debugging()
            .filter(|_| Debugging::serves(path))
        {
            let (parts, body) = request.into_parts();
            let body = if parts.method == http::Method::PUT {
                match read_body(body).await {
                    Ok(body) => body,
                    Err(message) => return answer(StatusCode::BAD_REQUEST, PLAIN, message),
                }
            } else {
                Bytes::new()
            };
            let a = debugging
                .respond(&parts.method, path, parts.uri.query(), &body)
                .await;
            return answer_with(a.status, a.content_type, &a.headers, a.body);
        }
        if request.method() != http::Method::GET && request.method() != http::Method::HEAD {
            return answer(
                StatusCode::METHOD_NOT_ALLOWED,
                PLAIN,
                "Method Not Allowed\n".into(),
            );
        }
        let accept = request
            .headers()
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        let (status, content_type, body) =
            self.endpoints.respond(path, request.uri().query(), accept);
        answer(status, content_type, body)
    }
}

/// Serves on `addr` until `shutdown` fires; returns the bound address at once.
pub async fn serve(
    addr: SocketAddr,
    server: Arc<Server>,
    shutdown: CancellationToken,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let acceptor = TlsAcceptor::from(server.tls.config.clone());
    let task = tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                _ = shutdown.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "accepting a connection");
                        continue;
                    }
                },
            };
            let (server, acceptor) = (server.clone(), acceptor.clone());
            tokio::spawn(async move {
                let tls = match acceptor.accept(stream).await {
                    Ok(tls) => tls,
                    Err(e) => {
                        tracing::debug!(error = %e, "TLS handshake failed");
                        return;
                    }
                };
                let cert = tls
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|chain| server.tls.clients.classify(chain));
                let cert = Arc::new(cert);
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let (server, cert) = (server.clone(), cert.clone());
                    async move {
                        Ok::<_, Infallible>(server.handle(cert.as_ref().as_ref(), request).await)
                    }
                });
                let io = hyper_util::rt::TokioIo::new(tls);
                let builder = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                );
                if let Err(e) = builder.serve_connection(io, service).await {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
            });
        }
    });
    Ok((local, task))
}
