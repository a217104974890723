//! Recording core/v1 Events the way client-go's `tools/record` does.
//!
//! An [`EventRecorder`] builds the event and hands it to a bounded queue
//! without ever blocking (a full queue drops the event, counts it and logs, as
//! client-go's broadcaster does). The [`EventBroadcaster`] task drains the
//! queue, runs each event through the [`EventCorrelator`] and writes it with an
//! [`EventSink`] (create, or PATCH for repeats), retrying transport errors up to
//! 12 times.
//!
//! ```no_run
//! # async fn demo(client: kube::Client, rs: k8s_openapi::api::apps::v1::ReplicaSet) {
//! use kcm_controller::event_recorder::{EventBroadcaster, EventType, KubeEventSink, object_reference};
//! let broadcaster = EventBroadcaster::start(KubeEventSink::new(client), Default::default());
//! let recorder = broadcaster.new_recorder("replicaset-controller", None);
//! recorder.record(&object_reference(&rs), EventType::Normal, "SuccessfulCreate", "Created pod: web-abcde");
//! broadcaster.shutdown().await;
//! # }
//! ```

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Api, Patch, PatchParams, PostParams};
use rand::Rng;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::api_write::log_write;
use crate::clock::{RealClock, SharedClock};
use crate::error::{ControlError, NAMESPACE_TERMINATING_CAUSE};
use crate::event_correlator::EventCorrelator;
use crate::names::generate_event_name;

/// Events queued between recorders and the writer task before new ones are dropped.
pub const MAX_QUEUED_EVENTS: usize = 1000;
/// Attempts to write one event.
pub const MAX_TRIES_PER_EVENT: u32 = 12;
/// Pause between write attempts (the first pause is random in `[0, this)`).
pub const SLEEP_BETWEEN_TRIES: Duration = Duration::from_secs(10);

/// How long [`EventBroadcaster::shutdown`] keeps writing the events queued before it.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(1);

/// Event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Informational.
    Normal,
    /// Something went wrong.
    Warning,
}

impl EventType {
    /// `"Normal"` or `"Warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The reference an event's `involvedObject` holds for `obj`
/// (kind, apiVersion, namespace, name, uid, resourceVersion).
pub fn object_reference<K>(obj: &K) -> ObjectReference
where
    K: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta>,
{
    let m = obj.metadata();
    ObjectReference {
        api_version: Some(K::API_VERSION.to_string()),
        kind: Some(K::KIND.to_string()),
        name: m.name.clone(),
        namespace: m.namespace.clone(),
        uid: m.uid.clone(),
        resource_version: m.resource_version.clone(),
        field_path: None,
    }
}

/// Writes events to the API (`CoreV1().Events("")` upstream).
pub trait EventSink: Send + Sync + 'static {
    /// POST the event to its namespace.
    fn create<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, ControlError>>;
    /// Strategic-merge PATCH of an existing event.
    fn patch<'a>(
        &'a self,
        event: &'a Event,
        patch: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Event, ControlError>>;
}

/// [`EventSink`] over a kube client.
#[derive(Clone)]
pub struct KubeEventSink {
    client: kube::Client,
}

impl fmt::Debug for KubeEventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeEventSink").finish_non_exhaustive()
    }
}

impl KubeEventSink {
    /// A sink writing with `client`.
    pub fn new(client: kube::Client) -> Self {
        Self { client }
    }

    fn api(&self, event: &Event) -> Api<Event> {
        let ns = event.metadata.namespace.as_deref().unwrap_or("default");
        Api::namespaced(self.client.clone(), ns)
    }
}

impl EventSink for KubeEventSink {
    fn create<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, ControlError>> {
        Box::pin(async move {
            Ok(self
                .api(event)
                .create(&PostParams::default(), event)
                .await?)
        })
    }

    fn patch<'a>(
        &'a self,
        event: &'a Event,
        patch: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Event, ControlError>> {
        Box::pin(async move {
            let name = event.metadata.name.as_deref().unwrap_or_default();
            Ok(self
                .api(event)
                .patch(name, &PatchParams::default(), &Patch::Strategic(patch))
                .await?)
        })
    }
}

/// Records events for one component; cheap to clone, never blocks.
#[derive(Debug, Clone)]
pub struct EventRecorder {
    tx: mpsc::Sender<Event>,
    source: EventSource,
    clock: SharedClock,
    dropped: Arc<AtomicU64>,
}

