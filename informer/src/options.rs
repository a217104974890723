//! Informer options: scope (namespace, selectors), resync, list strategy, metrics.

use std::sync::Arc;
use std::time::Duration;

use kcm_reflector::{
    BackoffConfig, InitialListStrategy, NoopMetrics, ReflectorConfig, ReflectorMetrics,
};

/// Options of one shared informer (and the defaults of an [`InformerFactory`](crate::InformerFactory)).
#[derive(Clone, Debug)]
pub struct InformerOptions {
    /// Namespace to watch (`None` = all namespaces / cluster-scoped).
    pub namespace: Option<String>,
    /// Label selector for list and watch.
    pub label_selector: Option<String>,
    /// Field selector for list and watch.
    pub field_selector: Option<String>,
    /// Default handler resync period (0 = no resync); also the initial resync check period.
    pub resync_period: Duration,
    /// Paginated list or streaming list.
    pub initial_list: InitialListStrategy,
    /// Explicit list page size (`None` = the reflector decides).
    pub page_size: Option<u32>,
    /// Error and activity counters (errors are logged and counted, never fatal).
    pub metrics: Arc<dyn ReflectorMetrics>,
    /// Backoff between failed list/watch attempts (upstream defaults).
    pub backoff: BackoffConfig,
}

impl Default for InformerOptions {
    fn default() -> Self {
        Self {
            namespace: None,
            label_selector: None,
            field_selector: None,
            resync_period: Duration::ZERO,
            initial_list: InitialListStrategy::List,
            page_size: None,
            metrics: Arc::new(NoopMetrics),
            backoff: BackoffConfig::default(),
        }
    }
}

impl InformerOptions {
    /// Watches only `namespace`.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Sets a label selector.
    #[must_use]
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Sets a field selector.
    #[must_use]
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// Sets the default resync period.
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = period;
        self
    }

    /// Uses a streaming list (falls back to a paginated list on any error).
    #[must_use]
    pub fn streaming_list(mut self) -> Self {
        self.initial_list = InitialListStrategy::StreamingList;
        self
    }

    /// Sets an explicit page size.
    #[must_use]
    pub fn page_size(mut self, size: u32) -> Self {
        self.page_size = Some(size);
        self
    }

    /// Installs a metrics hook.
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<dyn ReflectorMetrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Overrides the list/watch retry backoff.
    #[must_use]
    pub fn backoff(mut self, backoff: BackoffConfig) -> Self {
        self.backoff = backoff;
        self
    }

    /// The reflector configuration for these options.
    pub fn reflector_config(&self, name: &str) -> ReflectorConfig {
        let mut c = ReflectorConfig::default()
            .name(name)
            .initial_list(self.initial_list)
            .metrics(Arc::clone(&self.metrics))
            .backoff(self.backoff.clone());
        c.label_selector = self.label_selector.clone();
        c.field_selector = self.field_selector.clone();
        c.page_size = self.page_size;
        c
    }

    /// The part of the options that identifies a distinct informer in a factory.
    pub(crate) fn scope_key(&self) -> (Option<String>, Option<String>, Option<String>) {
        (
            self.namespace.clone(),
            self.label_selector.clone(),
            self.field_selector.clone(),
        )
    }
}
