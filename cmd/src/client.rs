//! The process's one Kubernetes client: configuration from `--kubeconfig`/`--master` or the
//! in-cluster service account, and client-side rate limiting (`--kube-api-qps`,
//! `--kube-api-burst`) shared by every controller, like client-go's token-bucket limiter.

use std::future::Future;
use std::num::NonZeroU32;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use kube::client::ClientBuilder;
use kube::config::{KubeConfigOptions, Kubeconfig};

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
        burst: u32,
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

/// A token bucket admitting `qps` requests per second with bursts of `burst`.
pub fn rate_limiter(qps: f32, burst: u32) -> Result<Arc<DefaultDirectRateLimiter>, ClientError> {
    let bad = || ClientError::RateLimit { qps, burst };
    if qps.is_nan() || qps <= 0.0 {
        return Err(bad());
    }
    let period = Duration::from_secs_f64(1.0 / f64::from(qps));
    let burst = NonZeroU32::new(burst).ok_or_else(bad)?;
    let quota = Quota::with_period(period)
        .ok_or_else(bad)?
        .allow_burst(burst);
    Ok(Arc::new(RateLimiter::direct(quota)))
}

/// Builds the shared client: every request first takes a token from `limiter`.
pub fn build_client(
    config: kube::Config,
    limiter: Arc<DefaultDirectRateLimiter>,
) -> Result<kube::Client, ClientError> {
    let builder = ClientBuilder::try_from(config).map_err(ClientError::Build)?;
    Ok(builder.with_layer(&RateLimitLayer { limiter }).build())
}

/// A tower layer that delays requests until the shared token bucket admits them.
#[derive(Clone, Debug)]
pub struct RateLimitLayer {
    limiter: Arc<DefaultDirectRateLimiter>,
}

impl RateLimitLayer {
    /// A layer drawing from `limiter`.
    pub fn new(limiter: Arc<DefaultDirectRateLimiter>) -> Self {
        RateLimitLayer { limiter }
    }
}

impl<S> tower::Layer<S> for RateLimitLayer {
    type Service = RateLimited<S>;
    fn layer(&self, inner: S) -> RateLimited<S> {
        RateLimited {
            inner,
            limiter: self.limiter.clone(),
            waiting: None,
            admitted: false,
        }
    }
}

type Wait = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The service made by [`RateLimitLayer`]: readiness waits for a token, `call` spends it.
pub struct RateLimited<S> {
    inner: S,
    limiter: Arc<DefaultDirectRateLimiter>,
    waiting: Option<Wait>,
    admitted: bool,
}

impl<S> std::fmt::Debug for RateLimited<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimited")
            .field("admitted", &self.admitted)
            .finish_non_exhaustive()
    }
}

impl<S, R> tower::Service<R> for RateLimited<S>
where
    S: tower::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if !self.admitted {
            let limiter = self.limiter.clone();
            let wait = self
                .waiting
                .get_or_insert_with(|| Box::pin(async move { limiter.until_ready().await }));
            if wait.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.waiting = None;
            self.admitted = true;
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        self.admitted = false;
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_rate_limits_are_rejected() {
        assert!(rate_limiter(0.0, 30).is_err());
        assert!(rate_limiter(-1.0, 30).is_err());
        assert!(rate_limiter(f32::NAN, 30).is_err());
        assert!(rate_limiter(20.0, 0).is_err());
        assert!(rate_limiter(20.0, 30).is_ok());
    }

    #[test]
    fn bucket_admits_the_burst_then_refuses() {
        let limiter = rate_limiter(20.0, 30).expect("valid");
        let admitted = (0..40).filter(|_| limiter.check().is_ok()).count();
        // 30 from the burst, maybe one more refilled while the loop ran.
        assert!((30..=31).contains(&admitted), "{admitted}");
    }

    #[tokio::test]
    async fn layer_gates_calls_on_tokens() {
        use tower::{Service, ServiceExt};
        let limiter = rate_limiter(1.0, 2).expect("valid");
        let inner =
            tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x * 2) });
        let mut svc = tower::Layer::layer(&RateLimitLayer::new(limiter.clone()), inner);
        assert_eq!(svc.ready().await.expect("ready").call(1).await, Ok(2));
        assert_eq!(svc.ready().await.expect("ready").call(2).await, Ok(4));
        // The burst of two is spent: the next readiness must wait for a refill.
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(svc.poll_ready(&mut cx).is_pending());
    }
}
