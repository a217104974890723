//! Ports of upstream `util/workqueue/delaying_queue_test.go` (fake clock →
//! tokio's paused clock: `sleep` auto-advances time when every task is idle).

use super::*;
use crate::metrics::testing::TestProvider;

/// Lets the timer task take its commands (upstream `waitForWaitingQueueToFill`).
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

async fn step(d: Duration) {
    tokio::time::sleep(d).await;
    settle().await;
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn named(name: &str, provider: &TestProvider) -> DelayingQueue<&'static str> {
    DelayingQueue::with_config(QueueConfig {
        name: name.into(),
        metrics_provider: Some(Arc::new(provider.clone())),
    })
}

/// TestSimpleQueue
#[tokio::test(start_paused = true)]
async fn test_simple_queue() {
    let q = named("test-simple", &TestProvider::default());
    q.add_after("foo", ms(50));
    settle().await;
    assert_eq!(q.waiting_len(), 1);
    assert_eq!(q.len(), 0, "should not have added");

    step(ms(60)).await;
    assert_eq!(q.len(), 1, "should have added");
    assert_eq!(q.waiting_len(), 0);
    let item = q.get().await.unwrap();
    q.done(&item);

    // step past the next heartbeat
    step(Duration::from_secs(10)).await;
    assert_eq!(q.len(), 0, "should not have added");
}

/// TestDeduping: one pending entry per item, the earliest time wins.
#[tokio::test(start_paused = true)]
async fn test_deduping() {
    let q = named("test-dedupe", &TestProvider::default());
    q.add_after("foo", ms(50));
    settle().await;
    q.add_after("foo", ms(70));
    settle().await;
    assert_eq!(q.waiting_len(), 1);
    assert_eq!(q.len(), 0);

    // step past the first block, we should receive now
    step(ms(60)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 0);
    let item = q.get().await.unwrap();
    q.done(&item);

    // step past the second add: it was dropped
    step(ms(20)).await;
    assert_eq!(q.len(), 0);

    // test again, but this time the earlier should override
    q.add_after("foo", ms(50));
    q.add_after("foo", ms(30));
    settle().await;
    assert_eq!(q.waiting_len(), 1);
    assert_eq!(q.len(), 0);

    step(ms(40)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 0);
    let item = q.get().await.unwrap();
    q.done(&item);

    // step past the second add
    step(ms(20)).await;
    assert_eq!(q.len(), 0);
}

/// TestAddTwoFireEarly
#[tokio::test(start_paused = true)]
async fn test_add_two_fire_early() {
    let q = named("test-addtwofireeearly", &TestProvider::default());
    q.add_after("foo", Duration::from_secs(1));
    q.add_after("bar", ms(50));
    settle().await;
    assert_eq!(q.waiting_len(), 2);
    assert_eq!(q.len(), 0);

    step(ms(60)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 1);
    assert_eq!(q.get().await, Some("bar"));

    q.add_after("baz", Duration::from_secs(2));

    step(Duration::from_secs(1)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 1);
    assert_eq!(q.get().await, Some("foo"));

    step(Duration::from_secs(2)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 0);
    assert_eq!(q.get().await, Some("baz"));
}

/// TestCopyShifting: items fire in ready-time order, not insertion order.
#[tokio::test(start_paused = true)]
async fn test_copy_shifting() {
    let q = named("test-copyshift", &TestProvider::default());
    q.add_after("foo", Duration::from_secs(1));
    q.add_after("bar", ms(500));
    q.add_after("baz", ms(250));
    settle().await;
    assert_eq!(q.waiting_len(), 3);
    assert_eq!(q.len(), 0);

    step(Duration::from_secs(2)).await;
    assert_eq!(q.len(), 3);
    assert_eq!(q.waiting_len(), 0);
    assert_eq!(q.get().await, Some("baz"));
    assert_eq!(q.get().await, Some("bar"));
    assert_eq!(q.get().await, Some("foo"));
}

/// A zero delay adds at once, without the timer task.
#[tokio::test(start_paused = true)]
async fn zero_delay_adds_immediately() {
    let q: DelayingQueue<&str> = DelayingQueue::new();
    q.add_after("now", Duration::ZERO);
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 0);
}

/// Pending items are discarded at shutdown; add_after after shutdown is ignored.
#[tokio::test(start_paused = true)]
async fn shutdown_discards_pending() {
    let q: DelayingQueue<&str> = DelayingQueue::new();
    q.add_after("later", ms(10));
    settle().await;
    assert_eq!(q.waiting_len(), 1);
    q.shutdown();
    settle().await;
    assert_eq!(q.waiting_len(), 0);
    q.add_after("after", Duration::ZERO);
    step(ms(20)).await;
    assert_eq!(q.len(), 0);
    assert_eq!(q.get().await, None);
}

/// `retries_total` counts every add_after call (even zero delay and
/// duplicates), as upstream; unnamed queues count nothing.
#[tokio::test(start_paused = true)]
async fn retries_counted_on_every_add_after() {
    let provider = TestProvider::default();
    let q = named("retries", &provider);
    q.add_after("a", Duration::ZERO);
    q.add_after("a", ms(5));
    q.add_after("a", ms(5));
    assert_eq!(provider.values.lock().retries, 3);

    let provider = TestProvider::default();
    let q: DelayingQueue<&str> = DelayingQueue::with_config(QueueConfig {
        name: String::new(),
        metrics_provider: Some(Arc::new(provider.clone())),
    });
    q.add_after("a", ms(5));
    assert_eq!(provider.values.lock().retries, 0);
}

