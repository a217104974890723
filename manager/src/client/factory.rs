//! One API client per user, as kube-controller-manager's client builders make them: each with
//! its own User-Agent (`.../deployment-controller`) and its own client-side rate limiter from
//! `--kube-api-qps`/`--kube-api-burst` (client-go gives every client its own token bucket),
//! and with `--use-service-account-credentials` the controllers' clients authenticated as
//! their own service accounts. With leader election, the controllers' clients send no write
//! while the leader's [`WriteFence`](kcm_leaderelection::WriteFence) is closed.

use std::sync::Arc;

use governor::DefaultDirectRateLimiter;
use http::HeaderValue;
use kcm_leaderelection::FenceLayer;
use kube::client::ClientBuilder;
use tokio_util::sync::CancellationToken;

use super::retry::ClientGoRetry;
use super::service_account::{self, BearerLayer, TokenSource};
use super::wire;
use super::{ClientError, RateLimitLayer, RequestMetricsLayer, rate_limiter, user_agent};
use crate::metrics::Metrics;

/// Builds kcm's API clients from one configuration.
#[derive(Clone)]
pub struct ClientFactory {
    config: kube::Config,
    qps: f32,
    burst: i32,
    metrics: Metrics,
    service_accounts: Option<(kube::Client, CancellationToken)>,
    fence: Option<FenceLayer>,
    agent_suffix: Option<String>,
}

impl std::fmt::Debug for ClientFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFactory")
            .field("server", &self.config.cluster_url.to_string())
            .field("service_accounts", &self.service_accounts.is_some())
            .field("fence", &self.fence)
            .finish_non_exhaustive()
    }
}

impl ClientFactory {
    /// A factory using the process's credentials for every client; fails on unusable rate
    /// limit flags.
    pub fn new(
        config: kube::Config,
        qps: f32,
        burst: i32,
        metrics: Metrics,
    ) -> Result<Self, ClientError> {
        rate_limiter(qps, burst)?;
        Ok(ClientFactory {
            config,
            qps,
            burst,
            metrics,
            service_accounts: None,
            fence: None,
            agent_suffix: None,
        })
    }

    /// Controllers' clients built from now on send writes (POST, PUT, PATCH, DELETE) only
    /// when `fence` lets them: the leader elector's fence, or a sharded member's fence and
    /// shard gate.
    pub fn set_fence(&mut self, fence: FenceLayer) {
        self.fence = Some(fence);
    }

    /// Controllers' User-Agents end with ` <suffix>` (a sharded member's identity, so that
    /// audit logs tell the replicas apart).
    pub fn set_agent_suffix(&mut self, suffix: impl Into<String>) {
        self.agent_suffix = Some(suffix.into());
    }

    fn controller_agent(&self, name: &str) -> String {
        match &self.agent_suffix {
            Some(suffix) => format!("{} {suffix}", user_agent::user_agent(name)),
            None => user_agent::user_agent(name),
        }
    }

    /// Controllers' clients authenticate as service accounts `kube-system/<controller>`, with
    /// tokens requested (and renewed until `cancel` fires) by a client using the process's
    /// credentials.
    pub fn use_service_account_credentials(
        &mut self,
        cancel: CancellationToken,
    ) -> Result<(), ClientError> {
        let root = self.client("kcm")?;
        self.service_accounts = Some((root, cancel));
        Ok(())
    }

    /// The metrics every client of this factory records into.
    pub fn metrics(&self) -> Metrics {
        self.metrics.clone()
    }

    /// A client with the process's credentials and User-Agent `<default>/<name>` (not
    /// fenced: for leader election, informers and token requests).
    pub fn client(&self, name: &str) -> Result<kube::Client, ClientError> {
        self.build(
            self.config.clone(),
            &user_agent::user_agent(name),
            None,
            None,
        )
    }

    /// The client of controller `name`: its service account's with
    /// `--use-service-account-credentials` (User-Agent `.../system:serviceaccount:kube-system:<name>`),
    /// else as [`client`](Self::client); behind the fence if one was set.
    pub async fn controller_client(&self, name: &str) -> Result<kube::Client, ClientError> {
        let fence = self.fence.clone();
        let Some((root, cancel)) = &self.service_accounts else {
            return self.build(
                self.config.clone(),
                &self.controller_agent(name),
                None,
                fence,
            );
        };
        let tokens = TokenSource::start(root.clone(), name, cancel.child_token())
            .await
            .map_err(ClientError::ServiceAccount)?;
        // Only the TLS trust of the process's configuration: its credentials would win over
        // the token at the API server (client certificates are checked first).
        let mut config = self.config.clone();
        config.auth_info = Default::default();
        let username = format!(
            "system:serviceaccount:{}:{name}",
            service_account::NAMESPACE
        );
        self.build(
            config,
            &self.controller_agent(&username),
            Some(tokens.layer()),
            fence,
        )
    }

    fn build(
        &self,
        mut config: kube::Config,
        agent: &str,
        bearer: Option<BearerLayer>,
        fence: Option<FenceLayer>,
    ) -> Result<kube::Client, ClientError> {
        let value = HeaderValue::from_str(agent)
            .map_err(|e| ClientError::UserAgent(agent.to_string(), e.to_string()))?;
        config
            .headers
            .retain(|(name, _)| name != http::header::USER_AGENT);
        config.headers.push((http::header::USER_AGENT, value));
        let limiter = rate_limiter(self.qps, self.burst)?;
        build_with(config, limiter, &self.metrics, bearer, fence)
    }
}

/// Builds a client: every request first takes a token from `limiter` (if any), and is counted
/// and timed in `metrics` (`rest_client_*`); `bearer` sets the Authorization header; with a
/// `fence`, writes are checked against it after the rate limiter admitted them (a refused
/// write is not sent and not counted as a request).
pub(super) fn build_with(
    config: kube::Config,
    limiter: Option<Arc<DefaultDirectRateLimiter>>,
    metrics: &Metrics,
    bearer: Option<BearerLayer>,
    fence: Option<FenceLayer>,
) -> Result<kube::Client, ClientError> {
    let host = config
        .cluster_url
        .authority()
        .map(|a| a.to_string())
        .unwrap_or_default();
    // kube-client's own retries (429/503/504, up to 15, with or without Retry-After) give way
    // to client-go's, outside the rate limiter and the metrics, so that every attempt takes a
    // token and is counted as client-go's are.
    let mut config = config;
    config.default_retry = false;
    let wired = match &fence {
        Some(layer) => wire::fenced_builder(&config, layer.fence())?,
        None => None,
    };
    let builder = match wired {
        Some(builder) => builder,
        None => ClientBuilder::try_from(config).map_err(ClientError::Build)?,
    };
    let instrument = RequestMetricsLayer::new(metrics.clone(), host.clone());
    let limit = limiter.map(|l| RateLimitLayer::new(l).with_metrics(metrics.clone(), host.clone()));
    let limit = tower::util::option_layer(limit);
    let fence = tower::util::option_layer(fence);
    let bearer = tower::util::option_layer(bearer);
    // A retry sends the request again through the same stack, which must be cloneable.
    let shared = tower::buffer::BufferLayer::new(RETRY_BUFFER);
    let retry = tower::retry::RetryLayer::new(ClientGoRetry::new(metrics.clone(), host));
    Ok(builder
        .with_layer(&instrument)
        .with_layer(&fence)
        .with_layer(&limit)
        .with_layer(&bearer)
        .with_layer(&shared)
        .with_layer(&retry)
        .build())
}

/// Requests that may wait for the shared stack under the retry layer (kube-client's own
/// buffer is of the same size).
const RETRY_BUFFER: usize = 1024;
