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

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::pin::{Pin, pin};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::sync::Notify;

// Through `super`, so that the model test can compile this file against its own `primitives`.
use super::item_states::{DIRTY, ItemStates, PROCESSING, Pinned, RECENT, SWEEP_PERIOD_MIN, Times};
use super::primitives::Mutex;
use crate::metrics::{MetricsProvider, QueueMetrics, resolve_provider};
use crate::parked_workers::ParkedWorkers;

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

/// Everything behind the queue's lock.
///
/// # Why one mutex, as client-go, plus lock-free reads of the dirty flag
///
/// Every change reads and writes the FIFO and the dirty/processing flags together, and
/// holds the lock for a few steps, so a single short-held mutex (client-go's `sync.Cond`
/// lock) beats finer-grained structures (see `primitives.rs` for which mutex). The parked workers
/// live under the same lock ([`ParkedWorkers`]), so `add` decides whom to wake without touching
/// another lock. The one operation that changes nothing, an add of an item already dirty,
/// is answered without the lock from [`ItemStates`] (see there why that is exact); under
/// churn it is most adds. The flags' map is read outside the lock by `get` and `done` too
/// (its lookups are the longest part of either), so the lock covers the FIFO, the counters
/// and the flag changes only.
struct State<T> {
    /// Items waiting to be handed out, in order; each is dirty and not processing.
    queue: VecDeque<T>,
    /// Number of items that are processing.
    processing: usize,
    /// Workers waiting in `get`.
    parked: ParkedWorkers,
    shutting_down: bool,
    drain: bool,
    /// Number of item states, and of those idle (neither dirty nor processing).
    tracked: usize,
    idle: usize,
    /// Items done since the last sweep of idle states, and how many make the next one run
    /// (`max(1024, states left by the last sweep)`).
    dones_since_sweep: usize,
    sweep_period: usize,
}

impl<T: QueueItem> State<T> {
    /// The add rules; returns whether the item was pushed to the FIFO (a parked worker
    /// must then be woken).
    fn add(&mut self, items: &Pinned<'_, T>, metrics: Option<&QueueMetrics>, item: T) -> bool {
        if self.shutting_down {
            return false;
        }
        let times = || {
            let mut times = Times::default();
            if let Some(metrics) = metrics {
                metrics.add(&mut times.added_at);
            }
            times
        };
        let Some(state) = items.insert_dirty(item.clone(), times) else {
            self.tracked += 1;
            self.queue.push_back(item);
            return true;
        };
        // Already tracked: dirty (nothing to do), processing (becomes dirty, and `done`
        // queues it again) or idle (queued now, as a new item).
        let flags = state.flags();
        if flags & DIRTY != 0 {
            return false;
        }
        if let Some(metrics) = metrics {
            metrics.add(&mut state.times.lock().added_at);
        }
        if flags & PROCESSING != 0 {
            state.set_flags(PROCESSING | DIRTY);
            return false;
        }
        state.set_flags(DIRTY);
        self.idle -= 1;
        self.queue.push_back(item);
        true
    }

    /// Takes the next queued item; the caller then marks it processing with [`start`].
    fn take_next(&mut self) -> Option<T> {
        let item = self.queue.pop_front()?;
        self.processing += 1;
        Some(item)
    }
}

/// Marks an item just taken from the FIFO as processing (no longer dirty), after the queue's
/// lock is released: until then its flags still say dirty, which is true of it for every
/// add that reads them (such an add is covered by this get).
fn start<T: QueueItem>(shared: &Shared<T>, item: &T) {
    let items = shared.items.pin();
    if let Some(state) = items.get(item) {
        if let Some(metrics) = &shared.metrics {
            let times = &mut *state.times.lock();
            metrics.get(&mut times.added_at, &mut times.started_at);
        }
        state.start_processing();
    }
}