/// A waiting get is woken when a delayed item becomes ready.
#[tokio::test(start_paused = true)]
async fn get_waits_for_delayed_item() {
    let q: DelayingQueue<u32> = DelayingQueue::new();
    q.add_after(1, Duration::from_secs(3600));
    q.add_after(2, ms(1));
    assert_eq!(q.get().await, Some(2));
    assert_eq!(q.get().await, Some(1));
}

/// The timer heap keeps one current entry per item and skips stale ones.
#[test]
fn waiting_heap_earliest_wins() {
    let base = Instant::now();
    let mut w: TimerHeap<&str> = TimerHeap::new();
    w.insert("a", base + ms(30));
    w.insert("b", base + ms(20));
    w.insert("a", base + ms(10)); // moves earlier
    w.insert("b", base + ms(40)); // ignored
    assert_eq!(w.len(), 2);
    assert_eq!(w.next_ready(), Some(base + ms(10)));
    assert_eq!(w.pop_ready(base + ms(5)), None);
    assert_eq!(w.pop_ready(base + ms(25)), Some("a"));
    assert_eq!(w.pop_ready(base + ms(25)), Some("b"));
    assert_eq!(w.pop_ready(base + ms(100)), None);
    assert_eq!(w.len(), 0);
}

/// As upstream: a zero-delay add does not cancel the item's pending entry,
/// which still fires later (found by the delaying-queue property test).
#[tokio::test(start_paused = true)]
async fn zero_delay_keeps_pending_entry() {
    let q: DelayingQueue<&str> = DelayingQueue::new();
    q.add_after("x", ms(1));
    q.add_after("x", Duration::ZERO);
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 1);
    let item = q.get().await.unwrap();
    q.done(&item);
    step(ms(1)).await;
    assert_eq!(q.len(), 1, "pending entry fired");
}

/// On the real clock the precise timer moves items at their time, never before, and each
/// comes out once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_clock_items_come_out_in_time_order_never_early() {
    let q: DelayingQueue<u64> = DelayingQueue::new();
    let start = Instant::now();
    let delays: Vec<u64> = (0..40).map(|i| (i * 7919) % 23 + 1).collect();
    for (i, &d) in delays.iter().enumerate() {
        q.add_after(i as u64, ms(d));
    }
    let mut seen = Vec::new();
    while seen.len() < delays.len() {
        let item = q.get().await.expect("not shut down");
        let elapsed = start.elapsed();
        let due = ms(delays[item as usize]);
        assert!(
            elapsed >= due,
            "item {item} out after {elapsed:?}, due at {due:?}"
        );
        q.done(&item);
        seen.push(item);
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..40).collect::<Vec<_>>());
    assert_eq!(q.waiting_len(), 0);
    q.shutdown();
}

/// The timer thread runs on a multi-thread runtime only, and ends at shutdown; when the last
/// handle is dropped the queue is freed (the thread holds it weakly, and then ends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timer_thread_ends_with_the_queue() {
    let a: DelayingQueue<u32> = DelayingQueue::new();
    a.add_after(1, Duration::from_secs(3600));
    assert_eq!(a.timer_finished(), Some(false));
    a.shutdown();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while a.timer_finished() != Some(true) && std::time::Instant::now() < deadline {
        tokio::time::sleep(ms(1)).await;
    }
    assert_eq!(a.timer_finished(), Some(true), "timer thread still running");

    let b: DelayingQueue<u32> = DelayingQueue::new();
    b.add_after(1, Duration::from_secs(3600));
    let weak = b.downgrade();
    drop(b);
    // The thread holds a strong reference only while it handles a wake-up (here the one the
    // add caused), so the queue is freed at the latest when that ends.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while weak.upgrade().is_some() && std::time::Instant::now() < deadline {
        tokio::time::sleep(ms(1)).await;
    }
    assert!(
        weak.upgrade().is_none(),
        "nothing but the handle keeps the queue"
    );
}

#[tokio::test(start_paused = true)]
async fn no_timer_thread_on_a_current_thread_runtime() {
    let q: DelayingQueue<u32> = DelayingQueue::new();
    assert_eq!(q.timer_finished(), None);
}

/// `move_ready` moves what is due through the caller's buffer, leaves it empty, keeps its
/// room for the next move, and gives it back after a burst larger than `BATCH_KEEP`.
#[tokio::test(start_paused = true)]
async fn move_ready_reuses_the_batch_buffer() {
    let q: DelayingQueue<u32> = DelayingQueue::new();
    let shared = q.downgrade().upgrade().expect("queue alive");
    // Hold the timer task off the heap while this test moves items itself.
    let now = Instant::now();
    {
        let mut waiting = shared.waiting.lock();
        for i in 0..10 {
            waiting.insert(i, now);
        }
        waiting.insert(99, now + ms(5));
    }
    let mut batch = Vec::new();
    assert_eq!(shared.move_ready(now, &mut batch), Some(now + ms(5)));
    assert!(batch.is_empty());
    let room = batch.capacity();
    assert!(room >= 10, "buffer kept its room, got {room}");
    assert_eq!(q.len(), 10);
    assert_eq!(q.waiting_len(), 1);

    // Nothing due: nothing moved, the buffer untouched.
    assert_eq!(shared.move_ready(now, &mut batch), Some(now + ms(5)));
    assert_eq!((batch.len(), batch.capacity()), (0, room));

    // A burst larger than BATCH_KEEP is moved whole, then its buffer is given back.
    {
        let mut waiting = shared.waiting.lock();
        for i in 1_000..1_000 + 2 * BATCH_KEEP as u32 {
            waiting.insert(i, now);
        }
    }
    assert_eq!(shared.move_ready(now + ms(5), &mut batch), None);
    assert_eq!((batch.len(), batch.capacity()), (0, 0));
    assert_eq!(q.len(), 11 + 2 * BATCH_KEEP);
    assert_eq!(q.waiting_len(), 0);
    q.shutdown();
}
