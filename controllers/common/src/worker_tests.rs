//! Worker-loop tests on a paused tokio clock (backoff timers fire instantly).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, mpsc, oneshot};

use super::*;

fn queue() -> RateLimitingQueue<String> {
    RateLimitingQueue::builder().build()
}

/// Gives a sync closure bound to a variable the signature the worker expects.
fn sync_fn<F>(f: F) -> F
where
    F: Fn(&String) -> BoxFuture<'_, Result<(), String>>,
{
    f
}

#[tokio::test(start_paused = true)]
async fn success_forgets_and_marks_done() {
    let q = queue();
    q.add_rate_limited("k".to_string()); // one recorded failure
    tokio::time::sleep(Duration::from_secs(1)).await;
    let key = q.get().await.unwrap();
    assert_eq!(q.num_requeues(&key), 1);
    let policy = RetryPolicy::<String, String>::unlimited();
    process_item(&q, &policy, &sync_fn(|_k| Box::pin(async { Ok(()) })), key).await;
    assert_eq!(q.num_requeues(&"k".to_string()), 0);
    // done() was called: the key can be queued and taken again.
    q.add("k".to_string());
    assert_eq!(q.try_get().as_deref(), Some("k"));
}

/// ReplicaSet policy: keeps retrying, with backoff, as long as it fails.
#[tokio::test(start_paused = true)]
async fn unlimited_policy_keeps_retrying() {
    let q = queue();
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let pool = WorkerPool::new(q.clone(), 2, RetryPolicy::unlimited());
    let run = tokio::spawn(pool.run(
        move |_k: &String| {
            let c = c.clone();
            Box::pin(async move {
                c.fetch_add(1, Ordering::SeqCst);
                Err::<(), String>("boom".into())
            })
        },
        async move {
            let _ = stop_rx.await;
        },
    ));
    q.add("ns/rs".to_string());
    // Backoff 5 ms · 2^n reaches the 1000 s cap after ~18 failures.
    tokio::time::sleep(Duration::from_secs(3 * 3600)).await;
    let n = calls.load(Ordering::SeqCst);
    assert!(
        n > DEPLOYMENT_MAX_RETRIES + 5,
        "expected retries past any limit, got {n}"
    );
    assert!(q.num_requeues(&"ns/rs".to_string()) >= n - 1);
    stop_tx.send(()).unwrap();
    run.await.unwrap();
}

/// Deployment policy: 1 attempt + 15 requeues, then the key is dropped.
#[tokio::test(start_paused = true)]
async fn max_retries_policy_drops_after_fifteen_requeues() {
    let q = queue();
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let pool = WorkerPool::new(
        q.clone(),
        1,
        RetryPolicy::max_retries(DEPLOYMENT_MAX_RETRIES),
    );
    let run = tokio::spawn(pool.run(
        move |_k: &String| {
            let c = c.clone();
            Box::pin(async move {
                c.fetch_add(1, Ordering::SeqCst);
                Err::<(), String>("boom".into())
            })
        },
        async move {
            let _ = stop_rx.await;
        },
    ));
    q.add("ns/d".to_string());
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(calls.load(Ordering::SeqCst), DEPLOYMENT_MAX_RETRIES + 1);
    assert_eq!(
        q.num_requeues(&"ns/d".to_string()),
        0,
        "forgotten when dropped"
    );
    assert!(q.is_empty());
    stop_tx.send(()).unwrap();
    run.await.unwrap();
}

/// The drop handler sees the key and the last error once, after the key was forgotten.
#[tokio::test(start_paused = true)]
async fn on_drop_gets_the_key_and_last_error_once() {
    let q = queue();
    let dropped = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let d = dropped.clone();
    let dq = q.clone();
    let policy = RetryPolicy::max_retries(2).on_drop(move |key: &String, err: &String| {
        d.lock()
            .push((key.clone(), err.clone(), dq.num_requeues(key)));
    });
    let calls = AtomicUsize::new(0);
    let sync = sync_fn(|_k| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { Err(format!("boom {n}")) })
    });
    q.add("ns/d".to_string());
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let key = q.try_get().expect("requeued");
        process_item(&q, &policy, &sync, key).await;
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(q.is_empty());
    assert_eq!(
        *dropped.lock(),
        vec![("ns/d".to_string(), "boom 2".to_string(), 0)]
    );
}