struct Shared<T> {
    name: String,
    /// The flags of every item that is dirty or processing: changed under `state`'s lock,
    /// read without it by `add`'s fast path.
    items: ItemStates<T>,
    state: Mutex<State<T>>,
    metrics: Option<QueueMetrics>,
    /// Signalled when `processing` becomes empty during a drain, or when a forced
    /// shutdown cancels a drain.
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
            .field("processing", &state.processing)
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
            items: ItemStates::new(),
            state: Mutex::new(State {
                queue: VecDeque::new(),
                processing: 0,
                parked: ParkedWorkers::new(),
                shutting_down: false,
                drain: false,
                tracked: 0,
                idle: 0,
                dones_since_sweep: 0,
                sweep_period: SWEEP_PERIOD_MIN,
            }),
            metrics,
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
        let items = self.shared.items.pin();
        if items.is_dirty(&item) {
            return;
        }
        self.add_locked(&items, item);
    }

    /// Like [`add`](Self::add), cloning `item` only if the queue has to keep it: an item
    /// that is already dirty costs no clone (and, for `Arc` keys, no reference count).
    pub fn add_ref(&self, item: &T) {
        let items = self.shared.items.pin();
        if items.is_dirty(item) {
            return;
        }
        self.add_locked(&items, item.clone());
    }

    /// The locked half of `add`.
    fn add_locked(&self, items: &Pinned<'_, T>, item: T) {
        let mut state = self.shared.state.lock();
        if state.add(items, self.shared.metrics.as_ref(), item) {
            let waker = state.parked.notify_one();
            drop(state);
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }

    /// Adds several items under one lock acquisition (used by the delaying
    /// queue's timer task); same semantics as calling [`add`](Self::add) for each.
    pub(crate) fn add_batch(&self, items: impl IntoIterator<Item = T>) {
        let wakers: Vec<Waker> = {
            let pinned = self.shared.items.pin();
            let mut state = self.shared.state.lock();
            let mut pushed = 0usize;
            for item in items {
                pushed += usize::from(state.add(&pinned, self.shared.metrics.as_ref(), item));
            }
            (0..pushed)
                .map_while(|_| state.parked.notify_one())
                .collect()
        };
        wakers.into_iter().for_each(Waker::wake);
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
        Get {
            shared: &self.shared,
            waiter: None,
        }
        .await
    }

    /// Takes the next item without waiting, if one is queued right now.
    ///
    /// Like [`get`](Self::get), the item is then processing until `done`.
    pub fn try_get(&self) -> Option<T> {
        let item = self.shared.state.lock().take_next()?;
        start(&self.shared, &item);
        Some(item)
    }

    /// Marks `item` as no longer being processed.
    ///
    /// If it was added again meanwhile, it goes back to the tail of the queue.
    pub fn done(&self, item: &T) {
        // Look the state up before taking the lock: the item is processing, so nobody else
        // removes its state meanwhile (and a caller that is not processing it finds the
        // flags say so under the lock, and nothing happens).
        let items = self.shared.items.pin();
        let Some(tracked) = items.get(item) else {
            return;
        };
        let mut guard = self.shared.state.lock();
        let state = &mut *guard;
        let flags = tracked.flags();
        if flags & PROCESSING == 0 {
            return;
        }
        if let Some(metrics) = &self.shared.metrics {
            metrics.done(&mut tracked.times.lock().started_at);
        }
        state.processing -= 1;
        if flags & DIRTY != 0 {
            // Added again meanwhile: back to the tail.
            tracked.set_flags(DIRTY);
            state.queue.push_back(item.clone());
            let waker = state.parked.notify_one();
            drop(guard);
            if let Some(waker) = waker {
                waker.wake();
            }
            return;
        }
        tracked.set_flags(RECENT);
        state.idle += 1;
        state.dones_since_sweep += 1;
        if state.dones_since_sweep >= state.sweep_period {
            let removed = items.sweep();
            state.tracked -= removed;
            state.idle -= removed;
            state.dones_since_sweep = 0;
            state.sweep_period = SWEEP_PERIOD_MIN.max(state.tracked);
        }
        // Only a drain waits for `processing` to empty (and it sets `drain` under this
        // lock before looking), so the common case touches no other synchronisation.
        if state.processing == 0 && state.drain {
            drop(guard);
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
        let wakers = {
            let mut state = self.shared.state.lock();
            state.shutting_down = true;
            state.drain = false;
            state.parked.notify_all()
        };
        wakers.into_iter().for_each(Waker::wake);
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
        let wakers = {
            let mut state = self.shared.state.lock();
            state.shutting_down = true;
            state.drain = true;
            state.parked.notify_all()
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Waits until nothing is processing, or a plain `shutdown` cancels the drain.
    pub(crate) async fn wait_drained(&self) {
        loop {
            let mut notified = pin!(self.shared.drained.notified());
            notified.as_mut().enable();
            {
                let state = self.shared.state.lock();
                if state.processing == 0 || !state.drain {
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

/// The future of [`Queue::get`]: takes an item, or parks in the queue's [`ParkedWorkers`].
struct Get<'a, T> {
    shared: &'a Shared<T>,
    /// The wait-list slot, once parked.
    waiter: Option<usize>,
}

impl<T: QueueItem> Future for Get<'_, T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        let mut state = this.shared.state.lock();
        let outcome = match state.take_next() {
            Some(item) => Some(item),
            None if state.shutting_down => None,
            None => {
                state.parked.park(&mut this.waiter, cx.waker());
                return Poll::Pending;
            }
        };
        if let Some(id) = this.waiter.take() {
            // Any wake-up this worker got is used up by this return.
            state.parked.release(id);
        }
        drop(state);
        if let Some(item) = &outcome {
            start(this.shared, item);
        }
        Poll::Ready(outcome)
    }
}

impl<T> Drop for Get<'_, T> {
    fn drop(&mut self) {
        let Some(id) = self.waiter.take() else {
            return;
        };
        let mut state = self.shared.state.lock();
        // Cancelled after being woken for an item: pass the wake-up on.
        let waker = if state.parked.release(id) {
            state.parked.notify_one()
        } else {
            None
        };
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
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
            drop(state);
            if let Some(metrics) = shared.metrics.as_ref() {
                metrics.update_unfinished_work(shared.items.processing_since().into_iter());
            }
        }
    });
}
