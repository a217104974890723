//! Tower layers every API client of kcm carries: client-side rate limiting and the
//! `rest_client_*` request metrics.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use governor::DefaultDirectRateLimiter;
use governor::clock::Clock;

use crate::metrics::Metrics;

/// A tower layer that delays requests until the shared token bucket admits them.
#[derive(Clone, Debug)]
pub struct RateLimitLayer {
    limiter: Arc<DefaultDirectRateLimiter>,
    metrics: Option<(Metrics, String)>,
}

impl RateLimitLayer {
    /// A layer drawing from `limiter`.
    pub fn new(limiter: Arc<DefaultDirectRateLimiter>) -> Self {
        RateLimitLayer {
            limiter,
            metrics: None,
        }
    }

    /// Also records each request's wait in `rest_client_rate_limiter_duration_seconds` with
    /// the API server's `host`.
    pub fn with_metrics(mut self, metrics: Metrics, host: String) -> Self {
        self.metrics = Some((metrics, host));
        self
    }
}

impl<S> tower::Layer<S> for RateLimitLayer {
    type Service = RateLimited<S>;
    fn layer(&self, inner: S) -> RateLimited<S> {
        RateLimited {
            inner,
            limiter: self.limiter.clone(),
            metrics: self.metrics.clone(),
            waiting: None,
            admitted: None,
        }
    }
}

type Wait = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The service made by [`RateLimitLayer`]: readiness waits for a token, `call` spends it.
pub struct RateLimited<S> {
    inner: S,
    limiter: Arc<DefaultDirectRateLimiter>,
    metrics: Option<(Metrics, String)>,
    waiting: Option<(Instant, Wait)>,
    /// Set once a token was taken: how long it took.
    admitted: Option<Duration>,
}

impl<S> std::fmt::Debug for RateLimited<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimited")
            .field("admitted", &self.admitted.is_some())
            .finish_non_exhaustive()
    }
}

impl<S, B> tower::Service<http::Request<B>> for RateLimited<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if self.admitted.is_none() && self.waiting.is_none() && self.limiter.check().is_ok() {
            // A token at once: no waiting future, no timer.
            self.admitted = Some(Duration::ZERO);
        }
        if self.admitted.is_none() {
            let limiter = self.limiter.clone();
            let (started, wait) = self
                .waiting
                .get_or_insert_with(|| (Instant::now(), Box::pin(until_ready(limiter))));
            if wait.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.admitted = Some(started.elapsed());
            self.waiting = None;
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if let (Some(waited), Some((metrics, host))) = (self.admitted.take(), &self.metrics) {
            metrics.observe_rate_limiter(request.method().as_str(), host, waited);
        }
        self.inner.call(request)
    }
}

/// Waits until `limiter` admits a request, on tokio's timer. (governor's own `until_ready`
/// sleeps on futures-timer, a thread of its own that every wait wakes, and that then wakes the
/// waiting task from outside the runtime: two thread wake-ups per limited request.)
async fn until_ready(limiter: Arc<DefaultDirectRateLimiter>) {
    loop {
        match limiter.check() {
            Ok(()) => return,
            Err(not_until) => {
                tokio::time::sleep(not_until.wait_time_from(limiter.clock().now())).await;
            }
        }
    }
}

/// A tower layer counting and timing every request (`rest_client_requests_total`,
/// `rest_client_request_duration_seconds`).
#[derive(Clone, Debug)]
pub struct RequestMetricsLayer {
    metrics: Metrics,
    host: String,
}

impl RequestMetricsLayer {
    /// Records into `metrics` under the API server's `host` (`host:port`).
    pub fn new(metrics: Metrics, host: String) -> Self {
        RequestMetricsLayer { metrics, host }
    }
}

impl<S> tower::Layer<S> for RequestMetricsLayer {
    type Service = RequestMetrics<S>;
    fn layer(&self, inner: S) -> RequestMetrics<S> {
        RequestMetrics {
            inner,
            metrics: self.metrics.clone(),
            host: self.host.clone(),
        }
    }
}

/// The service made by [`RequestMetricsLayer`].
#[derive(Clone, Debug)]
pub struct RequestMetrics<S> {
    inner: S,
    metrics: Metrics,
    host: String,
}