#[tokio::test(start_paused = true)]
async fn forget_if_errors_are_not_requeued() {
    let q = queue();
    let policy =
        RetryPolicy::max_retries(15).forget_if(|e: &String| e.contains("NamespaceTerminating"));
    let calls = AtomicUsize::new(0);
    let sync = sync_fn(|_k| {
        calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err("NamespaceTerminating".into()) })
    });
    q.add("k".to_string());
    let key = q.get().await.unwrap();
    process_item(&q, &policy, &sync, key).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(q.is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn panicking_sync_is_requeued_and_marked_done() {
    let q = queue();
    let policy = RetryPolicy::<String, String>::unlimited();
    q.add("k".to_string());
    let key = q.get().await.unwrap();
    process_item(
        &q,
        &policy,
        &sync_fn(|_k| Box::pin(async { panic!("bug") })),
        key,
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        q.try_get().as_deref(),
        Some("k"),
        "re-delivered after backoff"
    );
}

/// Shutdown stops taking keys but lets the in-flight sync finish.
#[tokio::test]
async fn graceful_shutdown_finishes_in_flight_only() {
    let q = queue();
    let release = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::unbounded_channel::<String>();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let finished = Arc::new(AtomicUsize::new(0));
    let (r, f) = (release.clone(), finished.clone());
    let pool = WorkerPool::new(q.clone(), 1, RetryPolicy::<String, String>::unlimited());
    q.add("a".to_string());
    q.add("b".to_string());
    let run = tokio::spawn(pool.run(
        move |k: &String| {
            let (r, f, tx) = (r.clone(), f.clone(), started_tx.clone());
            Box::pin(async move {
                let _ = tx.send(k.clone());
                r.notified().await;
                f.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
        },
        async move {
            let _ = stop_rx.await;
        },
    ));
    assert_eq!(started.recv().await.as_deref(), Some("a"));
    stop_tx.send(()).unwrap();
    tokio::task::yield_now().await;
    assert!(!run.is_finished(), "waits for the in-flight sync");
    release.notify_one();
    run.await.unwrap();
    assert_eq!(finished.load(Ordering::SeqCst), 1, "b was never taken");
    assert!(started.try_recv().is_err());
}

/// Records every observed sync; installed once for this test binary.
#[derive(Debug, Default)]
struct Recorder(parking_lot::Mutex<Vec<(String, crate::sync_metrics::SyncOutcome)>>);

impl crate::sync_metrics::SyncObserver for Recorder {
    fn observe(&self, queue: &str, _elapsed: Duration, outcome: crate::sync_metrics::SyncOutcome) {
        self.0.lock().push((queue.to_string(), outcome));
    }
}

#[tokio::test]
async fn every_sync_is_reported_to_the_observer_under_the_queue_name() {
    use crate::sync_metrics::{SyncOutcome, set_sync_observer};
    let recorder = Arc::new(Recorder::default());
    assert!(
        set_sync_observer(recorder.clone()),
        "only this test installs one"
    );
    let q: RateLimitingQueue<String> = RateLimitingQueue::builder().name("observed").build();
    let policy = RetryPolicy::<String, String>::unlimited();
    let sync = sync_fn(|k| {
        Box::pin(async move {
            match k.as_str() {
                "ok" => Ok(()),
                "fails" => Err("boom".to_string()),
                _ => panic!("sync panicked on purpose"),
            }
        })
    });
    for key in ["ok", "fails", "panics"] {
        q.add(key.to_string());
        let key = q.get().await.expect("queued");
        process_item(&q, &policy, &sync, key).await;
    }
    let seen: Vec<_> = recorder
        .0
        .lock()
        .iter()
        .filter(|(queue, _)| queue == "observed")
        .map(|(_, outcome)| *outcome)
        .collect();
    assert_eq!(
        seen,
        [SyncOutcome::Success, SyncOutcome::Error, SyncOutcome::Panic]
    );
}

/// A sync stopped by the write fence is requeued after a second, without a recorded failure
/// (its backoff and the Deployment policy's retry count stay as they were).
#[tokio::test(start_paused = true)]
async fn fenced_sync_is_requeued_without_counting_a_failure() {
    let q = queue();
    q.add_rate_limited("k".to_string()); // one earlier failure
    tokio::time::sleep(Duration::from_secs(1)).await;
    let key = q.get().await.unwrap();
    let policy = RetryPolicy::<String, String>::max_retries(DEPLOYMENT_MAX_RETRIES)
        .fenced_if(|e| e.starts_with("write fenced"));
    let fenced = sync_fn(|_k| Box::pin(async { Err("write fenced: lease not held".into()) }));
    process_item(&q, &policy, &fenced, key).await;
    assert_eq!(q.num_requeues(&"k".to_string()), 1, "not counted");
    assert_eq!(q.len(), 0, "not requeued at once");
    tokio::time::sleep(FENCED_REQUEUE_DELAY - Duration::from_millis(1)).await;
    assert_eq!(q.len(), 0);
    // The delaying queue's timer fires within a few milliseconds of the delay.
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(q.try_get().as_deref(), Some("k"), "back after the delay");
    // Any other error is a failure as before.
    let failing = sync_fn(|_k| Box::pin(async { Err("conflict".into()) }));
    process_item(&q, &policy, &failing, "k".to_string()).await;
    assert_eq!(q.num_requeues(&"k".to_string()), 2);
}

/// A sync asking for a rate-limited requeue is requeued through the rate limiter (its backoff
/// grows, as for a failure); at the retry limit the key is forgotten.
#[tokio::test(start_paused = true)]
async fn requeue_request_goes_through_the_rate_limiter() {
    let q = queue();
    let policy = RetryPolicy::<String, String>::max_retries(2).requeue_if(|e| e == "again");
    let again = sync_fn(|_k| Box::pin(async { Err("again".into()) }));
    for want in [1, 2] {
        q.add("k".to_string());
        let key = q.get().await.unwrap();
        process_item(&q, &policy, &again, key).await;
        assert_eq!(q.num_requeues(&"k".to_string()), want);
        // back after the rate limiter's delay (5 ms, then 10 ms)
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(q.try_get().as_deref(), Some("k"));
        q.done(&"k".to_string());
    }
    // At the retry limit the key is forgotten, as after failures.
    q.add("k".to_string());
    let key = q.get().await.unwrap();
    process_item(&q, &policy, &again, key).await;
    assert_eq!(q.num_requeues(&"k".to_string()), 0);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(q.len(), 0);
}

/// A gated pool syncs only the keys the gate allows; the others are dropped (done and
/// forgotten), and synced once the gate opens and they are added again.
#[tokio::test(start_paused = true)]
async fn a_gate_drops_keys_outside_it_until_they_are_added_again() {
    use std::sync::atomic::AtomicBool;

    let q = queue();
    let open_b = Arc::new(AtomicBool::new(false));
    let synced = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let gate = open_b.clone();
    let pool = WorkerPool::new(q.clone(), 2, RetryPolicy::<String, String>::unlimited())
        .gate(move |k: &String| k.starts_with("a/") || gate.load(Ordering::SeqCst));
    let seen = synced.clone();
    let run = tokio::spawn(pool.run(
        move |k: &String| {
            let seen = seen.clone();
            let k = k.clone();
            Box::pin(async move {
                seen.lock().push(k);
                Ok::<(), String>(())
            })
        },
        async move {
            let _ = stop_rx.await;
        },
    ));
    q.add_rate_limited("b/x".to_string());
    q.add("a/x".to_string());
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(*synced.lock(), ["a/x"]);
    assert_eq!(q.len(), 0, "the gated key was taken and dropped");
    assert_eq!(q.num_requeues(&"b/x".to_string()), 0, "and forgotten");
    open_b.store(true, Ordering::SeqCst);
    q.add("b/x".to_string());
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(*synced.lock(), ["a/x", "b/x"]);
    stop_tx.send(()).unwrap();
    run.await.unwrap();
}
