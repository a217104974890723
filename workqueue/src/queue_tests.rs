//! Ports of upstream `util/workqueue/queue_test.go` plus metric checks.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::metrics::testing::TestProvider;
use crate::queue::*;
use std::collections::{HashMap, HashSet};

/// Lets every other task on a current-thread runtime run until it blocks.
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

/// Shared record of which items are being processed, failing on overlap.
#[derive(Clone, Default)]
struct InFlight(Arc<Mutex<HashSet<i32>>>);

impl InFlight {
    fn start(&self, item: i32) {
        assert!(
            self.0.lock().insert(item),
            "item {item} handed to two workers at once"
        );
    }
    fn finish(&self, item: i32) {
        self.0.lock().remove(&item);
    }
}

#[derive(Clone, Copy, Debug)]
enum Shutdown {
    Plain,
    Drain,
}

async fn shut(queue: &Queue<i32>, how: Shutdown) {
    match how {
        Shutdown::Plain => queue.shutdown(),
        Shutdown::Drain => queue.shutdown_with_drain().await,
    }
}

/// TestBasic: 50 producers add their index 50 times (1 ms apart), 10 consumers
/// work 3 ms per item; after shutdown an added item is never handed out.
#[tokio::test(start_paused = true)]
async fn test_basic() {
    for how in [Shutdown::Plain, Shutdown::Drain] {
        let queue: Queue<i32> = Queue::new();
        let in_flight = InFlight::default();
        let producers: Vec<_> = (0..50)
            .map(|i| {
                let queue = queue.clone();
                tokio::spawn(async move {
                    for _ in 0..50 {
                        queue.add(i);
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                })
            })
            .collect();
        let consumers: Vec<_> = (0..10)
            .map(|_| {
                let queue = queue.clone();
                let in_flight = in_flight.clone();
                tokio::spawn(async move {
                    let mut seen = 0;
                    while let Some(item) = queue.get().await {
                        assert_ne!(item, -1, "got an item added after shutdown");
                        in_flight.start(item);
                        tokio::time::sleep(Duration::from_millis(3)).await;
                        in_flight.finish(item);
                        queue.done(&item);
                        seen += 1;
                    }
                    seen
                })
            })
            .collect();
        for p in producers {
            p.await.unwrap();
        }
        shut(&queue, how).await;
        queue.add(-1);
        let mut total = 0;
        for c in consumers {
            total += c.await.unwrap();
        }
        assert!(total >= 50, "{how:?}: every producer's item processed");
        assert_eq!(queue.len(), 0, "{how:?}");
    }
}

async fn add_while_processing(queue: Queue<i32>, how: Shutdown) {
    let in_flight = InFlight::default();
    let producers: Vec<_> = (0..50)
        .map(|i| {
            let queue = queue.clone();
            tokio::spawn(async move { queue.add(i) })
        })
        .collect();
    let consumers: Vec<_> = (0..10)
        .map(|_| {
            let queue = queue.clone();
            let in_flight = in_flight.clone();
            tokio::spawn(async move {
                let mut counters: HashMap<i32, usize> = HashMap::new();
                while let Some(item) = queue.get().await {
                    in_flight.start(item);
                    let count = counters.entry(item).or_default();
                    *count += 1;
                    if *count < 2 {
                        queue.add(item);
                    }
                    tokio::task::yield_now().await;
                    in_flight.finish(item);
                    queue.done(&item);
                }
            })
        })
        .collect();
    for p in producers {
        p.await.unwrap();
    }
    shut(&queue, how).await;
    for c in consumers {
        c.await.unwrap();
    }
    assert_eq!(queue.len(), 0, "{how:?}");
}

/// TestAddWhileProcessing: workers re-add items while processing them; both
/// shutdown flavours terminate all workers with an empty queue.
#[tokio::test(start_paused = true)]
async fn test_add_while_processing() {
    for how in [Shutdown::Plain, Shutdown::Drain] {
        add_while_processing(Queue::new(), how).await;
    }
}

/// TestAddWhileProcessing on a real multi-threaded runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_add_while_processing_multi_thread() {
    for how in [Shutdown::Plain, Shutdown::Drain] {
        add_while_processing(Queue::new(), how).await;
    }
}

/// TestLen: duplicates do not grow the queue.
#[test]
fn test_len() {
    let q: Queue<&str> = Queue::new();
    q.add("foo");
    assert_eq!(q.len(), 1);
    q.add("bar");
    assert_eq!(q.len(), 2);
    q.add("foo");
    assert_eq!(q.len(), 2);
}

/// TestReinsert: an item added while processing comes back after `done`.
#[tokio::test]
async fn test_reinsert() {
    let q: Queue<&str> = Queue::new();
    q.add("foo");
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    q.add(i);
    assert_eq!(q.len(), 0, "not queued while processing");
    assert!(q.try_get().is_none(), "never handed out twice at once");
    q.done(&i);
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    q.done(&i);
    assert_eq!(q.len(), 0);
}

