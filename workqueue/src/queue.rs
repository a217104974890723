//! The basic work queue (client-go `util/workqueue/queue.go`, `Typed[T]`).
//!
//! A FIFO of distinct items with client-go's dirty/processing bookkeeping:
//!
//! * adding an item that is already waiting does nothing (duplicates collapse);
//! * an item handed out by [`Queue::get`] is *processing* until [`Queue::done`];
//!   adding it meanwhile marks it dirty, and `done` puts it back at the tail, so
//!   an item is never handed to two workers at once;
//! * after [`Queue::shutdown`], already queued items are still handed out, new
//!   adds are dropped, and `get` returns `None` once the queue is empty.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::metrics::{MetricsProvider, QueueMetrics, resolve_provider};

/// What a queue can hold: any hashable, clonable value shareable between tasks.
///
/// Controllers normally use `String` keys (`namespace/name`).
pub trait QueueItem: Eq + Hash + Clone + Send + Sync + 'static {}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> QueueItem for T {}

/// How often the unfinished-work and longest-running-processor gauges are refreshed.
pub const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// Options of a [`Queue`] (client-go `QueueConfig`).
#[derive(Clone, Default)]
pub struct QueueConfig {
    /// Name of the queue, used as the `name` label of its metrics. An empty
    /// name means no metrics at all.
    pub name: String,
    /// Metrics provider for this queue; `None` uses the one installed with
    /// [`set_provider`](crate::set_provider), if any.
    pub metrics_provider: Option<Arc<dyn MetricsProvider>>,
}

impl fmt::Debug for QueueConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .finish()
    }
}

impl QueueConfig {
    /// A configuration with a name (and the global metrics provider, if any).
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            metrics_provider: None,
        }
    }
}

struct State<T> {
    /// Items waiting to be handed out, in order; each is also in `dirty`.
    queue: VecDeque<T>,
    /// Items that need processing: everything in `queue`, plus items re-added
    /// while being processed.
    dirty: HashSet<T>,
    /// Items handed out by `get` and not yet `done`.
    processing: HashSet<T>,
    shutting_down: bool,
    drain: bool,
    metrics: Option<QueueMetrics<T>>,
}

struct Shared<T> {
    name: String,
    state: Mutex<State<T>>,
    /// Signalled once per queued item (`notify_one`) and at shutdown (`notify_waiters`).
    item_ready: Notify,
    /// Signalled when `processing` becomes empty, or when a forced shutdown
    /// cancels a drain.
    drained: Notify,
    /// Stops the metrics refresh task.
    stop_ticker: Arc<Notify>,
}

/// A deduplicating FIFO work queue, safe to use from many tokio tasks.
///
/// `Queue` is a cheap handle: clones share the same queue.
///
/// # Example
///
/// ```
/// use kcm_workqueue::Queue;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue: Queue<String> = Queue::new();
/// queue.add("default/web".to_string());
/// queue.add("default/web".to_string()); // collapses with the first add
/// assert_eq!(queue.len(), 1);
///
/// let worker = {
///     let queue = queue.clone();
///     tokio::spawn(async move {
///         let mut processed = Vec::new();
///         // `get` returns `None` once the queue is shut down and empty.
///         while let Some(key) = queue.get().await {
///             processed.push(key.clone());
///             queue.done(&key);
///         }
///         processed
///     })
/// };
///
/// queue.add("kube-system/dns".to_string());
/// queue.shutdown_with_drain().await;
/// let processed = worker.await.unwrap();
/// assert_eq!(processed, ["default/web", "kube-system/dns"]);
/// # }
/// ```
pub struct Queue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("Queue")
            .field("name", &self.shared.name)
            .field("len", &state.queue.len())
            .field("processing", &state.processing.len())
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

