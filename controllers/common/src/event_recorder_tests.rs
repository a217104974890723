//! Tests for the recorder, the broadcaster task and the sink retry policy.

use super::*;
use crate::clock::FakeClock;
use crate::event_correlator::CorrelatorOptions;
use parking_lot::Mutex;

#[derive(Debug, Clone, PartialEq)]
enum Call {
    Create {
        name: String,
        count: i32,
    },
    Patch {
        name: String,
        patch: serde_json::Value,
    },
}

/// A sink that records calls and fails the first `fail_first` calls with `fail`.
#[derive(Default)]
struct FakeSink {
    calls: Mutex<Vec<Call>>,
    fail_first: Mutex<usize>,
    fail: Option<fn() -> ControlError>,
    patch_not_found: bool,
}

impl FakeSink {
    fn maybe_fail(&self) -> Result<(), ControlError> {
        let mut left = self.fail_first.lock();
        if *left > 0
            && let Some(f) = self.fail
        {
            *left -= 1;
            return Err(f());
        }
        Ok(())
    }
}

impl EventSink for Arc<FakeSink> {
    fn create<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<Event, ControlError>> {
        Box::pin(async move {
            self.calls.lock().push(Call::Create {
                name: event.metadata.name.clone().unwrap_or_default(),
                count: event.count.unwrap_or(0),
            });
            self.maybe_fail()?;
            let mut e = event.clone();
            e.metadata.resource_version = Some("1".into());
            Ok(e)
        })
    }

    fn patch<'a>(
        &'a self,
        event: &'a Event,
        patch: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Event, ControlError>> {
        Box::pin(async move {
            self.calls.lock().push(Call::Patch {
                name: event.metadata.name.clone().unwrap_or_default(),
                patch: patch.clone(),
            });
            if self.patch_not_found {
                return Err(ControlError::not_found("events", "x"));
            }
            self.maybe_fail()?;
            Ok(event.clone())
        })
    }
}

fn rs_ref() -> ObjectReference {
    ObjectReference {
        api_version: Some("apps/v1".into()),
        kind: Some("ReplicaSet".into()),
        name: Some("web".into()),
        namespace: Some("prod".into()),
        uid: Some("u1".into()),
        resource_version: Some("5".into()),
        field_path: None,
    }
}

fn fake_clock() -> FakeClock {
    FakeClock::new("2024-05-15T00:00:00Z".parse().unwrap())
}

#[test]
fn make_event_fields() {
    let (rec, _rx) = EventRecorder::channel("replicaset-controller", 10);
    let rec = rec.with_clock(Arc::new(fake_clock()));
    let e = rec.make_event(
        &rs_ref(),
        EventType::Warning,
        "FailedCreate",
        "Error creating: boom".into(),
    );
    let nanos: i128 = "2024-05-15T00:00:00Z"
        .parse::<k8s_openapi::jiff::Timestamp>()
        .unwrap()
        .as_nanosecond();
    assert_eq!(e.metadata.name, Some(format!("web.{nanos:x}")));
    assert_eq!(e.metadata.namespace.as_deref(), Some("prod"));
    assert_eq!(e.involved_object, rs_ref());
    assert_eq!(e.type_.as_deref(), Some("Warning"));
    assert_eq!(e.reason.as_deref(), Some("FailedCreate"));
    assert_eq!(e.message.as_deref(), Some("Error creating: boom"));
    assert_eq!(e.count, Some(1));
    assert_eq!(e.first_timestamp, e.last_timestamp);
    assert_eq!(
        e.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("replicaset-controller")
    );
    assert_eq!(
        e.reporting_component.as_deref(),
        Some("replicaset-controller")
    );
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(json["reportingComponent"], "replicaset-controller");

    let mut cluster_scoped = rs_ref();
    cluster_scoped.namespace = None;
    let e = rec.make_event(&cluster_scoped, EventType::Normal, "R", "m".into());
    assert_eq!(e.metadata.namespace.as_deref(), Some("default"));
}

#[tokio::test]
async fn full_queue_drops_and_counts() {
    let (rec, mut rx) = EventRecorder::channel("c", 1);
    rec.record(&rs_ref(), EventType::Normal, "A", "1");
    rec.record(&rs_ref(), EventType::Normal, "B", "2");
    assert_eq!(rec.dropped(), 1);
    assert_eq!(rx.recv().await.unwrap().reason.as_deref(), Some("A"));
}

/// client-go spec vector 48: the same event three times → one create, two patches.
#[tokio::test]
async fn repeated_event_is_created_once_then_patched() {
    let sink = Arc::new(FakeSink::default());
    let b = EventBroadcaster::start(sink.clone(), EventCorrelator::default());
    let rec = b.new_recorder("replicaset-controller", None);
    for _ in 0..3 {
        rec.record(
            &rs_ref(),
            EventType::Normal,
            "SuccessfulCreate",
            "Created pod: p",
        );
    }
    b.shutdown().await;
    let calls = sink.calls.lock().clone();
    assert_eq!(calls.len(), 3, "{calls:?}");
    let Call::Create { name, count } = &calls[0] else {
        panic!("first call should be a create: {calls:?}")
    };
    assert_eq!(*count, 1);
    for (i, call) in calls[1..].iter().enumerate() {
        let Call::Patch { name: pname, patch } = call else {
            panic!("expected patch: {call:?}")
        };
        assert_eq!(pname, name, "patches target the first event");
        assert_eq!(patch["count"], i as i64 + 2);
        assert_eq!(patch["message"], "Created pod: p");
    }
}

