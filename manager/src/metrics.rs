//! The process's metrics, served at `/metrics`.
//!
//! | series | labels | source |
//! | --- | --- | --- |
//! | `workqueue_*` (depth, adds, queue/work duration, unfinished work, longest running processor, retries) | `name` | every controller queue (`deployment`, `replicaset`), client-go names and help texts |
//! | `rest_client_requests_total` | `code`, `host`, `method` | every API request; `code` is the HTTP status or `<error>` |
//! | `rest_client_request_duration_seconds` | `host`, `verb` | time to the response headers, after the rate limiter |
//! | `rest_client_rate_limiter_duration_seconds` | `host`, `verb` | time spent waiting for the client-side rate limiter |
//! | `rest_client_request_retries_total` | `code`, `host`, `verb` | every attempt after a request's first (client-go's retries, [`crate::client::retry`]), by that attempt's result |
//! | `leader_election_master_status` | `name` | 1 while this process holds the lease, 0 after losing it |
//! | `kcm_controller_sync_duration_seconds` | `controller`, `result` | one sync of one key (`result` = `success`, `error`, `fenced`, `panic`) |
//! | `kcm_leader_election_fenced_writes_total` | `name` | writes of the controllers refused by the leader's write fence (not sent) |
//!
//! Names, labels, help texts and buckets are component-base's (`metrics/prometheus/restclient`,
//! `workqueue`, client-go `leaderelection`), including the `[ALPHA] ` prefix, so dashboards and
//! alerts written for kube-controller-manager keep working. `kcm_controller_sync_duration_seconds`
//! has no upstream counterpart (upstream's nearest is `workqueue_work_duration_seconds`, which
//! does not tell failures apart).
//!
//! [`Metrics::register`] adds them to the registry `/metrics` serves (the unit tests below
//! render them as a scrape would).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use kcm_controller::sync_metrics::{SyncObserver, SyncOutcome};
use kcm_leaderelection::WriteFence;
use kcm_util::prometheus::encode_family;
use kcm_workqueue::PrometheusMetricsProvider;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;
type HistogramFamily = Family<Labels, Histogram, fn() -> Histogram>;

const REQUESTS_HELP: &str =
    "[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.";
const RETRIES_HELP: &str =
    "[ALPHA] Number of request retries, partitioned by status code, verb, and host.";
const LATENCY_HELP: &str = "[ALPHA] Request latency in seconds. Broken down by verb, and host.";
const RATE_LIMITER_HELP: &str =
    "[ALPHA] Client side rate limiter latency in seconds. Broken down by verb, and host.";
const LEADER_HELP: &str = "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.";
const FENCED_HELP: &str =
    "Writes of the controllers refused by the leader's write fence (never sent), by lease name.";
const SYNC_HELP: &str =
    "Duration in seconds of one controller sync of one key, by controller and result.";

/// component-base's request latency buckets (5 ms … 60 s).
fn request_buckets() -> Histogram {
    Histogram::new([
        0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
    ])
}

/// 1 ms × 2^n up to ~16 s: syncs are usually milliseconds, slow ones seconds.
fn sync_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Every metric family of the process. Cheap to clone (handles to shared families).
#[derive(Clone)]
pub struct Metrics {
    workqueue: PrometheusMetricsProvider,
    requests: Family<Labels, Counter>,
    retries: Family<Labels, Counter>,
    request_latency: HistogramFamily,
    rate_limiter_latency: HistogramFamily,
    leader: Family<Labels, Gauge>,
    sync_duration: HistogramFamily,
    fences: Arc<parking_lot::Mutex<Vec<(String, WriteFence)>>>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Empty families.
    pub fn new() -> Self {
        Metrics {
            workqueue: PrometheusMetricsProvider::new(),
            requests: Family::default(),
            retries: Family::default(),
            request_latency: Family::new_with_constructor(request_buckets),
            rate_limiter_latency: Family::new_with_constructor(request_buckets),
            leader: Family::default(),
            sync_duration: Family::new_with_constructor(sync_buckets),
            fences: Arc::default(),
        }
    }

    /// Adds every family to `registry` (encoded on each scrape).
    pub fn register(&self, registry: &mut Registry) {
        self.workqueue.register(registry);
        registry.register_collector(Box::new(ProcessCollector(self.clone())));
    }

    /// Makes these metrics the process-wide sink of every work queue and every controller
    /// sync. Call before the controllers are built: queues created earlier record nothing.
    /// Returns `false` if another provider or observer was installed first.
    pub fn install_global(&self) -> bool {
        let queues = kcm_workqueue::set_provider(Arc::new(self.workqueue.clone()));
        let syncs =
            kcm_controller::sync_metrics::set_sync_observer(Arc::new(SyncDurations(self.clone())));
        queues && syncs
    }

