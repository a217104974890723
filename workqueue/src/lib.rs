//! Work queue, delaying queue, rate limiters and rate-limiting queue — client-go's
//! `util/workqueue`, in Rust, on tokio.
//!
//! * [`Queue`] — a deduplicating FIFO with client-go's dirty/processing rules:
//!   a key is never handed to two workers at once, and a key added while it is
//!   being processed is handed out again after [`Queue::done`].
//! * [`DelayingQueue`] — adds [`add_after`](DelayingQueue::add_after) (one
//!   timer task, earliest time wins per item).
//! * [`RateLimitingQueue`] — adds [`add_rate_limited`](RateLimitingQueue::add_rate_limited),
//!   [`forget`](RateLimitingQueue::forget) and
//!   [`num_requeues`](RateLimitingQueue::num_requeues) on top of a [`RateLimiter`].
//! * Rate limiters: [`ItemExponentialFailureRateLimiter`], [`BucketRateLimiter`],
//!   [`ItemFastSlowRateLimiter`], [`MaxOfRateLimiter`], [`WithMaxWaitRateLimiter`],
//!   and [`default_controller_rate_limiter`] (what kube-controller-manager uses).
//! * Metrics: a [`MetricsProvider`] hook (nothing is recorded by default, and
//!   unnamed queues never record), plus `PrometheusMetricsProvider` with the
//!   `prometheus` feature, exporting client-go's `workqueue_*` series.
//!
//! Items are any `Eq + Hash + Clone + Send + Sync + 'static` value ([`QueueItem`]);
//! controllers use `String` keys such as `"namespace/name"`. The crate does not
//! depend on kube.
//!
//! # Example: a controller worker loop
//!
//! ```
//! use kcm_workqueue::RateLimitingQueue;
//!
//! async fn sync(key: &str) -> Result<(), String> {
//!     if key.ends_with("broken") { Err(format!("{key} failed")) } else { Ok(()) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let queue: RateLimitingQueue<String> = RateLimitingQueue::builder().name("example").build();
//! let (tx, mut outcomes) = tokio::sync::mpsc::unbounded_channel();
//!
//! let worker = tokio::spawn({
//!     let queue = queue.clone();
//!     async move {
//!         while let Some(key) = queue.get().await {
//!             match sync(&key).await {
//!                 Ok(()) => {
//!                     queue.forget(&key);
//!                     tx.send(format!("synced {key}")).unwrap();
//!                 }
//!                 // Retry with per-key exponential backoff (5 ms, 10 ms, 20 ms), then give up.
//!                 Err(_) if queue.num_requeues(&key) < 3 => queue.add_rate_limited(key.clone()),
//!                 Err(err) => {
//!                     queue.forget(&key);
//!                     tx.send(format!("gave up: {err}")).unwrap();
//!                 }
//!             }
//!             queue.done(&key);
//!         }
//!     }
//! });
//!
//! for key in ["ns/a", "ns/broken", "ns/b", "ns/a"] {
//!     queue.add(key.to_string()); // the second "ns/a" collapses with the first
//! }
//! let mut seen = Vec::new();
//! for _ in 0..3 {
//!     seen.push(outcomes.recv().await.unwrap());
//! }
//! queue.shutdown_with_drain().await;
//! worker.await.unwrap();
//! seen.sort();
//! assert_eq!(seen, ["gave up: ns/broken failed", "synced ns/a", "synced ns/b"]);
//! # }
//! ```

//! # Differences from client-go
//!
//! * [`Queue::get`] is `async` and returns `Option<T>` (`None` = shut down and
//!   empty) instead of `(item, shutdown)`; it is cancel-safe. [`Queue::try_get`]
//!   never waits.
//! * [`Queue::done`] for an item that is not being processed does nothing
//!   (upstream would queue a dirty item a second time).
//! * No pluggable inner queue (`Touch`, priority queues) and no injectable
//!   clock: tokio's clock is used, which tests pause and advance.
//! * The delaying queue's callers insert into the timer heap themselves instead
//!   of sending over a 1000-entry channel, so `add_after` never blocks; there is
//!   no 10 s heartbeat (tokio timers do not miss deadlines).
//! * An add of an item that is already dirty does not take the queue's lock: the
//!   item's flags are read from a lock-free map (`item_states.rs` says why that is
//!   exact). [`Queue::add_ref`] adds by reference, cloning the item only if the
//!   queue has to keep it.
//! * The queue keeps an item's bookkeeping for a while after its last `done`
//!   (client-go deletes it at once), so a key added again soon finds it: it is
//!   swept after at most two periods of `max(1024, tracked items)` dones, and its
//!   memory is reclaimed after that (epoch-based, in batches).
//! * On a multi-thread runtime a delaying queue also has a timer thread of its own,
//!   which parks until the next due time (tokio's timers have millisecond ticks)
//!   and wakes at most every 0.5 ms; on a current-thread runtime, whose clock
//!   tests pause, its tokio task alone moves due items.
//! * `shutdown` signals the metrics refresh task but does not wait for it.
//! * Prometheus output is OpenMetrics text from `prometheus-client` (counter
//!   families are declared without `_total`; samples keep it).

mod bucket_rate_limiter;
mod default_rate_limiters;
mod delaying_queue;
mod item_states;
mod item_table;
mod metrics;
mod parked_workers;
mod precise_timer;
mod primitives;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue;
mod rate_limiter;
mod rate_limiting_queue;
mod timer_heap;

pub use bucket_rate_limiter::BucketRateLimiter;
pub use default_rate_limiters::{
    ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter, MaxOfRateLimiter,
    WithMaxWaitRateLimiter, default_controller_rate_limiter, default_item_based_rate_limiter,
};
pub use delaying_queue::DelayingQueue;
pub use metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric, set_provider,
};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusMetricsProvider;
pub use queue::{Queue, QueueConfig, QueueItem, UNFINISHED_WORK_UPDATE_PERIOD};
pub use rate_limiter::RateLimiter;
pub use rate_limiting_queue::{RateLimitingQueue, RateLimitingQueueBuilder};

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod proptests;
// Declared here, not in `queue.rs`, because the model test compiles `queue.rs` a second time.
#[cfg(test)]
mod queue_tests;
