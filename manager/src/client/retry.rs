//! client-go's request retries (`rest/with_retry.go`), in place of kube-client's own.
//!
//! kube-client retries 429, 503 and 504 by itself, up to 15 times with exponential backoff,
//! whether or not the server asked for it. client-go retries only when the server says when:
//! a 429 or any 5xx with an integer `Retry-After` header is sent again after that many seconds,
//! up to 10 times; and a GET that failed on a broken connection (reset, EOF, closed) is sent
//! again after 1 s, as if the server had answered `Retry-After: 1` (writes are not: they may
//! have been applied). Every attempt takes a token from the client's rate limiter again and
//! counts in `rest_client_requests_total`; attempts after the first also count in
//! `rest_client_request_retries_total`.
//!
//! The policy sits outside the rate limiter and the request metrics of each client
//! ([`super::factory`]).

use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use kube::client::Body;
use tower::BoxError;

use crate::metrics::Metrics;

/// client-go's `maxRetries` for requests built by its REST client.
pub const MAX_RETRIES: u32 = 10;

/// The wait client-go gives a retryable connection error (its artificial `Retry-After: 1`).
const CONNECTION_ERROR_WAIT: Duration = Duration::from_secs(1);

/// What to do after an attempt: `None` to return its result, or wait this long and send again.
pub fn decide<B>(
    method: &Method,
    attempts_so_far: u32,
    result: &Result<Response<B>, BoxError>,
) -> Option<Duration> {
    if attempts_so_far >= MAX_RETRIES {
        return None;
    }
    match result {
        Ok(response) => retry_after(response),
        Err(err) if *method == Method::GET && is_broken_connection(err.as_ref()) => {
            Some(CONNECTION_ERROR_WAIT)
        }
        Err(_) => None,
    }
}

/// client-go's `checkWait`: a 429 or 5xx with an integer `Retry-After` (seconds).
fn retry_after<B>(response: &Response<B>) -> Option<Duration> {
    let status = response.status();
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let seconds: i64 = response
        .headers()
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    // Go's Duration of a negative count of seconds sleeps not at all.
    Some(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

/// apimachinery's `IsConnectionReset` / `IsProbableEOF` / `IsHTTP2ConnectionLost`, for the
/// errors a hyper client gives: a reset, an EOF or a closed connection anywhere in the chain.
fn is_broken_connection(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            if matches!(
                io.kind(),
                ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof
            ) {
                return true;
            }
        }
        if let Some(h) = e.downcast_ref::<hyper::Error>()
            && (h.is_incomplete_message() || h.is_closed() || h.is_canceled())
        {
            return true;
        }
        let text = e.to_string().to_ascii_lowercase();
        if text.contains("connection reset")
            || text.contains("broken pipe")
            || text.contains("connection closed")
            || text.contains("goaway")
        {
            return true;
        }
        cur = e.source();
    }
    false
}

/// The [`tower::retry::Policy`] of every kcm client.
#[derive(Clone, Debug)]
pub struct ClientGoRetry {
    attempts: u32,
    metrics: Metrics,
    host: String,
}

impl ClientGoRetry {
    /// A policy for one request; retries are counted in `metrics` under `host`.
    pub fn new(metrics: Metrics, host: String) -> Self {
        ClientGoRetry {
            attempts: 0,
            metrics,
            host,
        }
    }
}

impl<B> tower::retry::Policy<Request<Body>, Response<B>, BoxError> for ClientGoRetry {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        req: &mut Request<Body>,
        result: &mut Result<Response<B>, BoxError>,
    ) -> Option<Self::Future> {
        if self.attempts > 0 {
            // This result is a retry's: client-go counts each retry attempt with its own result.
            let code = match result {
                Ok(r) => r.status().as_u16().to_string(),
                Err(_) => "<error>".to_string(),
            };
            self.metrics
                .record_retry(&code, &self.host, req.method().as_str());
        }
        let wait = decide(req.method(), self.attempts, result)?;
        self.attempts += 1;
        tracing::debug!(
            delay = ?wait,
            attempt = self.attempts,
            url = %req.uri(),
            "Got a Retry-After response"
        );
        Some(tokio::time::sleep(wait))
    }

    fn clone_request(&mut self, req: &Request<Body>) -> Option<Request<Body>> {
        // Streaming bodies cannot be sent twice (client-go: "an opaque reader").
        let body = req.body().try_clone()?;
        let mut out = Request::builder()
            .method(req.method().clone())
            .uri(req.uri().clone())
            .version(req.version())
            .body(body)
            .ok()?;
        *out.headers_mut() = req.headers().clone();
        *out.extensions_mut() = req.extensions().clone();
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, retry_after: Option<&str>) -> Result<Response<()>, BoxError> {
        let mut b = Response::builder().status(status);
        if let Some(v) = retry_after {
            b = b.header("Retry-After", v);
        }
        Ok(b.body(()).expect("response"))
    }

    fn io(kind: std::io::ErrorKind) -> Result<Response<()>, BoxError> {
        Err(Box::new(std::io::Error::new(kind, "boom")))
    }

    /// (method, attempts so far, the attempt's result, the wait expected).
    type Case<'a> = (
        &'a Method,
        u32,
        Result<Response<()>, BoxError>,
        Option<Duration>,
    );

    #[test]
    fn retries_only_what_client_go_retries() {
        let get = Method::GET;
        let put = Method::PUT;
        let secs = Duration::from_secs;
        let cases: &[Case] = &[
            // Status codes: 429 and 5xx with an integer Retry-After, nothing else.
            (&put, 0, response(429, Some("1")), Some(secs(1))),
            (&put, 0, response(503, Some("3")), Some(secs(3))),
            (&put, 0, response(500, Some("0")), Some(secs(0))),
            (&put, 0, response(504, Some(" 2 ")), Some(secs(2))),
            (&put, 0, response(503, None), None),
            (&put, 0, response(429, None), None),
            (
                &put,
                0,
                response(429, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
                None,
            ),
            (&put, 0, response(409, Some("1")), None),
            (&get, 0, response(404, Some("1")), None),
            (&put, 0, response(200, Some("1")), None),
            (&put, 0, response(503, Some("-4")), Some(secs(0))),
            // At most ten retries.
            (&put, 9, response(429, Some("1")), Some(secs(1))),
            (&put, 10, response(429, Some("1")), None),
            // Broken connections: GETs only.
            (
                &get,
                0,
                io(std::io::ErrorKind::ConnectionReset),
                Some(secs(1)),
            ),
            (
                &get,
                0,
                io(std::io::ErrorKind::UnexpectedEof),
                Some(secs(1)),
            ),
            (&put, 0, io(std::io::ErrorKind::ConnectionReset), None),
            (&get, 0, io(std::io::ErrorKind::ConnectionRefused), None),
            (&get, 0, io(std::io::ErrorKind::PermissionDenied), None),
        ];
        for (i, (method, attempts, result, want)) in cases.iter().enumerate() {
            assert_eq!(decide(method, *attempts, result), *want, "case {i}");
        }
    }

    #[test]
    fn errors_are_recognised_through_their_chain() {
        #[derive(Debug)]
        struct Wrapped(std::io::Error);
        impl std::fmt::Display for Wrapped {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("client error (SendRequest)")
            }
        }
        impl std::error::Error for Wrapped {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let reset = Wrapped(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(is_broken_connection(&reset));
        let text = std::io::Error::other("connection closed before message completed");
        assert!(is_broken_connection(&text));
        let other = Wrapped(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert!(!is_broken_connection(&other));
    }
}