impl EventRecorder {
    /// A recorder whose events go to a plain channel (for tests: the receiver
    /// sees every recorded event, uncorrelated).
    pub fn channel(component: &str, capacity: usize) -> (Self, mpsc::Receiver<Event>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let rec = Self {
            tx,
            source: EventSource {
                component: Some(component.to_string()),
                host: None,
            },
            clock: Arc::new(RealClock),
            dropped: Arc::new(AtomicU64::new(0)),
        };
        (rec, rx)
    }

    /// Uses `clock` for event timestamps and names.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Events dropped so far because the queue was full or closed.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Builds the event (`makeEvent` upstream): name `<object>.<hex unix nanos>`
    /// (see [`generate_event_name`]),
    /// namespace of the object or `default`, count 1, first/last timestamp now.
    pub fn make_event(
        &self,
        object: &ObjectReference,
        type_: EventType,
        reason: &str,
        message: String,
    ) -> Event {
        let now = self.clock.now();
        let name = object.name.as_deref().unwrap_or_default();
        let namespace = object
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string());
        Event {
            metadata: ObjectMeta {
                name: Some(generate_event_name(name, now.as_nanosecond())),
                namespace: Some(namespace),
                ..Default::default()
            },
            involved_object: object.clone(),
            reason: Some(reason.to_string()),
            message: Some(message),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: Some(1),
            type_: Some(type_.as_str().to_string()),
            source: Some(self.source.clone()),
            reporting_component: self.source.component.clone(),
            reporting_instance: Some(self.source.host.clone().unwrap_or_default()),
            ..Default::default()
        }
    }

    /// Records an event about `object` (`Eventf` upstream). Never blocks; if the
    /// queue is full the event is dropped and counted.
    pub fn record(
        &self,
        object: &ObjectReference,
        type_: EventType,
        reason: &str,
        message: impl Into<String>,
    ) {
        let event = self.make_event(object, type_, reason, message.into());
        tracing::debug!(
            object = ?object.name, kind = ?object.kind, r#type = %type_, reason,
            message = ?event.message, "Event occurred"
        );
        if let Err(e) = self.tx.try_send(event) {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            let why = match e {
                mpsc::error::TrySendError::Full(_) => "queue full",
                mpsc::error::TrySendError::Closed(_) => "broadcaster stopped",
            };
            tracing::warn!(dropped_total = n, reason, "dropping event: {why}");
        }
    }
}

/// Owns the event queue and the task writing it to an [`EventSink`].
#[derive(Debug)]
pub struct EventBroadcaster {
    tx: mpsc::Sender<Event>,
    dropped: Arc<AtomicU64>,
    clock: SharedClock,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl EventBroadcaster {
    /// Starts the writer task on the current tokio runtime.
    pub fn start<S: EventSink>(sink: S, correlator: EventCorrelator) -> Self {
        Self::start_with_queue(sink, correlator, MAX_QUEUED_EVENTS, Arc::new(RealClock))
    }

    /// Like [`start`](Self::start) with an explicit queue size and event clock.
    pub fn start_with_queue<S: EventSink>(
        sink: S,
        correlator: EventCorrelator,
        queue: usize,
        clock: SharedClock,
    ) -> Self {
        let (tx, mut rx) = mpsc::channel::<Event>(queue.max(1));
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    // The stop first: with a full queue a receive is always ready, and a queue
                    // of 1,000 events at the client's QPS takes about a minute to write.
                    biased;
                    _ = stopped.changed() => None,
                    e = rx.recv() => e,
                };
                let Some(event) = event else { break };
                // A stop also ends a write in progress or its retries (up to 12 tries 10 s
                // apart): a controller that stops, for instance because its leader lease
                // passed on and its writes are fenced, must not wait on an event.
                tokio::select! {
                    biased;
                    _ = stopped.wait_for(|stop| *stop) => break,
                    _ = record_to_sink(&sink, &correlator, event, SLEEP_BETWEEN_TRIES) => {}
                }
            }
            // Write what was queued before the stop, for at most SHUTDOWN_DRAIN: events are best
            // effort, and a process that is stopping should not wait on them (client-go's
            // broadcaster leaves its queue behind when the process exits).
            let drained = tokio::time::timeout(SHUTDOWN_DRAIN, async {
                while let Ok(event) = rx.try_recv() {
                    record_to_sink(&sink, &correlator, event, SLEEP_BETWEEN_TRIES).await;
                }
            })
            .await;
            if drained.is_err() {
                let mut left = 0u64;
                while rx.try_recv().is_ok() {
                    left += 1;
                }
                tracing::warn!(
                    dropped = left,
                    "event broadcaster stopping: queued events not written within {SHUTDOWN_DRAIN:?} are dropped"
                );
            }
        });
        Self {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
            clock,
            stop,
            task,
        }
    }

    /// A recorder for `component` (e.g. `replicaset-controller`), optionally with a host.
    pub fn new_recorder(&self, component: &str, host: Option<&str>) -> EventRecorder {
        EventRecorder {
            tx: self.tx.clone(),
            source: EventSource {
                component: Some(component.to_string()),
                host: host.map(str::to_string),
            },
            clock: self.clock.clone(),
            dropped: self.dropped.clone(),
        }
    }

    /// Events dropped so far by all recorders of this broadcaster.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Stops the writer task after it has written what is already queued (for at most
    /// [`SHUTDOWN_DRAIN`]; the rest is dropped with one warning), and waits for it. Events
    /// recorded afterwards are dropped (and counted).
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        drop(self.tx);
        if let Err(e) = self.task.await {
            tracing::error!(error = %e, "event broadcaster task failed");
        }
    }
}