impl<T: QueueItem> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: QueueItem> Queue<T> {
    /// An unnamed queue (no metrics).
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A queue with a name and optionally a metrics provider.
    ///
    /// If the queue gets metrics and a tokio runtime is running, a task
    /// refreshes the unfinished-work gauges every 500 ms until shutdown.
    pub fn with_config(config: QueueConfig) -> Self {
        Self::with_update_period(config, UNFINISHED_WORK_UPDATE_PERIOD)
    }

    /// Like `with_config`, with a custom unfinished-work refresh period (tests).
    pub(crate) fn with_update_period(config: QueueConfig, update_period: Duration) -> Self {
        let provider = resolve_provider(config.metrics_provider.as_ref());
        let metrics = QueueMetrics::new(&config.name, provider.as_ref());
        let with_metrics = metrics.is_some();
        let shared = Arc::new(Shared {
            name: config.name,
            state: Mutex::new(State {
                queue: VecDeque::new(),
                dirty: HashSet::new(),
                processing: HashSet::new(),
                shutting_down: false,
                drain: false,
                metrics,
            }),
            item_ready: Notify::new(),
            drained: Notify::new(),
            stop_ticker: Arc::new(Notify::new()),
        });
        if with_metrics {
            spawn_unfinished_work_ticker(&shared, update_period);
        }
        Self { shared }
    }

    /// The queue's name (empty for unnamed queues).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Marks `item` as needing processing.
    ///
    /// Does nothing if the item is already waiting or the queue is shutting
    /// down. If the item is being processed, it is queued again when `done` is
    /// called for it.
    pub fn add(&self, item: T) {
        let pushed = add_locked(&mut self.shared.state.lock(), item);
        if pushed {
            self.shared.item_ready.notify_one();
        }
    }

    /// Adds several items under one lock acquisition (used by the delaying
    /// queue's timer task); same semantics as calling [`add`](Self::add) for each.
    pub(crate) fn add_batch(&self, items: impl IntoIterator<Item = T>) {
        let mut pushed = 0usize;
        {
            let mut state = self.shared.state.lock();
            for item in items {
                pushed += usize::from(add_locked(&mut state, item));
            }
        }
        for _ in 0..pushed {
            self.shared.item_ready.notify_one();
        }
    }

    /// Waits for the next item and marks it as processing.
    ///
    /// Returns `None` once the queue is shutting down and no item is queued.
    /// Every item returned must be passed to [`done`](Self::done) afterwards.
    ///
    /// Cancel-safe: if the future is dropped before it completes, no item is
    /// taken and a pending wake-up is passed on to another waiter.
    pub async fn get(&self) -> Option<T> {
        // Take part in tokio's cooperative scheduling: a worker draining a long
        // backlog without other await points still yields now and then.
        tokio::task::consume_budget().await;
        loop {
            // Fast path: no waiter registration when an item is ready.
            if let Some(outcome) = self.poll_state() {
                return outcome;
            }
            // Register interest, then look again: an add or a shutdown that
            // happens after this second look wakes the registered waiter.
            let mut notified = pin!(self.shared.item_ready.notified());
            notified.as_mut().enable();
            if let Some(outcome) = self.poll_state() {
                return outcome;
            }
            notified.await;
        }
    }

    /// `Some(Some(item))` if an item was taken, `Some(None)` if shut down and
    /// empty, `None` if the caller has to wait.
    fn poll_state(&self) -> Option<Option<T>> {
        let mut state = self.shared.state.lock();
        if let Some(item) = take_next(&mut state) {
            return Some(Some(item));
        }
        state.shutting_down.then_some(None)
    }

    /// Takes the next item without waiting, if one is queued right now.
    ///
    /// Like [`get`](Self::get), the item is then processing until `done`.
    pub fn try_get(&self) -> Option<T> {
        take_next(&mut self.shared.state.lock())
    }