/// TestQueueDrainageUsingShutDownWithDrain: the drain waits for `done`.
#[tokio::test]
async fn test_queue_drainage_using_shut_down_with_drain() {
    let q: Queue<&str> = Queue::new();
    q.add("foo");
    q.add("bar");
    let first = q.get().await.unwrap();
    let second = q.get().await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shutdown_with_drain().await }
    });
    assert_eq!(q.get().await, None, "get reports shutdown");
    settle().await;
    assert!(!drain.is_finished(), "drain must wait for done");
    q.done(&first);
    settle().await;
    assert!(!drain.is_finished(), "one item still processing");
    q.done(&second);
    drain.await.unwrap();
}

/// TestNoQueueDrainageUsingShutDown: `shutdown` does not wait for `done`.
#[tokio::test]
async fn test_no_queue_drainage_using_shut_down() {
    let q: Queue<&str> = Queue::new();
    q.add("foo");
    q.add("bar");
    q.get().await.unwrap();
    q.get().await.unwrap();
    q.shutdown();
    assert!(q.is_shutting_down());
    assert_eq!(q.get().await, None);
}

/// TestForceQueueShutdownUsingShutDown: `shutdown` releases a pending drain.
#[tokio::test]
async fn test_force_queue_shutdown_using_shut_down() {
    let q: Queue<&str> = Queue::new();
    q.add("foo");
    q.add("bar");
    q.get().await.unwrap();
    q.get().await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shutdown_with_drain().await }
    });
    assert_eq!(q.get().await, None);
    settle().await;
    assert!(!drain.is_finished());
    q.shutdown();
    drain.await.unwrap();
}

/// TestQueueDrainageUsingShutDownWithDrainWithDirtyItem: a dirty item is
/// handed out again during the drain, after its `done`.
#[tokio::test]
async fn test_queue_drainage_using_shut_down_with_drain_with_dirty_item() {
    let q: Queue<&str> = Queue::new();
    q.add("foo");
    let gotten = q.get().await.unwrap();
    q.add("foo");
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shutdown_with_drain().await }
    });
    assert_eq!(q.get().await, None, "queue empty: shutdown reported");
    q.done(&gotten);
    let again = q.get().await;
    assert_eq!(again, Some("foo"), "dirty item comes back");
    settle().await;
    assert!(!drain.is_finished());
    q.done(&"foo");
    assert_eq!(q.get().await, None, "now really done");
    drain.await.unwrap();
}

/// TestGarbageCollection: after get/done the queue keeps no reference — here once the item
/// has been idle for two sweep periods of 1,024 dones (see "Differences from client-go"),
/// and its state's deferred free has run.
#[tokio::test]
async fn test_garbage_collection() {
    let q: Queue<Arc<String>> = Queue::new();
    let item = Arc::new("hello".to_string());
    q.add(item.clone());
    let o = q.get().await.unwrap();
    q.done(&o);
    drop(o);
    // Kept for a while: a key added again soon finds its state.
    assert!(Arc::strong_count(&item) > 1);
    for i in 0..4 * 1024 {
        q.add(Arc::new(i.to_string()));
        let o = q.get().await.unwrap();
        q.done(&o);
    }
    assert_eq!(Arc::strong_count(&item), 1);
}

/// An idle key added again is queued again; a key re-added within each sweep period keeps
/// its state through the sweeps while an idle one is dropped.
#[tokio::test]
async fn idle_keys_are_requeued_and_swept() {
    let q: Queue<Arc<String>> = Queue::new();
    let hot = Arc::new("hot".to_string());
    let cold = Arc::new("cold".to_string());
    q.add(cold.clone());
    let o = q.get().await.unwrap();
    q.done(&o);
    drop(o);
    for i in 0..4 * 1024 {
        q.add(hot.clone());
        assert_eq!(q.get().await.as_ref(), Some(&hot), "round {i}");
        q.done(&hot);
    }
    assert!(
        Arc::strong_count(&hot) > 1,
        "the re-added key keeps its state"
    );
    assert_eq!(Arc::strong_count(&cold), 1, "the idle key was swept");
    q.add(cold.clone());
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await.as_ref(), Some(&cold));
}

/// A get waiting before an add is woken by the add (no lost wake-up).
#[tokio::test]
async fn get_waiting_before_add_is_woken() {
    let q: Queue<u32> = Queue::new();
    let waiter = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    settle().await;
    assert!(!waiter.is_finished());
    q.add(7);
    assert_eq!(waiter.await.unwrap(), Some(7));
}

/// A cancelled get neither takes an item nor swallows the wake-up.
#[tokio::test]
async fn cancelled_get_passes_wakeup_on() {
    let q: Queue<u32> = Queue::new();
    let second = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    let first = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    settle().await;
    first.abort();
    q.add(1);
    assert_eq!(second.await.unwrap(), Some(1));
}

