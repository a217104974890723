//! The process's one Kubernetes client: configuration from `--kubeconfig`/`--master` or the
//! in-cluster service account, and client-side rate limiting (`--kube-api-qps`,
//! `--kube-api-burst`) shared by every controller, like client-go's token-bucket limiter.

use std::future::Future;
use std::num::NonZeroU32;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use kube::client::ClientBuilder;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::metrics::Metrics;

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The kubeconfig file could not be read or is invalid.
    #[error("invalid kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The file given with `--kubeconfig`.
        path: String,
        /// What was wrong.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Neither a kubeconfig nor an in-cluster environment was found.
    #[error("no --kubeconfig or --master given and not running in a cluster: {0}")]
    Infer(#[source] kube::config::InferConfigError),
    /// `--master` is not a URL.
    #[error("invalid --master {0:?}: {1}")]
    Master(String, String),
    /// The rate limit flags make no limiter.
    #[error("invalid client rate limit: qps {qps}, burst {burst}")]
    RateLimit {
        /// `--kube-api-qps`
        qps: f32,
        /// `--kube-api-burst`
        burst: i32,
    },
    /// The client stack could not be built.
    #[error("building the client: {0}")]
    Build(#[source] kube::Error),
}

/// Loads the client configuration the way kube-controller-manager does: `--kubeconfig` (its
/// current context), with `--master` overriding the server; neither → in-cluster config (then
/// the default kubeconfig locations).
pub async fn load_config(
    kubeconfig: Option<&Path>,
    master: Option<&str>,
) -> Result<kube::Config, ClientError> {
    let mut config = match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path).map_err(|source| ClientError::Kubeconfig {
                path: path.display().to_string(),
                source,
            })?;
            kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .map_err(|source| ClientError::Kubeconfig {
                    path: path.display().to_string(),
                    source,
                })?
        }
        None => kube::Config::infer().await.map_err(ClientError::Infer)?,
    };
    if let Some(master) = master {
        config.cluster_url = master.parse().map_err(|e: http::uri::InvalidUri| {
            ClientError::Master(master.into(), e.to_string())
        })?;
    }
    Ok(config)
}

/// client-go's defaults when `--kube-api-qps` or `--kube-api-burst` is 0.
pub const DEFAULT_QPS: f32 = 5.0;
/// See [`DEFAULT_QPS`].
pub const DEFAULT_BURST: i32 = 10;

/// A token bucket admitting `qps` requests per second with bursts of `burst`, as client-go's
/// REST client builds it: 0 means the default (5 QPS, burst 10); a negative `qps` means no
/// client-side rate limiting (`None`).
pub fn rate_limiter(
    qps: f32,
    burst: i32,
) -> Result<Option<Arc<DefaultDirectRateLimiter>>, ClientError> {
    let bad = || ClientError::RateLimit { qps, burst };
    let qps = if qps == 0.0 { DEFAULT_QPS } else { qps };
    let burst = if burst == 0 { DEFAULT_BURST } else { burst };
    if qps.is_nan() {
        return Err(bad());
    }
    if qps < 0.0 {
        return Ok(None);
    }
    let period = Duration::from_secs_f64(1.0 / f64::from(qps));
    let burst = u32::try_from(burst)
        .ok()
        .and_then(NonZeroU32::new)
        .ok_or_else(bad)?;
    let quota = Quota::with_period(period)
        .ok_or_else(bad)?
        .allow_burst(burst);
    Ok(Some(Arc::new(RateLimiter::direct(quota))))
}

/// Builds the shared client: every request first takes a token from `limiter` (if any), and is
/// counted and timed in `metrics` (`rest_client_*`).
pub fn build_client(
    config: kube::Config,
    limiter: Option<Arc<DefaultDirectRateLimiter>>,
    metrics: &Metrics,
) -> Result<kube::Client, ClientError> {
    let host = config
        .cluster_url
        .authority()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let builder = ClientBuilder::try_from(config).map_err(ClientError::Build)?;
    let instrument = RequestMetricsLayer {
        metrics: metrics.clone(),
        host: host.clone(),
    };
    let limit = limiter.map(|l| RateLimitLayer::new(l).with_metrics(metrics.clone(), host));
    let limit = tower::util::option_layer(limit);
    Ok(builder.with_layer(&instrument).with_layer(&limit).build())
}

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
        if self.admitted.is_none() {
            let limiter = self.limiter.clone();
            let (started, wait) = self.waiting.get_or_insert_with(|| {
                (
                    Instant::now(),
                    Box::pin(async move { limiter.until_ready().await }),
                )
            });
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

    #[test]
    fn rate_limits_follow_client_go() {
        let limited = |qps, burst| rate_limiter(qps, burst).expect("valid").is_some();
        assert!(limited(20.0, 30));
        assert!(limited(0.0, 30), "0 QPS means client-go's default 5");
        assert!(limited(20.0, 0), "burst 0 means client-go's default 10");
        assert!(!limited(-1.0, 30), "negative QPS turns the limiter off");
        assert!(!limited(-1.0, -5));
        assert!(rate_limiter(f32::NAN, 30).is_err());
        assert!(rate_limiter(20.0, -1).is_err());
        // Defaults: 10 admitted at once.
        let limiter = rate_limiter(0.0, 0).expect("valid").expect("limited");
        let admitted = (0..20).filter(|_| limiter.check().is_ok()).count();
        assert!((10..=11).contains(&admitted), "{admitted}");
    }

    #[test]
    fn bucket_admits_the_burst_then_refuses() {
        let limiter = rate_limiter(20.0, 30).expect("valid").expect("limited");
        let admitted = (0..40).filter(|_| limiter.check().is_ok()).count();
        // 30 from the burst, maybe one more refilled while the loop ran.
        assert!((30..=31).contains(&admitted), "{admitted}");
    }

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