    /// Marks `item` as no longer being processed.
    ///
    /// If it was added again meanwhile, it goes back to the tail of the queue.
    pub fn done(&self, item: &T) {
        let mut state = self.shared.state.lock();
        if let Some(metrics) = state.metrics.as_mut() {
            metrics.done(item);
        }
        if state.processing.take(item).is_none() {
            return;
        }
        if state.dirty.contains(item) {
            state.queue.push_back(item.clone());
            drop(state);
            self.shared.item_ready.notify_one();
        } else if state.processing.is_empty() {
            drop(state);
            self.shared.drained.notify_waiters();
        }
    }

    /// Number of items waiting to be handed out (not counting items being
    /// processed, nor delayed items of a delaying queue).
    pub fn len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    /// Whether no item is waiting to be handed out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting new items; waiting `get` calls return once the queue is
    /// empty. Also releases a pending [`shutdown_with_drain`](Self::shutdown_with_drain).
    pub fn shutdown(&self) {
        {
            let mut state = self.shared.state.lock();
            state.shutting_down = true;
            state.drain = false;
        }
        self.shared.item_ready.notify_waiters();
        self.shared.drained.notify_waiters();
        self.shared.stop_ticker.notify_one();
    }

    /// Like [`shutdown`](Self::shutdown), then waits until every item handed
    /// out has been marked `done` — or until `shutdown` is called.
    ///
    /// Workers must keep calling `get`/`done` for this to return.
    pub async fn shutdown_with_drain(&self) {
        self.begin_drain();
        self.wait_drained().await;
    }

    /// The synchronous half of `shutdown_with_drain`: flags the shutdown.
    pub(crate) fn begin_drain(&self) {
        {
            let mut state = self.shared.state.lock();
            state.shutting_down = true;
            state.drain = true;
        }
        self.shared.item_ready.notify_waiters();
    }

    /// Waits until nothing is processing, or a plain `shutdown` cancels the drain.
    pub(crate) async fn wait_drained(&self) {
        loop {
            let mut notified = pin!(self.shared.drained.notified());
            notified.as_mut().enable();
            {
                let state = self.shared.state.lock();
                if state.processing.is_empty() || !state.drain {
                    break;
                }
            }
            notified.await;
        }
        self.shared.stop_ticker.notify_one();
    }

    /// Whether `shutdown` or `shutdown_with_drain` has been called.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }
}

/// The add rules; returns whether the item was pushed to the queue (a waiter
/// must then be notified).
fn add_locked<T: QueueItem>(state: &mut State<T>, item: T) -> bool {
    if state.shutting_down || state.dirty.contains(&item) {
        return false;
    }
    if let Some(metrics) = state.metrics.as_mut() {
        metrics.add(&item);
    }
    if state.processing.contains(&item) {
        state.dirty.insert(item);
        return false;
    }
    state.dirty.insert(item.clone());
    state.queue.push_back(item);
    true
}

fn take_next<T: QueueItem>(state: &mut State<T>) -> Option<T> {
    let item = state.queue.pop_front()?;
    if let Some(metrics) = state.metrics.as_mut() {
        metrics.get(&item);
    }
    // Move the dirty set's copy into the processing set: no clone needed.
    let key = state.dirty.take(&item).unwrap_or_else(|| item.clone());
    state.processing.insert(key);
    Some(item)
}

/// Refreshes the unfinished-work gauges every `period` (500 ms) until shutdown.
fn spawn_unfinished_work_ticker<T: QueueItem>(shared: &Arc<Shared<T>>, period: Duration) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak: Weak<Shared<T>> = Arc::downgrade(shared);
    let stop = shared.stop_ticker.clone();
    runtime.spawn(async move {
        let mut ticker = tokio::time::interval(period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticker.tick().await;
        loop {
            tokio::select! {
                _ = ticker.tick() => {}
                _ = stop.notified() => return,
            }
            let Some(shared) = weak.upgrade() else {
                return;
            };
            let state = shared.state.lock();
            if state.shutting_down {
                return;
            }
            if let Some(metrics) = state.metrics.as_ref() {
                metrics.update_unfinished_work();
            }
        }
    });
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