/// Waiting gets return `None` at shutdown; queued items are still handed out.
#[tokio::test]
async fn shutdown_hands_out_queued_items_then_none() {
    let q: Queue<u32> = Queue::new();
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        })
        .collect();
    settle().await;
    q.shutdown();
    for w in waiters {
        assert_eq!(w.await.unwrap(), None);
    }
    let q: Queue<u32> = Queue::new();
    q.add(1);
    q.add(2);
    q.shutdown();
    q.add(3);
    assert_eq!(q.get().await, Some(1));
    assert_eq!(q.get().await, Some(2));
    assert_eq!(q.get().await, None);
}

/// `done` for an item that is not processing does not duplicate it.
#[test]
fn done_without_get_is_harmless() {
    let q: Queue<u32> = Queue::new();
    q.add(1);
    q.done(&1);
    assert_eq!(q.len(), 1);
}

fn metered(provider: &TestProvider, period: Duration) -> Queue<&'static str> {
    Queue::with_update_period(
        QueueConfig {
            name: "test".into(),
            metrics_provider: Some(Arc::new(provider.clone())),
        },
        period,
    )
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// TestMetrics: adds/depth on non-duplicate adds (also while processing),
/// latency from the first add, work duration, unfinished-work refresh.
#[tokio::test(start_paused = true)]
async fn test_metrics() {
    let mp = TestProvider::default();
    let q = metered(&mp, Duration::from_millis(1));
    settle().await; // the refresh task starts its ticker

    q.add("foo");
    {
        let v = mp.values.lock();
        assert_eq!((v.adds, v.depth), (1, 1));
    }

    tokio::time::advance(us(50)).await;
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    assert_eq!(mp.values.lock().latency, [5e-05]);

    // Add it back while processing; multiple adds are de-duped.
    for _ in 0..5 {
        q.add(i);
    }
    assert_eq!(mp.values.lock().adds, 2);
    assert_eq!(mp.values.lock().depth, 1, "one thing remains in the queue");

    tokio::time::advance(us(25)).await;
    q.done(&i);
    assert_eq!(mp.values.lock().work_duration, [2.5e-05]);
    assert_eq!(mp.values.lock().depth, 1);

    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    assert_eq!(mp.values.lock().latency, [5e-05, 2.5e-05]);

    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    {
        let v = mp.values.lock();
        assert_eq!(v.unfinished, 0.001);
        assert_eq!(v.longest, 0.001);
    }

    q.done(&i);
    assert_eq!(mp.values.lock().work_duration, [2.5e-05, 0.001]);
    q.shutdown();
}

/// TestMetricShutdown: no unfinished-work refresh after shutdown.
#[tokio::test(start_paused = true)]
async fn test_metric_shutdown() {
    let mp = TestProvider::default();
    let q = metered(&mp, Duration::from_millis(1));
    settle().await;
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    let before = mp.values.lock().unfinished_updates;
    assert!(before >= 1, "refreshed while running");
    q.shutdown();
    tokio::time::advance(Duration::from_secs(3600)).await;
    settle().await;
    assert_eq!(mp.values.lock().unfinished_updates, before);
}

/// The default refresh period is 500 ms.
#[tokio::test(start_paused = true)]
async fn unfinished_work_refreshed_every_500ms() {
    let mp = TestProvider::default();
    let q = metered(&mp, UNFINISHED_WORK_UPDATE_PERIOD);
    q.add("foo");
    let _i = q.get().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let v = mp.values.lock();
    assert_eq!(v.unfinished_updates, 2, "at 0.5 s and 1.0 s");
    assert_eq!(v.longest, 1.0);
}

/// Unnamed queues never get metrics, even with a provider.
#[tokio::test]
async fn unnamed_queue_has_no_metrics() {
    let provider = TestProvider::default();
    let q: Queue<&str> = Queue::with_config(QueueConfig {
        name: String::new(),
        metrics_provider: Some(Arc::new(provider.clone())),
    });
    q.add("foo");
    let i = q.get().await.unwrap();
    q.done(&i);
    assert_eq!(provider.values.lock().adds, 0);
}

/// A worker draining a backlog with no other await point still lets other
/// tasks on its thread run (cooperative budget in `get`).
#[tokio::test]
async fn get_yields_to_other_tasks_when_busy() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let q: Queue<u32> = Queue::new();
    for i in 0..1000 {
        q.add(i);
    }
    let ran = Arc::new(AtomicBool::new(false));
    tokio::spawn({
        let ran = ran.clone();
        async move { ran.store(true, Ordering::SeqCst) }
    });
    let mut ran_during_drain = false;
    for _ in 0..1000 {
        let i = q.get().await.unwrap();
        q.done(&i);
        ran_during_drain |= ran.load(Ordering::SeqCst);
    }
    assert!(ran_during_drain, "the other task never ran while draining");
}