    /// Counts one finished API request: `code` is the HTTP status, `None` when no response
    /// arrived (counted as `<error>`, as client-go does).
    pub fn observe_request(&self, method: &str, host: &str, code: Option<u16>, latency: Duration) {
        let code = code.map_or_else(|| "<error>".to_string(), |c| c.to_string());
        self.requests
            .get_or_create(&labels(&[
                ("code", &code),
                ("host", host),
                ("method", method),
            ]))
            .inc();
        self.request_latency
            .get_or_create(&labels(&[("host", host), ("verb", method)]))
            .observe(latency.as_secs_f64());
    }

    /// Counts one retry attempt of a request (`code`: that attempt's HTTP status or `<error>`).
    pub fn record_retry(&self, code: &str, host: &str, verb: &str) {
        self.retries
            .get_or_create(&labels(&[("code", code), ("host", host), ("verb", verb)]))
            .inc();
    }

    /// Records how long one request waited for the client-side rate limiter.
    pub fn observe_rate_limiter(&self, method: &str, host: &str, waited: Duration) {
        self.rate_limiter_latency
            .get_or_create(&labels(&[("host", host), ("verb", method)]))
            .observe(waited.as_secs_f64());
    }

    /// Sets `leader_election_master_status{name}` to 1 (leading) or 0 (not any more).
    pub fn set_leader(&self, lease_name: &str, leading: bool) {
        self.leader
            .get_or_create(&labels(&[("name", lease_name)]))
            .set(i64::from(leading));
    }

    /// Exports the refusals of `fence` as `kcm_leader_election_fenced_writes_total{name}`.
    pub fn watch_fence(&self, lease_name: &str, fence: WriteFence) {
        self.fences.lock().push((lease_name.to_string(), fence));
    }

    /// Records one controller sync.
    pub fn observe_sync(&self, controller: &str, elapsed: Duration, outcome: SyncOutcome) {
        self.sync_duration
            .get_or_create(&labels(&[
                ("controller", controller),
                ("result", outcome.as_str()),
            ]))
            .observe(elapsed.as_secs_f64());
    }
}

/// The [`SyncObserver`] feeding `kcm_controller_sync_duration_seconds`.
#[derive(Debug)]
struct SyncDurations(Metrics);

impl SyncObserver for SyncDurations {
    fn observe(&self, queue: &str, elapsed: Duration, outcome: SyncOutcome) {
        self.0.observe_sync(queue, elapsed, outcome);
    }
}

