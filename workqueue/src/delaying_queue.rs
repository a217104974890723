//! The delaying queue (client-go `util/workqueue/delaying_queue.go`).
//!
//! [`DelayingQueue::add_after`] hands an item to one background tokio task that
//! keeps a timer heap and adds the item to the inner [`Queue`] when its time
//! comes. Each item has at most one pending entry: a second `add_after` for a
//! waiting item keeps the earlier time. A zero delay adds at once. Pending
//! items are discarded at shutdown.

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::metrics::{CounterMetric, MetricsProvider, resolve_provider, retry_metric};
use crate::queue::{Queue, QueueConfig, QueueItem};

/// Upstream wakes its timer loop at least this often as insurance; this
/// implementation never needs it (tokio timers do not drift), but the value is
/// kept for reference.
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// A request for the timer task.
pub(crate) enum Command<T> {
    /// Add `item` to the queue at `ready_at`.
    Add { item: T, ready_at: Instant },
    /// Stop and discard every pending entry.
    Stop,
}

struct Shared<T> {
    queue: Queue<T>,
    tx: mpsc::UnboundedSender<Command<T>>,
    retries: Option<Box<dyn CounterMetric>>,
    /// Entries in the timer heap (excluding commands not yet received).
    waiting: Arc<AtomicUsize>,
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
            .field("waiting", &self.shared.waiting.load(Ordering::Relaxed))
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
        let (queue, rx, this) = Self::unstarted(config);
        tokio::spawn(waiting_loop(queue, rx, this.shared.waiting.clone()));
        this
    }

    /// Builds the queue without spawning the timer task.
    pub(crate) fn unstarted(
        config: QueueConfig,
    ) -> (Queue<T>, mpsc::UnboundedReceiver<Command<T>>, Self) {
        let provider: Option<Arc<dyn MetricsProvider>> =
            resolve_provider(config.metrics_provider.as_ref());
        let retries = retry_metric(&config.name, provider.as_ref());
        let queue = Queue::with_config(QueueConfig {
            name: config.name,
            metrics_provider: provider,
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let this = Self {
            shared: Arc::new(Shared {
                queue: queue.clone(),
                tx,
                retries,
                waiting: Arc::new(AtomicUsize::new(0)),
            }),
        };
        (queue, rx, this)
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
        // Sending only fails once the timer task is gone (after shutdown).
        let _ = self.shared.tx.send(Command::Add { item, ready_at });
    }

    /// Number of items waiting in the timer heap.
    ///
    /// Entries just handed to the timer task may not be counted yet.
    pub fn waiting_len(&self) -> usize {
        self.shared.waiting.load(Ordering::Relaxed)
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
        let _ = self.shared.tx.send(Command::Stop);
    }

    /// Shuts down, discarding pending delayed items, and waits for the items
    /// being processed (see [`Queue::shutdown_with_drain`]).
    pub async fn shutdown_with_drain(&self) {
        let _ = self.shared.tx.send(Command::Stop);
        self.shared.queue.shutdown_with_drain().await;
    }

    /// See [`Queue::is_shutting_down`].
    pub fn is_shutting_down(&self) -> bool {
        self.shared.queue.is_shutting_down()
    }
}

/// Timer heap with one entry per item; stale heap entries are skipped lazily.
struct Waiting<T> {
    heap: BinaryHeap<Reverse<(Instant, u64)>>,
    /// Current ready time and heap sequence number of each waiting item.
    by_item: HashMap<T, (Instant, u64)>,
    /// Sequence number -> item, for the entries that are current.
    by_seq: HashMap<u64, T>,
    next_seq: u64,
}

impl<T: QueueItem> Waiting<T> {
    fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            by_item: HashMap::new(),
            by_seq: HashMap::new(),
            next_seq: 0,
        }
    }

    fn len(&self) -> usize {
        self.by_item.len()
    }

    /// Inserts or moves an entry earlier; a later time for a waiting item is ignored.
    fn insert(&mut self, item: T, ready_at: Instant) {
        let seq = self.next_seq;
        match self.by_item.entry(item) {
            Entry::Occupied(mut e) => {
                let (current, old_seq) = *e.get();
                if ready_at >= current {
                    return;
                }
                let item = e.key().clone();
                e.insert((ready_at, seq));
                self.by_seq.remove(&old_seq);
                self.by_seq.insert(seq, item);
            }
            Entry::Vacant(e) => {
                self.by_seq.insert(seq, e.key().clone());
                e.insert((ready_at, seq));
            }
        }
        self.next_seq += 1;
        self.heap.push(Reverse((ready_at, seq)));
    }

    /// The earliest current ready time.
    fn next_ready(&mut self) -> Option<Instant> {
        while let Some(Reverse((at, seq))) = self.heap.peek().copied() {
            if self.by_seq.contains_key(&seq) {
                return Some(at);
            }
            self.heap.pop();
        }
        None
    }

    /// Removes and returns the next item ready at `now`.
    fn pop_ready(&mut self, now: Instant) -> Option<T> {
        let at = self.next_ready()?;
        if at > now {
            return None;
        }
        let Reverse((_, seq)) = self.heap.pop()?;
        let item = self.by_seq.remove(&seq)?;
        self.by_item.remove(&item);
        Some(item)
    }
}

/// The timer task: moves items into `queue` when their time comes.
async fn waiting_loop<T: QueueItem>(
    queue: Queue<T>,
    mut rx: mpsc::UnboundedReceiver<Command<T>>,
    waiting_len: Arc<AtomicUsize>,
) {
    let mut waiting = Waiting::new();
    loop {
        if queue.is_shutting_down() {
            break;
        }
        let now = Instant::now();
        while let Some(item) = waiting.pop_ready(now) {
            queue.add(item);
        }
        waiting_len.store(waiting.len(), Ordering::Relaxed);
        let next = waiting.next_ready();
        let command = match next {
            Some(at) => tokio::select! {
                command = rx.recv() => command,
                () = tokio::time::sleep_until(at) => continue,
            },
            None => rx.recv().await,
        };
        let mut command = command;
        // Take every queued command before looking at the clock again.
        loop {
            match command {
                None | Some(Command::Stop) => {
                    waiting_len.store(0, Ordering::Relaxed);
                    return;
                }
                Some(Command::Add { item, ready_at }) => {
                    if ready_at <= Instant::now() {
                        queue.add(item);
                    } else {
                        waiting.insert(item, ready_at);
                    }
                }
            }
            match rx.try_recv() {
                Ok(next) => command = Some(next),
                Err(_) => break,
            }
        }
    }
    waiting_len.store(0, Ordering::Relaxed);
}

#[cfg(test)]
#[path = "delaying_queue_tests.rs"]
mod tests;
