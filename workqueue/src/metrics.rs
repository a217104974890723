//! Metrics hooks for the work queues (client-go `util/workqueue/metrics.go`).
//!
//! The queues only talk to the small metric traits defined here. A
//! [`MetricsProvider`] creates one metric of each kind per queue name. By
//! default no provider is installed and queues record nothing; a queue created
//! **without a name never gets metrics**, exactly as upstream.
//!
//! A provider is picked, in this order, from the queue's own configuration or
//! from the process-wide provider installed once with [`set_provider`] (the
//! equivalent of client-go's `workqueue.SetProvider`, which kube-controller-manager
//! calls at start-up). With the `prometheus` feature,
//! [`PrometheusMetricsProvider`](crate::PrometheusMetricsProvider) exports
//! client-go's series.

use std::fmt;
use std::sync::{Arc, OnceLock};

use tokio::time::Instant;

/// A value that goes up and down by one (queue depth).
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge that is set to an absolute value (unfinished work, longest running processor).
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the gauge.
    fn set(&self, value: f64);
}

/// A monotonically increasing count (adds, retries).
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A distribution of observations in seconds (queue latency, work duration).
pub trait HistogramMetric: Send + Sync {
    /// Records one observation.
    fn observe(&self, value: f64);
}

/// Creates the metrics of one queue, given its name.
///
/// Mirrors client-go's `MetricsProvider` interface; each method is called once
/// per named queue.
pub trait MetricsProvider: Send + Sync {
    /// Current number of dirty (added, not yet handed out) items.
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric>;
    /// Total number of (non-duplicate) adds.
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// Time from the first add to the hand-out by `get`.
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Time from `get` to `done`.
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Sum of the ages of all items currently being processed.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric>;
    /// Age of the oldest item currently being processed.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric>;
    /// Number of `add_after` / `add_rate_limited` calls.
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric>;
}

static GLOBAL_PROVIDER: OnceLock<Arc<dyn MetricsProvider>> = OnceLock::new();

/// Installs the process-wide metrics provider used by queues whose configuration
/// names none.
///
/// Only the first call has an effect (as upstream's `SetProvider`); it returns
/// `true` if this call installed the provider. Queues created before the call
/// keep recording nothing.
pub fn set_provider(provider: Arc<dyn MetricsProvider>) -> bool {
    GLOBAL_PROVIDER.set(provider).is_ok()
}

/// Picks the provider for a queue: its own, else the global one, else none.
pub(crate) fn resolve_provider(
    own: Option<&Arc<dyn MetricsProvider>>,
) -> Option<Arc<dyn MetricsProvider>> {
    own.cloned().or_else(|| GLOBAL_PROVIDER.get().cloned())
}

fn seconds_since(start: Instant, now: Instant) -> f64 {
    now.saturating_duration_since(start).as_secs_f64()
}

/// The metrics of one queue. Always used under the queue's lock.
///
/// client-go's `addTimes` and `processingStartTimes` maps are not here: each item's two
/// timestamps live in its queue entry (`item_states::ItemState`), which exists
/// exactly as long as either timestamp can be set, so the same rules need no map of their
/// own (and no second hash of the item).
pub(crate) struct QueueMetrics {
    depth: Box<dyn GaugeMetric>,
    adds: Box<dyn CounterMetric>,
    latency: Box<dyn HistogramMetric>,
    work_duration: Box<dyn HistogramMetric>,
    unfinished_work_seconds: Box<dyn SettableGaugeMetric>,
    longest_running_processor: Box<dyn SettableGaugeMetric>,
}

impl fmt::Debug for QueueMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueMetrics").finish_non_exhaustive()
    }
}

impl QueueMetrics {
    /// Metrics for a queue, or `None` when the queue is unnamed or no provider exists.
    pub(crate) fn new(name: &str, provider: Option<&Arc<dyn MetricsProvider>>) -> Option<Self> {
        if name.is_empty() {
            return None;
        }
        let provider = provider?;
        Some(Self {
            depth: provider.new_depth_metric(name),
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider.new_longest_running_processor_seconds_metric(name),
        })
    }

