//! Reflector configuration (a small builder, in the style of kube-runtime's `watcher::Config`;
//! the fields of client-go's `Reflector`, `tools/cache/reflector.go`, that a user sets).

use std::sync::Arc;
use std::time::Duration;

use crate::backoff::BackoffConfig;
use crate::metrics::{NoopMetrics, ReflectorMetrics};
use crate::shard::dynamic::DynamicShard;
use crate::shard::scope::ShardScope;

/// How the reflector obtains the initial state (and the state after each relist).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InitialListStrategy {
    /// Paginated LIST (500 per page), then WATCH from the list's resourceVersion.
    #[default]
    List,
    /// Streaming list (KEP-3157 "watch-list"): one WATCH with `sendInitialEvents=true` that
    /// delivers the snapshot as ADDED events up to the `k8s.io/initial-events-end` bookmark and then
    /// continues as the live watch. Any error falls back to a paginated LIST for that attempt.
    /// (Upstream client-go enables this by default since 1.35 via the `WatchListClient` gate.)
    StreamingList,
}

/// Configuration of a [`Reflector`](crate::Reflector).
#[derive(Clone, Debug)]
pub struct ReflectorConfig {
    /// Name used in logs and metrics (upstream: the caller's location or the type name).
    pub name: String,
    /// Label selector sent with every list and watch.
    pub label_selector: Option<String>,
    /// Field selector sent with every list and watch.
    pub field_selector: Option<String>,
    /// The shard of a sharded resource: its selector is sent with every list and watch, and
    /// only its objects reach the store (see [`ShardScope`]).
    pub shard: Option<ShardScope>,
    /// A shard that changes while the reflector runs (see [`DynamicShard`]); when set it takes
    /// the place of `shard`.
    pub dynamic_shard: Option<DynamicShard>,
    /// Explicit page size (upstream `WatchListPageSize`); `None` lets the reflector decide
    /// (500, or unlimited when relisting at a specific resourceVersion, as client-go's
    /// `Reflector.list` decides).
    pub page_size: Option<u32>,
    /// Initial list strategy.
    pub initial_list: InitialListStrategy,
    /// Minimum server-side watch timeout; a value below 5 minutes is raised to 5 minutes.
    /// Each watch uses a timeout uniform in `[min, 2 * min)`.
    pub min_watch_timeout: Duration,
    /// Backoff between failed list/watch attempts.
    pub backoff: BackoffConfig,
    /// Hook counting errors and list/watch activity.
    pub metrics: Arc<dyn ReflectorMetrics>,
}

/// Upstream's default (and minimum) watch timeout.
pub(crate) const DEFAULT_MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(300);

/// The pager's default page size.
pub(crate) const DEFAULT_PAGE_SIZE: u32 = 500;

impl Default for ReflectorConfig {
    fn default() -> Self {
        Self {
            name: String::from("reflector"),
            label_selector: None,
            field_selector: None,
            shard: None,
            dynamic_shard: None,
            page_size: None,
            initial_list: InitialListStrategy::List,
            min_watch_timeout: DEFAULT_MIN_WATCH_TIMEOUT,
            backoff: BackoffConfig::default(),
            metrics: Arc::new(NoopMetrics),
        }
    }
}

impl ReflectorConfig {
    /// Sets the name used in logs.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Restricts the watched objects to those matching a label selector (`app=web,tier!=db`).
    #[must_use]
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Restricts the watched objects to those matching a field selector (`spec.nodeName=n1`).
    #[must_use]
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// Lists and watches only `scope`'s shard of the resource (server-side when the server
    /// applies the selector, always on the client).
    #[must_use]
    pub fn shard(mut self, scope: ShardScope) -> Self {
        self.shard = Some(scope);
        self
    }

    /// Lists and watches whatever `shard` selects at the moment: a change of the shard ends the
    /// watch and lists afresh with the new selector.
    #[must_use]
    pub fn dynamic_shard(mut self, shard: DynamicShard) -> Self {
        self.dynamic_shard = Some(shard);
        self
    }

    /// Sets an explicit list page size (0 = unlimited).
    #[must_use]
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = Some(page_size);
        self
    }

    /// Selects paginated list or streaming list.
    #[must_use]
    pub fn initial_list(mut self, strategy: InitialListStrategy) -> Self {
        self.initial_list = strategy;
        self
    }

    /// Shorthand for [`InitialListStrategy::StreamingList`].
    #[must_use]
    pub fn streaming_list(self) -> Self {
        self.initial_list(InitialListStrategy::StreamingList)
    }

    /// Sets the minimum watch timeout (honoured only when larger than 5 minutes, as upstream).
    #[must_use]
    pub fn min_watch_timeout(mut self, timeout: Duration) -> Self {
        self.min_watch_timeout = timeout;
        self
    }

    /// Overrides the backoff parameters.
    #[must_use]
    pub fn backoff(mut self, backoff: BackoffConfig) -> Self {
        self.backoff = backoff;
        self
    }

    /// Installs a metrics hook.
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<dyn ReflectorMetrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// The effective minimum watch timeout (never below 5 minutes).
    pub fn effective_min_watch_timeout(&self) -> Duration {
        self.min_watch_timeout.max(DEFAULT_MIN_WATCH_TIMEOUT)
    }
}
