//! The delaying queue (client-go `util/workqueue/delaying_queue.go`).
//!
//! [`DelayingQueue::add_after`] records the item in a timer heap shared with
//! one background tokio task, which adds the item to the inner [`Queue`] when
//! its time comes. Each item has at most one pending entry: a second
//! `add_after` for a waiting item keeps the earlier time. A zero delay adds at
//! once. Pending items are discarded at shutdown.
//!
//! Upstream hands entries to its timer goroutine over a channel; here the
//! caller inserts into the heap itself (under a mutex) and wakes the timer only
//! when the new entry is the earliest, so heavy `add_after` traffic is spread
//! over the calling tasks instead of queueing up behind one task.
//!
//! Two timers move due items, whichever comes first: a tokio task, whose sleeps
//! have tokio's millisecond resolution (a deadline fires at the end of the
//! millisecond that holds it, 0.5 ms late on average) and follow tokio's clock
//! (paused and advanced in tests), and, on a multi-thread runtime, a thread of
//! the queue's own ([`precise_timer`](crate::precise_timer)) that parks until
//! the due time. (Measured with the thread alone: lateness p50 and p99 were
//! higher, for the same CPU: between the thread's wake-ups, the task's tick
//! moves what has come due.)

use std::fmt;
use std::pin::pin;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::metrics::{CounterMetric, MetricsProvider, resolve_provider, retry_metric};
use crate::precise_timer::{self, DueItems};
use crate::queue::{Queue, QueueConfig, QueueItem};
use crate::timer_heap::TimerHeap;

/// What the handles, the timer task and the timer thread share.
pub(crate) struct Shared<T> {
    queue: Queue<T>,
    pub(crate) waiting: Mutex<TimerHeap<T>>,
    /// Wakes the timer task: new earliest entry, shutdown, or last handle dropped.
    wake: Arc<Notify>,
    /// The precise timer thread, unparked for the same reasons.
    timer: OnceLock<std::thread::JoinHandle<()>>,
    retries: Option<Box<dyn CounterMetric>>,
}

/// Most items a timer's batch buffer keeps room for between two moves; after a larger
/// burst the buffer is given back (so a burst does not pin its memory).
pub(crate) const BATCH_KEEP: usize = 1024;

impl<T: QueueItem> DueItems for Shared<T> {
    type Item = T;

    fn is_shutting_down(&self) -> bool {
        self.queue.is_shutting_down()
    }

    fn clear(&self) {
        self.waiting.lock().clear();
    }

    /// Moves the items due at `now` into the queue; returns the next due time.
    ///
    /// `batch` is the calling timer's buffer, empty on entry and on return: each timer keeps
    /// one across its wake-ups, so a move allocates nothing. (A fresh `Vec` per move grew
    /// through reallocations to the batch's size on every wake-up; with glibc, an allocation
    /// of a kilobyte or more first consolidates the allocator's fast bins: `malloc_consolidate`
    /// on the timer thread and tokio's workers was 3.0% of the delay benchmark's CPU samples
    /// in one `perf record`, 1.2% with the kept buffer in another; the rest comes from other
    /// large allocations, such as the copies of the item-state map's table.)
    fn move_ready(&self, now: Instant, batch: &mut Vec<T>) -> Option<Instant> {
        debug_assert!(batch.is_empty());
        let next = {
            let mut waiting = self.waiting.lock();
            while let Some(item) = waiting.pop_ready(now) {
                batch.push(item);
            }
            waiting.next_ready()
        };
        if !batch.is_empty() {
            self.queue.add_batch(batch.drain(..));
        }
        if batch.capacity() > BATCH_KEEP {
            *batch = Vec::new();
        }
        next
    }
}

impl<T> Shared<T> {
    /// Wakes both timers.
    fn wake_timers(&self) {
        self.wake.notify_one();
        if let Some(timer) = self.timer.get() {
            timer.thread().unpark();
        }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Let the timers notice that every handle is gone.
        self.wake_timers();
    }
}

/// A [`Queue`] plus [`add_after`](Self::add_after).
///
/// Cheap to clone (shared handle). Must be created inside a tokio runtime: the
/// timer task is spawned on construction and ends at shutdown, or when every
/// handle is dropped.
pub struct DelayingQueue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("queue", &self.shared.queue)
            .field("waiting", &self.shared.waiting.lock().len())
            .finish()
    }
}

impl<T: QueueItem> Default for DelayingQueue<T> {
    /// Same as [`DelayingQueue::new`] (needs a tokio runtime).
    fn default() -> Self {
        Self::new()
    }
}