    /// An item became dirty; `added_at` is its `addTimes` entry.
    pub(crate) fn add(&self, added_at: &mut Option<Instant>) {
        self.adds.inc();
        self.depth.inc();
        if added_at.is_none() {
            *added_at = Some(Instant::now());
        }
    }

    /// An item was handed out by `get`.
    pub(crate) fn get(&self, added_at: &mut Option<Instant>, started_at: &mut Option<Instant>) {
        let now = Instant::now();
        self.depth.dec();
        *started_at = Some(now);
        if let Some(start) = added_at.take() {
            self.latency.observe(seconds_since(start, now));
        }
    }

    /// `done` was called for an item; `started_at` is its `processingStartTimes` entry.
    pub(crate) fn done(&self, started_at: &mut Option<Instant>) {
        if let Some(start) = started_at.take() {
            self.work_duration
                .observe(seconds_since(start, Instant::now()));
        }
    }

    /// Sets the unfinished-work gauges from the start times of the items being processed.
    pub(crate) fn update_unfinished_work(&self, started: impl Iterator<Item = Instant>) {
        let now = Instant::now();
        let mut total = 0.0;
        let mut oldest: f64 = 0.0;
        for start in started {
            let age = seconds_since(start, now);
            total += age;
            oldest = oldest.max(age);
        }
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(oldest);
    }
}

/// The retry counter of a delaying queue (`None` for unnamed queues).
pub(crate) fn retry_metric(
    name: &str,
    provider: Option<&Arc<dyn MetricsProvider>>,
) -> Option<Box<dyn CounterMetric>> {
    if name.is_empty() {
        return None;
    }
    provider.map(|p| p.new_retries_metric(name))
}

#[cfg(test)]
pub(crate) mod testing {
    //! An in-memory provider for tests.

    use super::*;
    use parking_lot::Mutex;

    /// Values recorded per metric kind (for one queue).
    #[derive(Debug, Default)]
    pub(crate) struct Recorded {
        pub depth: i64,
        pub adds: u64,
        pub latency: Vec<f64>,
        pub work_duration: Vec<f64>,
        pub unfinished: f64,
        pub longest: f64,
        pub retries: u64,
        /// Number of `set` calls on the unfinished-work gauge.
        pub unfinished_updates: usize,
    }

    #[derive(Debug, Default, Clone)]
    pub(crate) struct TestProvider {
        pub values: Arc<Mutex<Recorded>>,
    }

    struct Handle(Arc<Mutex<Recorded>>, Kind);

    #[derive(Clone, Copy)]
    enum Kind {
        Depth,
        Adds,
        Latency,
        Work,
        Unfinished,
        Longest,
        Retries,
    }

    impl GaugeMetric for Handle {
        fn inc(&self) {
            self.0.lock().depth += 1;
        }
        fn dec(&self) {
            self.0.lock().depth -= 1;
        }
    }
    impl CounterMetric for Handle {
        fn inc(&self) {
            let mut v = self.0.lock();
            match self.1 {
                Kind::Retries => v.retries += 1,
                _ => v.adds += 1,
            }
        }
    }
    impl HistogramMetric for Handle {
        fn observe(&self, value: f64) {
            let mut v = self.0.lock();
            match self.1 {
                Kind::Latency => v.latency.push(value),
                _ => v.work_duration.push(value),
            }
        }
    }
    impl SettableGaugeMetric for Handle {
        fn set(&self, value: f64) {
            let mut v = self.0.lock();
            match self.1 {
                Kind::Unfinished => {
                    v.unfinished = value;
                    v.unfinished_updates += 1;
                }
                _ => v.longest = value,
            }
        }
    }

    impl TestProvider {
        fn handle(&self, kind: Kind) -> Box<Handle> {
            Box::new(Handle(self.values.clone(), kind))
        }
    }

    impl MetricsProvider for TestProvider {
        fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
            self.handle(Kind::Depth)
        }
        fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
            self.handle(Kind::Adds)
        }
        fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
            self.handle(Kind::Latency)
        }
        fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
            self.handle(Kind::Work)
        }
        fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
            self.handle(Kind::Unfinished)
        }
        fn new_longest_running_processor_seconds_metric(
            &self,
            _: &str,
        ) -> Box<dyn SettableGaugeMetric> {
            self.handle(Kind::Longest)
        }
        fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
            self.handle(Kind::Retries)
        }
    }
}