/// Correlates and writes one event, retrying as client-go's `recordToSink`.
pub(crate) async fn record_to_sink<S: EventSink + ?Sized>(
    sink: &S,
    correlator: &EventCorrelator,
    event: Event,
    sleep: Duration,
) {
    let result = correlator.correlate(event);
    if result.skip {
        tracing::debug!(event = ?result.event.metadata.name, "event dropped by spam filter");
        return;
    }
    let mut event = result.event;
    let update_existing = event.count.unwrap_or(1) > 1;
    let mut tries = 0;
    loop {
        if record_event(
            sink,
            &mut event,
            result.patch.as_ref(),
            update_existing,
            correlator,
        )
        .await
        {
            break;
        }
        tries += 1;
        if tries >= MAX_TRIES_PER_EVENT {
            tracing::error!(event = ?event.metadata.name, "Unable to write event (retry limit exceeded!)");
            break;
        }
        let pause = if tries == 1 {
            sleep.mul_f64(rand::rng().random::<f64>())
        } else {
            sleep
        };
        tokio::time::sleep(pause).await;
    }
}

fn log_event_write(verb: &str, event: &Event, result: &Result<Event, ControlError>) {
    let object = &event.involved_object;
    log_write(
        verb,
        "events",
        event.metadata.namespace.as_deref().unwrap_or_default(),
        event.metadata.name.as_deref().unwrap_or_default(),
        format_args!(
            "event {} for {} {}/{} (count {})",
            event.reason.as_deref().unwrap_or_default(),
            object.kind.as_deref().unwrap_or_default(),
            object.namespace.as_deref().unwrap_or_default(),
            object.name.as_deref().unwrap_or_default(),
            event.count.unwrap_or(1)
        ),
        result.as_ref().map(|_| ()),
    );
}

/// One write attempt; `true` when done (written, or rejected for good).
async fn record_event<S: EventSink + ?Sized>(
    sink: &S,
    event: &mut Event,
    patch: Option<&serde_json::Value>,
    update_existing: bool,
    correlator: &EventCorrelator,
) -> bool {
    let mut res = None;
    if update_existing && let Some(p) = patch {
        let patched = sink.patch(event, p).await;
        log_event_write("patch", event, &patched);
        res = Some(patched);
    }
    let must_create = match &res {
        None => true,
        Some(Err(e)) => e.is_not_found(),
        Some(Ok(_)) => false,
    };
    if must_create {
        event.metadata.resource_version = None;
        let created = sink.create(event).await;
        log_event_write("create", event, &created);
        res = Some(created);
    }
    match res {
        Some(Ok(written)) => {
            correlator.update_state(&written);
            true
        }
        Some(Err(e)) => match &e {
            ControlError::Api(_) => {
                if e.is_already_exists() || e.has_status_cause(NAMESPACE_TERMINATING_CAUSE) {
                    tracing::debug!(error = %e, "server rejected event (will not retry)");
                } else {
                    tracing::error!(error = %e, event = ?event.metadata.name, "Server rejected event (will not retry!)");
                }
                true
            }
            ControlError::Client(
                kube::Error::BuildRequest(_)
                | kube::Error::HttpError(_)
                | kube::Error::SerdeError(_),
            )
            | ControlError::Serialize(_)
            | ControlError::Invalid(_) => {
                tracing::error!(error = %e, "Unable to construct event (will not retry!)");
                true
            }
            _ => {
                tracing::warn!(error = %e, "Unable to write event (may retry after sleeping)");
                false
            }
        },
        None => true,
    }
}

#[cfg(test)]
#[path = "event_recorder_tests.rs"]
mod tests;