impl<T: QueueItem> DelayingQueue<T> {
    /// An unnamed delaying queue (no metrics).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (like `tokio::spawn`).
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A delaying queue with a name (for metrics) and optional metrics provider.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (like `tokio::spawn`).
    pub fn with_config(config: QueueConfig) -> Self {
        let provider: Option<Arc<dyn MetricsProvider>> =
            resolve_provider(config.metrics_provider.as_ref());
        let retries = retry_metric(&config.name, provider.as_ref());
        let queue = Queue::with_config(QueueConfig {
            name: config.name,
            metrics_provider: provider,
        });
        let wake = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            queue: queue.clone(),
            waiting: Mutex::new(TimerHeap::new()),
            wake: wake.clone(),
            timer: OnceLock::new(),
            retries,
        });
        tokio::spawn(waiting_loop(queue, Arc::downgrade(&shared), wake));
        if let Some(timer) = precise_timer::spawn(Arc::downgrade(&shared)) {
            let _ = shared.timer.set(timer);
        }
        Self { shared }
    }

    /// Adds `item` once `delay` has passed.
    ///
    /// A zero delay adds immediately. If the item is already waiting, the
    /// earlier of the two times wins. Ignored after shutdown. Every call
    /// counts as a retry in the `workqueue_retries_total` metric.
    pub fn add_after(&self, item: T, delay: Duration) {
        if self.shared.queue.is_shutting_down() {
            return;
        }
        if let Some(retries) = &self.shared.retries {
            retries.inc();
        }
        if delay.is_zero() {
            self.shared.queue.add(item);
            return;
        }
        // A far-future delay that overflows the clock is kept pending forever
        // (until shutdown), which is what such a delay means in practice.
        let Some(ready_at) = Instant::now().checked_add(delay) else {
            return;
        };
        let new_earliest = {
            let mut waiting = self.shared.waiting.lock();
            let earliest = waiting.next_ready();
            waiting.insert(item, ready_at);
            earliest.is_none_or(|at| ready_at < at)
        };
        if new_earliest {
            self.shared.wake_timers();
        }
    }

    /// Number of items waiting for their time.
    pub fn waiting_len(&self) -> usize {
        self.shared.waiting.lock().len()
    }

    /// Removes `item`'s pending entry and returns its ready time (tests).
    #[cfg(test)]
    pub(crate) fn take_waiting(&self, item: &T) -> Option<Instant> {
        self.shared.waiting.lock().remove(item)
    }

    /// Whether the precise timer thread has ended (`None`: there is none).
    #[cfg(test)]
    pub(crate) fn timer_finished(&self) -> Option<bool> {
        self.shared
            .timer
            .get()
            .map(std::thread::JoinHandle::is_finished)
    }

    /// The queue's shared state, weakly (tests).
    #[cfg(test)]
    pub(crate) fn downgrade(&self) -> Weak<Shared<T>> {
        Arc::downgrade(&self.shared)
    }

    /// The inner queue (shares state with this handle).
    pub fn queue(&self) -> &Queue<T> {
        &self.shared.queue
    }

    /// See [`Queue::add`].
    pub fn add(&self, item: T) {
        self.shared.queue.add(item)
    }

    /// See [`Queue::get`].
    pub async fn get(&self) -> Option<T> {
        self.shared.queue.get().await
    }

    /// See [`Queue::try_get`].
    pub fn try_get(&self) -> Option<T> {
        self.shared.queue.try_get()
    }

    /// See [`Queue::done`].
    pub fn done(&self, item: &T) {
        self.shared.queue.done(item)
    }

    /// See [`Queue::len`]; delayed items are not counted.
    pub fn len(&self) -> usize {
        self.shared.queue.len()
    }

    /// See [`Queue::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.shared.queue.is_empty()
    }

    /// Shuts the queue down (see [`Queue::shutdown`]) and discards every
    /// pending delayed item.
    pub fn shutdown(&self) {
        self.shared.queue.shutdown();
        self.shared.wake_timers();
    }

    /// Shuts down, discarding pending delayed items, and waits for the items
    /// being processed (see [`Queue::shutdown_with_drain`]).
    pub async fn shutdown_with_drain(&self) {
        self.shared.queue.begin_drain();
        self.shared.wake_timers();
        self.shared.queue.wait_drained().await;
    }

    /// See [`Queue::is_shutting_down`].
    pub fn is_shutting_down(&self) -> bool {
        self.shared.queue.is_shutting_down()
    }
}

/// The timer task: moves items into `queue` when their time comes.
async fn waiting_loop<T: QueueItem>(queue: Queue<T>, shared: Weak<Shared<T>>, wake: Arc<Notify>) {
    let mut batch = Vec::new();
    loop {
        // Register for wake-ups before looking at the heap.
        let mut woken = pin!(wake.notified());
        woken.as_mut().enable();
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if queue.is_shutting_down() {
            shared.clear();
            return;
        }
        let next = shared.move_ready(Instant::now(), &mut batch);
        drop(shared);
        match next {
            Some(at) => {
                tokio::select! {
                    () = woken => {}
                    () = tokio::time::sleep_until(at) => {}
                }
            }
            None => woken.await,
        }
    }
}

#[cfg(test)]
#[path = "delaying_queue_tests.rs"]
mod tests;