impl<S, B, R> tower::Service<http::Request<B>> for RequestMetrics<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.method().clone();
        let metrics = self.metrics.clone();
        let host = self.host.clone();
        let started = Instant::now();
        let response = self.inner.call(request);
        Box::pin(async move {
            let result = response.await;
            let code = result.as_ref().ok().map(|r| r.status().as_u16());
            metrics.observe_request(method.as_str(), &host, code, started.elapsed());
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::rate_limiter;

    #[tokio::test]
    async fn layer_gates_calls_on_tokens() {
        use tower::{Service, ServiceExt};
        let limiter = rate_limiter(1.0, 2).expect("valid").expect("limited");
        let metrics = Metrics::new();
        let inner = tower::service_fn(|r: http::Request<u32>| async move {
            Ok::<_, std::convert::Infallible>(r.into_body() * 2)
        });
        let layer = RateLimitLayer::new(limiter.clone()).with_metrics(metrics.clone(), "h".into());
        let mut svc = tower::Layer::layer(&layer, inner);
        let req = |x| http::Request::get("/api").body(x).expect("request");
        assert_eq!(svc.ready().await.expect("ready").call(req(1)).await, Ok(2));
        assert_eq!(svc.ready().await.expect("ready").call(req(2)).await, Ok(4));
        // The burst of two is spent: the next readiness must wait for a refill.
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(svc.poll_ready(&mut cx).is_pending());
        assert!(render(&metrics).contains(
            "rest_client_rate_limiter_duration_seconds_count{host=\"h\",verb=\"GET\"} 2\n"
        ));
    }

    /// Past the burst, requests go out at the limit's pace, woken by tokio's timer.
    #[tokio::test]
    async fn layer_paces_calls_past_the_burst() {
        use tower::{Service, ServiceExt};
        let limiter = rate_limiter(50.0, 1).expect("valid").expect("limited");
        let inner = tower::service_fn(|_: http::Request<()>| async move {
            Ok::<_, std::convert::Infallible>(Instant::now())
        });
        let mut svc = tower::Layer::layer(&RateLimitLayer::new(limiter), inner);
        let mut sent = Vec::new();
        for _ in 0..6 {
            let req = http::Request::get("/api").body(()).expect("request");
            sent.push(
                svc.ready()
                    .await
                    .expect("ready")
                    .call(req)
                    .await
                    .expect("sent"),
            );
        }
        // One at once, then one per 20 ms: five gaps of at least 20 ms (less the clock's
        // rounding), and not much more than that in all.
        for pair in sent.windows(2) {
            let gap = pair[1] - pair[0];
            assert!(gap >= Duration::from_millis(19), "gap {gap:?}");
        }
        let total = sent[5] - sent[0];
        assert!(total < Duration::from_secs(2), "total {total:?}");
    }

    fn render(metrics: &Metrics) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        metrics.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        text
    }

    #[tokio::test]
    async fn request_layer_counts_status_codes_and_transport_errors() {
        use tower::{Service, ServiceExt};
        let metrics = Metrics::new();
        let inner = tower::service_fn(|r: http::Request<()>| async move {
            match r.uri().path() {
                "/missing" => Ok(http::Response::builder()
                    .status(404)
                    .body(())
                    .expect("response")),
                "/down" => Err("connection refused"),
                _ => Ok(http::Response::new(())),
            }
        });
        let layer = RequestMetricsLayer::new(metrics.clone(), "10.0.0.1:6443".into());
        let mut svc = tower::Layer::layer(&layer, inner);
        for (method, path) in [("GET", "/api"), ("GET", "/missing"), ("DELETE", "/down")] {
            let req = http::Request::builder()
                .method(method)
                .uri(path)
                .body(())
                .expect("request");
            let _ = svc.ready().await.expect("ready").call(req).await;
        }
        let text = render(&metrics);
        for line in [
            "rest_client_requests_total{code=\"200\",host=\"10.0.0.1:6443\",method=\"GET\"} 1\n",
            "rest_client_requests_total{code=\"404\",host=\"10.0.0.1:6443\",method=\"GET\"} 1\n",
            "rest_client_requests_total{code=\"<error>\",host=\"10.0.0.1:6443\",method=\"DELETE\"} 1\n",
            "rest_client_request_duration_seconds_count{host=\"10.0.0.1:6443\",verb=\"GET\"} 2\n",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
    }
}