#[tokio::test(start_paused = true)]
async fn transport_errors_are_retried() {
    let sink = Arc::new(FakeSink {
        fail_first: Mutex::new(3),
        fail: Some(|| ControlError::Client(kube::Error::LinesCodecMaxLineLengthExceeded)),
        ..FakeSink::default()
    });
    let corr = EventCorrelator::default();
    let rec = EventRecorder::channel("c", 1).0;
    let e = rec.make_event(&rs_ref(), EventType::Normal, "R", "m".into());
    record_to_sink(&sink, &corr, e, SLEEP_BETWEEN_TRIES).await;
    assert_eq!(sink.calls.lock().len(), 4, "3 failures then success");
}

#[tokio::test(start_paused = true)]
async fn retries_stop_after_twelve_tries() {
    let sink = Arc::new(FakeSink {
        fail_first: Mutex::new(100),
        fail: Some(|| ControlError::Client(kube::Error::LinesCodecMaxLineLengthExceeded)),
        ..FakeSink::default()
    });
    let corr = EventCorrelator::default();
    let rec = EventRecorder::channel("c", 1).0;
    let e = rec.make_event(&rs_ref(), EventType::Normal, "R", "m".into());
    record_to_sink(&sink, &corr, e, SLEEP_BETWEEN_TRIES).await;
    assert_eq!(sink.calls.lock().len(), MAX_TRIES_PER_EVENT as usize);
}

#[tokio::test]
async fn api_rejections_are_not_retried() {
    let sink = Arc::new(FakeSink {
        fail_first: Mutex::new(5),
        fail: Some(|| ControlError::api(403, "Forbidden", "nope")),
        ..FakeSink::default()
    });
    let corr = EventCorrelator::default();
    let rec = EventRecorder::channel("c", 1).0;
    let e = rec.make_event(&rs_ref(), EventType::Normal, "R", "m".into());
    record_to_sink(&sink, &corr, e, SLEEP_BETWEEN_TRIES).await;
    assert_eq!(sink.calls.lock().len(), 1);
}

#[tokio::test]
async fn patch_of_missing_event_falls_back_to_create() {
    let sink = Arc::new(FakeSink {
        patch_not_found: true,
        ..FakeSink::default()
    });
    let clock = Arc::new(fake_clock());
    let corr = EventCorrelator::new(CorrelatorOptions::default(), clock.clone());
    let rec = EventRecorder::channel("c", 1).0.with_clock(clock);
    for _ in 0..2 {
        let e = rec.make_event(&rs_ref(), EventType::Normal, "R", "m".into());
        record_to_sink(&sink, &corr, e, SLEEP_BETWEEN_TRIES).await;
    }
    let calls = sink.calls.lock().clone();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert!(matches!(calls[1], Call::Patch { .. }));
    assert!(matches!(calls[2], Call::Create { count: 2, .. }));
}

#[tokio::test]
async fn events_recorded_after_shutdown_are_dropped() {
    let sink = Arc::new(FakeSink::default());
    let b = EventBroadcaster::start(sink.clone(), EventCorrelator::default());
    let rec = b.new_recorder("c", None);
    b.shutdown().await;
    rec.record(&rs_ref(), EventType::Normal, "R", "m");
    assert_eq!(rec.dropped(), 1);
    assert!(sink.calls.lock().is_empty());
}

/// A sink whose writes never finish (an API server that does not answer).
struct HangingSink(Arc<std::sync::atomic::AtomicUsize>);

impl EventSink for HangingSink {
    fn create<'a>(&'a self, _: &'a Event) -> BoxFuture<'a, Result<Event, ControlError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(futures::future::pending())
    }
    fn patch<'a>(
        &'a self,
        _: &'a Event,
        _: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Event, ControlError>> {
        Box::pin(futures::future::pending())
    }
}

#[tokio::test]
async fn shutdown_gives_up_on_a_backlog_after_the_drain_bound() {
    let writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let b = EventBroadcaster::start(HangingSink(writes.clone()), EventCorrelator::default());
    let rec = b.new_recorder("replicaset-controller", None);
    for i in 0..50 {
        rec.record(&rs_ref(), EventType::Normal, "R", format!("m{i}"));
    }
    let started = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(10), b.shutdown())
        .await
        .expect("shutdown returns although the writer is stuck");
    let took = started.elapsed();
    assert!(
        took >= SHUTDOWN_DRAIN && took < SHUTDOWN_DRAIN + Duration::from_secs(2),
        "shutdown took {took:?}"
    );
    assert!(
        writes.load(Ordering::SeqCst) <= 2,
        "the writer was stuck on one write"
    );
}

/// A stop reaches a writer that is between the retries of a failing write (client-go sleeps
/// 10 s between tries): shutdown does not wait for them.
#[tokio::test]
async fn shutdown_ends_the_retries_of_a_failing_write() {
    let sink = Arc::new(FakeSink {
        fail_first: Mutex::new(100),
        fail: Some(|| ControlError::Client(kube::Error::LinesCodecMaxLineLengthExceeded)),
        ..FakeSink::default()
    });
    let b = EventBroadcaster::start(sink.clone(), EventCorrelator::default());
    let rec = b.new_recorder("replicaset-controller", None);
    rec.record(&rs_ref(), EventType::Normal, "R", "m");
    // Let the writer try, fail and start sleeping before its next try.
    while sink.calls.lock().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let started = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(5), b.shutdown())
        .await
        .expect("shutdown does not wait for the retries");
    assert!(
        started.elapsed() < SHUTDOWN_DRAIN,
        "{:?}",
        started.elapsed()
    );
}
