//! kcm's Kubernetes clients: configuration resolved as kube-controller-manager does
//! ([`config`]), one client per user with its own User-Agent and rate limiter ([`factory`],
//! [`user_agent`]), optionally authenticated as per-controller service accounts
//! ([`service_account`]), each request rate-limited and measured ([`layers`]) and retried as
//! client-go retries ([`retry`]).

pub mod config;
pub mod factory;
pub mod layers;
pub mod retry;
pub mod service_account;
pub mod user_agent;
mod wire;

#[cfg(test)]
mod client_tests;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

pub use config::load_config;
pub use factory::ClientFactory;
pub use layers::{RateLimitLayer, RequestMetricsLayer};

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The kubeconfig file could not be read or is invalid.
    #[error("--kubeconfig {path}")]
    Kubeconfig {
        /// The file given with `--kubeconfig`.
        path: String,
        /// What was wrong.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Neither `--kubeconfig` nor `--master` was given and the in-cluster configuration failed.
    #[error("neither --kubeconfig nor --master was given, and the in-cluster configuration failed")]
    InCluster(#[source] kube::config::InClusterError),
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
    /// The User-Agent is not a valid header value.
    #[error("invalid User-Agent {0:?}: {1}")]
    UserAgent(String, String),
    /// A controller's service account credentials could not be obtained.
    #[error("--use-service-account-credentials")]
    ServiceAccount(#[source] service_account::TokenError),
    /// The client stack could not be built.
    #[error("building the client")]
    Build(#[source] kube::Error),
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
}
