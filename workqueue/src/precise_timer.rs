//! The delaying queue's precise timer: a thread of its own that parks until the next due
//! time and moves the due items into the queue (the timer of client-go's `waitingLoop`,
//! `util/workqueue/delaying_queue.go`).
//!
//! tokio's timer wheel has millisecond ticks and fires a deadline at the end of the tick
//! that holds it, so a delayed item comes out 0–1 ms late before any queueing (Go's runtime
//! timers keep nanoseconds). A parked thread's timeout is kept by the kernel's
//! high-resolution timers, to about 50 µs (the default timer slack). The cost is a
//! wake-up of this thread per due time, and a wake-up of a worker per batch of items moved,
//! so the thread wakes at most every [`MIN_INTERVAL`] and moves everything due by then.
//!
//! Only on a multi-thread runtime: a current-thread runtime's clock can be paused and
//! advanced (tests do), which a thread sleeping on the real clock cannot follow, and a
//! wake-up from outside the runtime would race its automatic advance. There, and between
//! this thread's wake-ups everywhere, the tokio task of [`DelayingQueue`](crate::DelayingQueue)
//! moves the items, with tokio's resolution.
//!
//! The thread holds the queue only weakly: it ends at shutdown or when the last handle is
//! dropped, both of which unpark it.

use std::sync::Weak;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::time::Instant;

/// Shortest time between two wake-ups of the thread: items due within it of each other go
/// out together, which bounds the wake-ups (and the CPU they cost) under a stream of
/// delays, at the price of up to this much lateness.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_micros(500);

/// Longest park without news (a new earliest item, shutdown and the last handle dropped all
/// unpark the thread; this only bounds how long a missed unpark could go unnoticed).
const MAX_PARK: Duration = Duration::from_secs(10);

/// What the thread drives: the delaying queue's shared state (implemented in
/// `delaying_queue.rs`, so that this file needs nothing from it).
pub(crate) trait DueItems: Send + Sync + 'static {
    /// What the queue holds.
    type Item: Send;

    /// Whether the queue is shutting down (the thread then ends).
    fn is_shutting_down(&self) -> bool;

    /// Drops every pending item (at shutdown).
    fn clear(&self);

    /// Moves the items due at `now` into the queue, through `batch` (empty on entry and on
    /// return); returns the next due time.
    fn move_ready(&self, now: Instant, batch: &mut Vec<Self::Item>) -> Option<Instant>;
}

/// Starts the timer thread of a delaying queue; `None` outside a multi-thread tokio runtime
/// or if no thread could be started (the tokio task then moves every item).
pub(crate) fn spawn<S: DueItems>(shared: Weak<S>) -> Option<JoinHandle<()>> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    if runtime.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return None;
    }
    std::thread::Builder::new()
        .name("kcm-wq-timer".into())
        .stack_size(256 * 1024)
        .spawn(move || run(&shared))
        .ok()
}

fn run<S: DueItems>(shared: &Weak<S>) {
    let mut batch = Vec::new();
    loop {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        if strong.is_shutting_down() {
            strong.clear();
            return;
        }
        let now = Instant::now();
        let next = strong.move_ready(now, &mut batch);
        drop(strong);
        // An unpark that came since the heap was read is kept by `park_timeout`, which
        // then returns at once.
        let wait = next.map_or(MAX_PARK, |at| {
            at.saturating_duration_since(now)
                .clamp(MIN_INTERVAL, MAX_PARK)
        });
        std::thread::park_timeout(wait);
    }
}
