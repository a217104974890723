//! Informer options: the namespace, the default resync period, and the reflector's
//! configuration (selectors, list strategy, page size, backoff, metrics).

use std::time::Duration;

use kcm_reflector::ReflectorConfig;

/// Namespace, label selector, field selector and shard selector: what makes two informers of
/// one type distinct in a factory.
pub(crate) type ScopeKey = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// Options of one shared informer (and the defaults of an [`InformerFactory`](crate::InformerFactory)).
///
/// Everything about listing and watching (selectors, streaming list, page size, backoff,
/// metrics) is the reflector's [`ReflectorConfig`]; the informer names the reflector itself.
///
/// ```
/// use std::time::Duration;
/// use kcm_informer::{InformerOptions, ReflectorConfig};
///
/// let options = InformerOptions::default()
///     .namespace("default")
///     .resync_period(Duration::from_secs(600))
///     .reflector(ReflectorConfig::default().labels("app=web").streaming_list());
/// assert_eq!(options.reflector.label_selector.as_deref(), Some("app=web"));
/// // Adjust one reflector setting, keeping the others:
/// let options = options.with_reflector(|r| r.page_size(100));
/// assert_eq!(options.reflector.page_size, Some(100));
/// ```
#[derive(Clone, Debug, Default)]
pub struct InformerOptions {
    /// Namespace to watch (`None` = all namespaces / cluster-scoped).
    pub namespace: Option<String>,
    /// Default handler resync period (0 = no resync); also the initial resync check period.
    pub resync_period: Duration,
    /// List and watch settings; the reflector's `name` is replaced by the informer's name.
    pub reflector: ReflectorConfig,
}

impl InformerOptions {
    /// Watches only `namespace`.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Sets the default resync period.
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = period;
        self
    }

    /// Replaces the reflector configuration.
    #[must_use]
    pub fn reflector(mut self, config: ReflectorConfig) -> Self {
        self.reflector = config;
        self
    }

    /// Changes the reflector configuration with `f` (e.g. `|r| r.labels("app=web")`).
    #[must_use]
    pub fn with_reflector(mut self, f: impl FnOnce(ReflectorConfig) -> ReflectorConfig) -> Self {
        self.reflector = f(self.reflector);
        self
    }

    /// The part of the options that identifies a distinct informer in a factory.
    pub(crate) fn scope_key(&self) -> ScopeKey {
        (
            self.namespace.clone(),
            self.reflector.label_selector.clone(),
            self.reflector.field_selector.clone(),
            self.reflector
                .shard
                .as_ref()
                .map(|s| s.selector().to_owned()),
        )
    }
}
