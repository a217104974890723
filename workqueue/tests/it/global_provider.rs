//! The process-wide metrics provider (upstream `SetProvider`): only the first
//! call counts, named queues created afterwards use it, unnamed ones never do.
//! Its own test binary, because the provider is global.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kcm_workqueue::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, Queue, QueueConfig,
    RateLimitingQueue, SettableGaugeMetric, set_provider,
};

#[derive(Default)]
struct Counts {
    adds: AtomicU64,
    retries: AtomicU64,
}

struct Provider(Arc<Counts>);
struct Adds(Arc<Counts>);
struct Retries(Arc<Counts>);
struct Nothing;

impl CounterMetric for Adds {
    fn inc(&self) {
        self.0.adds.fetch_add(1, Ordering::Relaxed);
    }
}
impl CounterMetric for Retries {
    fn inc(&self) {
        self.0.retries.fetch_add(1, Ordering::Relaxed);
    }
}
impl GaugeMetric for Nothing {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl SettableGaugeMetric for Nothing {
    fn set(&self, _: f64) {}
}
impl HistogramMetric for Nothing {
    fn observe(&self, _: f64) {}
}

impl MetricsProvider for Provider {
    fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        Box::new(Nothing)
    }
    fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Adds(self.0.clone()))
    }
    fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Nothing)
    }
    fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Nothing)
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Nothing)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(Nothing)
    }
    fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Retries(self.0.clone()))
    }
}

#[tokio::test]
async fn global_provider_applies_to_named_queues_only() {
    let before: Queue<u32> = Queue::with_config(QueueConfig::named("before"));
    before.add(1);

    let counts = Arc::new(Counts::default());
    assert!(set_provider(Arc::new(Provider(counts.clone()))));
    let other = Arc::new(Counts::default());
    assert!(
        !set_provider(Arc::new(Provider(other.clone()))),
        "only the first call counts"
    );

    let named: Queue<u32> = Queue::with_config(QueueConfig::named("named"));
    named.add(1);
    named.add(2);
    let unnamed: Queue<u32> = Queue::new();
    unnamed.add(1);
    assert_eq!(counts.adds.load(Ordering::Relaxed), 2);

    let rl: RateLimitingQueue<u32> = RateLimitingQueue::builder().name("rl").build();
    rl.add_rate_limited(7);
    rl.add_rate_limited(7);
    assert_eq!(counts.retries.load(Ordering::Relaxed), 2);
    rl.shutdown();

    assert_eq!(other.adds.load(Ordering::Relaxed), 0);
}
