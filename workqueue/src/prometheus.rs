//! Prometheus export of the queue metrics (feature `prometheus`), with the
//! series kube-controller-manager exposes (component-base
//! `metrics/prometheus/workqueue`): `workqueue_depth`, `workqueue_adds_total`,
//! `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
//! `workqueue_unfinished_work_seconds`,
//! `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`,
//! each with one label, `name`, and the "[ALPHA] "-prefixed help texts.
//!
//! The metrics are encoded by a custom collector so the help texts stay exact
//! (`Registry::register` would append a period). Output is OpenMetrics text as
//! produced by `prometheus-client`: counter families are declared without the
//! `_total` suffix in `# HELP`/`# TYPE` lines, while the samples carry it.

use std::fmt;

use kcm_util::prometheus::encode_family;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

use crate::metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
};

type Labels = Vec<(String, String)>;
type HistogramFamily = Family<Labels, Histogram, fn() -> Histogram>;
type FloatGauge = Gauge<f64, AtomicU64>;

const DEPTH_HELP: &str = "[ALPHA] Current depth of workqueue";
const ADDS_HELP: &str = "[ALPHA] Total number of adds handled by workqueue";
const LATENCY_HELP: &str =
    "[ALPHA] How long in seconds an item stays in workqueue before being requested.";
const WORK_DURATION_HELP: &str =
    "[ALPHA] How long in seconds processing an item from workqueue takes.";
const UNFINISHED_HELP: &str = "[ALPHA] How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.";
const LONGEST_HELP: &str =
    "[ALPHA] How many seconds has the longest running processor for workqueue been running.";
const RETRIES_HELP: &str = "[ALPHA] Total number of retries handled by workqueue";

/// Both histograms: 1e-8 s, ×10, 10 buckets (upstream `ExponentialBuckets(10e-9, 10, 10)`).
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 10))
}

fn labels(name: &str) -> Labels {
    vec![("name".to_string(), name.to_string())]
}

/// A [`MetricsProvider`] backed by `prometheus-client`.
///
/// Install it (usually once, process-wide, with [`set_provider`](crate::set_provider)),
/// register it into the registry your `/metrics` endpoint serves, and name
/// your queues.
///
/// ```
/// use std::sync::Arc;
/// use kcm_workqueue::{PrometheusMetricsProvider, Queue, QueueConfig};
/// use prometheus_client::registry::Registry;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let provider = PrometheusMetricsProvider::new();
/// let mut registry = Registry::default();
/// provider.register(&mut registry);
///
/// let queue: Queue<String> = Queue::with_config(QueueConfig {
///     name: "deployment".into(),
///     metrics_provider: Some(Arc::new(provider.clone())),
/// });
/// queue.add("default/web".into());
///
/// let mut text = String::new();
/// prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
/// assert!(text.contains("# HELP workqueue_depth [ALPHA] Current depth of workqueue\n"));
/// assert!(text.contains("workqueue_depth{name=\"deployment\"} 1\n"));
/// assert!(text.contains("workqueue_adds_total{name=\"deployment\"} 1\n"));
/// # }
/// ```
#[derive(Clone)]
pub struct PrometheusMetricsProvider {
    depth: Family<Labels, Gauge>,
    adds: Family<Labels, Counter>,
    latency: HistogramFamily,
    work_duration: HistogramFamily,
    unfinished_work_seconds: Family<Labels, FloatGauge>,
    longest_running_processor: Family<Labels, FloatGauge>,
    retries: Family<Labels, Counter>,
}

impl fmt::Debug for PrometheusMetricsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrometheusMetricsProvider")
            .finish_non_exhaustive()
    }
}

impl Default for PrometheusMetricsProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl PrometheusMetricsProvider {
    /// A provider with empty metric families.
    pub fn new() -> Self {
        Self {
            depth: Family::default(),
            adds: Family::default(),
            latency: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            unfinished_work_seconds: Family::default(),
            longest_running_processor: Family::default(),
            retries: Family::default(),
        }
    }

    /// Registers the `workqueue_*` families into `registry` (they are encoded
    /// on every scrape, with the values of all queues using this provider).
    pub fn register(&self, registry: &mut Registry) {
        registry.register_collector(Box::new(WorkqueueCollector(self.clone())));
    }

    /// Renders just these metrics as OpenMetrics text.
    pub fn render(&self) -> String {
        let mut registry = Registry::default();
        self.register(&mut registry);
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }
}

#[derive(Debug)]
struct WorkqueueCollector(PrometheusMetricsProvider);

impl Collector for WorkqueueCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let p = &self.0;
        encode_family(&mut encoder, "workqueue_depth", DEPTH_HELP, &p.depth)?;
        // The text encoder appends `_total` to counter samples.
        encode_family(&mut encoder, "workqueue_adds", ADDS_HELP, &p.adds)?;
        encode_family(
            &mut encoder,
            "workqueue_queue_duration_seconds",
            LATENCY_HELP,
            &p.latency,
        )?;
        encode_family(
            &mut encoder,
            "workqueue_work_duration_seconds",
            WORK_DURATION_HELP,
            &p.work_duration,
        )?;
        encode_family(
            &mut encoder,
            "workqueue_unfinished_work_seconds",
            UNFINISHED_HELP,
            &p.unfinished_work_seconds,
        )?;
        encode_family(
            &mut encoder,
            "workqueue_longest_running_processor_seconds",
            LONGEST_HELP,
            &p.longest_running_processor,
        )?;
        encode_family(&mut encoder, "workqueue_retries", RETRIES_HELP, &p.retries)
    }
}

struct PromGauge(Gauge);
struct PromFloatGauge(FloatGauge);
struct PromCounter(Counter);
struct PromHistogram(Histogram);

impl GaugeMetric for PromGauge {
    fn inc(&self) {
        self.0.inc();
    }
    fn dec(&self) {
        self.0.dec();
    }
}

impl SettableGaugeMetric for PromFloatGauge {
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}

impl CounterMetric for PromCounter {
    fn inc(&self) {
        self.0.inc();
    }
}

impl HistogramMetric for PromHistogram {
    fn observe(&self, value: f64) {
        self.0.observe(value);
    }
}

impl MetricsProvider for PrometheusMetricsProvider {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        Box::new(PromGauge(self.depth.get_or_create(&labels(name)).clone()))
    }

    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(PromCounter(self.adds.get_or_create(&labels(name)).clone()))
    }

    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(PromHistogram(
            self.latency.get_or_create(&labels(name)).clone(),
        ))
    }

    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(PromHistogram(
            self.work_duration.get_or_create(&labels(name)).clone(),
        ))
    }

    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(PromFloatGauge(
            self.unfinished_work_seconds
                .get_or_create(&labels(name))
                .clone(),
        ))
    }

    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(PromFloatGauge(
            self.longest_running_processor
                .get_or_create(&labels(name))
                .clone(),
        ))
    }

    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(PromCounter(
            self.retries.get_or_create(&labels(name)).clone(),
        ))
    }
}

#[cfg(test)]
#[path = "prometheus_tests.rs"]
mod tests;