/// Encodes the non-workqueue families with their exact help texts (`Registry::register` would
/// append a period).
#[derive(Debug)]
struct ProcessCollector(Metrics);

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let m = &self.0;
        // The text encoder appends `_total` to counter samples.
        encode_family(
            &mut encoder,
            "rest_client_requests",
            REQUESTS_HELP,
            &m.requests,
        )?;
        encode_family(
            &mut encoder,
            "rest_client_request_retries",
            RETRIES_HELP,
            &m.retries,
        )?;
        encode_family(
            &mut encoder,
            "rest_client_request_duration_seconds",
            LATENCY_HELP,
            &m.request_latency,
        )?;
        encode_family(
            &mut encoder,
            "rest_client_rate_limiter_duration_seconds",
            RATE_LIMITER_HELP,
            &m.rate_limiter_latency,
        )?;
        encode_family(
            &mut encoder,
            "leader_election_master_status",
            LEADER_HELP,
            &m.leader,
        )?;
        encode_family(
            &mut encoder,
            "kcm_controller_sync_duration_seconds",
            SYNC_HELP,
            &m.sync_duration,
        )?;
        let fences = m.fences.lock().clone();
        if !fences.is_empty() {
            let mut family = encoder.encode_descriptor(
                "kcm_leader_election_fenced_writes",
                FENCED_HELP,
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (name, fence) in fences {
                let labels = [("name", name)];
                let metric = family.encode_family(&labels)?;
                ConstCounter::new(fence.refused_total()).encode(metric)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(metrics: &Metrics) -> String {
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        text
    }

    #[test]
    fn rest_client_series_have_client_go_names_labels_and_help() {
        let m = Metrics::new();
        m.observe_request("GET", "10.0.0.1:6443", Some(200), Duration::from_millis(30));
        m.observe_request("PUT", "10.0.0.1:6443", Some(409), Duration::from_millis(3));
        m.observe_request("GET", "10.0.0.1:6443", None, Duration::from_secs(2));
        m.observe_rate_limiter("GET", "10.0.0.1:6443", Duration::from_millis(150));
        m.record_retry("503", "10.0.0.1:6443", "PUT");
        let text = render(&m);
        for line in [
            "# HELP rest_client_requests [ALPHA] Number of HTTP requests, partitioned by status code, method, and host.\n",
            "rest_client_requests_total{code=\"200\",host=\"10.0.0.1:6443\",method=\"GET\"} 1\n",
            "rest_client_requests_total{code=\"409\",host=\"10.0.0.1:6443\",method=\"PUT\"} 1\n",
            "rest_client_requests_total{code=\"<error>\",host=\"10.0.0.1:6443\",method=\"GET\"} 1\n",
            "# HELP rest_client_request_duration_seconds [ALPHA] Request latency in seconds. Broken down by verb, and host.\n",
            "# TYPE rest_client_request_duration_seconds histogram\n",
            // 30 ms falls in the 0.1 s bucket (not the 0.025 s one); 2 s in the 2.0 s bucket.
            "rest_client_request_duration_seconds_bucket{le=\"0.025\",host=\"10.0.0.1:6443\",verb=\"GET\"} 0\n",
            "rest_client_request_duration_seconds_bucket{le=\"0.1\",host=\"10.0.0.1:6443\",verb=\"GET\"} 1\n",
            "rest_client_request_duration_seconds_bucket{le=\"2.0\",host=\"10.0.0.1:6443\",verb=\"GET\"} 2\n",
            "rest_client_request_duration_seconds_count{host=\"10.0.0.1:6443\",verb=\"GET\"} 2\n",
            "rest_client_rate_limiter_duration_seconds_bucket{le=\"0.25\",host=\"10.0.0.1:6443\",verb=\"GET\"} 1\n",
            "# HELP rest_client_request_retries [ALPHA] Number of request retries, partitioned by status code, verb, and host.\n",
            "rest_client_request_retries_total{code=\"503\",host=\"10.0.0.1:6443\",verb=\"PUT\"} 1\n",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
    }

    #[test]
    fn leader_gauge_is_labelled_with_the_lease_name() {
        let m = Metrics::new();
        m.set_leader("kcm", true);
        assert!(render(&m).contains(
            "# HELP leader_election_master_status [ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.\n"
        ));
        assert!(render(&m).contains("leader_election_master_status{name=\"kcm\"} 1\n"));
        m.set_leader("kcm", false);
        assert!(render(&m).contains("leader_election_master_status{name=\"kcm\"} 0\n"));
    }

    #[test]
    fn refused_writes_of_a_watched_fence_are_counted() {
        let m = Metrics::new();
        assert!(
            !render(&m).contains("kcm_leader_election_fenced_writes"),
            "no family without a fence"
        );
        let fence = WriteFence::new("kube-system/kcm");
        m.watch_fence("kcm", fence.clone());
        assert!(render(&m).contains("kcm_leader_election_fenced_writes_total{name=\"kcm\"} 0\n"));
        for _ in 0..3 {
            assert!(fence.check().is_err(), "closed: the lease is not held");
        }
        let text = render(&m);
        assert!(
            text.contains("# TYPE kcm_leader_election_fenced_writes counter\n"),
            "{text}"
        );
        assert!(
            text.contains("kcm_leader_election_fenced_writes_total{name=\"kcm\"} 3\n"),
            "{text}"
        );
    }

    #[test]
    fn sync_durations_are_split_by_controller_and_result() {
        let m = Metrics::new();
        m.observe_sync("deployment", Duration::from_millis(3), SyncOutcome::Success);
        m.observe_sync("deployment", Duration::from_millis(3), SyncOutcome::Error);
        m.observe_sync("replicaset", Duration::from_secs(1), SyncOutcome::Success);
        let text = render(&m);
        for line in [
            "kcm_controller_sync_duration_seconds_count{controller=\"deployment\",result=\"success\"} 1\n",
            "kcm_controller_sync_duration_seconds_count{controller=\"deployment\",result=\"error\"} 1\n",
            "kcm_controller_sync_duration_seconds_count{controller=\"replicaset\",result=\"success\"} 1\n",
            // 3 ms is above the 2 ms bucket and within the 4 ms one.
            "kcm_controller_sync_duration_seconds_bucket{le=\"0.002\",controller=\"deployment\",result=\"success\"} 0\n",
            "kcm_controller_sync_duration_seconds_bucket{le=\"0.004\",controller=\"deployment\",result=\"success\"} 1\n",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
    }

    #[test]
    fn workqueue_series_are_included() {
        let m = Metrics::new();
        let queue: kcm_workqueue::Queue<String> =
            kcm_workqueue::Queue::with_config(kcm_workqueue::QueueConfig {
                name: "deployment".into(),
                metrics_provider: Some(Arc::new(m.workqueue.clone())),
            });
        queue.add("default/web".into());
        let text = render(&m);
        assert!(
            text.contains("workqueue_depth{name=\"deployment\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("workqueue_adds_total{name=\"deployment\"} 1\n"),
            "{text}"
        );
    }
}
