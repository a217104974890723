//! The rate-limiting queue (client-go `util/workqueue/rate_limiting_queue.go`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::default_rate_limiters::default_controller_rate_limiter;
use crate::delaying_queue::DelayingQueue;
use crate::metrics::MetricsProvider;
use crate::queue::{Queue, QueueConfig, QueueItem};
use crate::rate_limiter::RateLimiter;

/// A [`DelayingQueue`] whose retries are spaced by a [`RateLimiter`].
///
/// This is the queue controllers use: a worker takes a key, syncs it, and on
/// success calls [`forget`](Self::forget); on failure
/// [`add_rate_limited`](Self::add_rate_limited); in both cases
/// [`done`](Self::done). Cheap to clone (shared handle); must be created inside
/// a tokio runtime.
///
/// # Example
///
/// ```
/// use kcm_workqueue::RateLimitingQueue;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // Named "deployment" for metrics; the default controller rate limiter.
/// let queue: RateLimitingQueue<String> = RateLimitingQueue::builder().name("deployment").build();
/// queue.add("default/web".to_string());
///
/// let mut attempts = 0;
/// while let Some(key) = queue.get().await {
///     attempts += 1;
///     let synced = attempts == 3; // pretend the first two syncs fail
///     if synced {
///         queue.forget(&key);
///         queue.done(&key);
///         break;
///     }
///     queue.add_rate_limited(key.clone()); // waits 5 ms, then 10 ms
///     assert_eq!(queue.num_requeues(&key), attempts);
///     queue.done(&key);
/// }
/// assert_eq!(attempts, 3);
/// queue.shutdown();
/// # }
/// ```
pub struct RateLimitingQueue<T> {
    delaying: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            delaying: self.delaying.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

impl<T> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("delaying", &self.delaying)
            .finish()
    }
}

/// Builder of a [`RateLimitingQueue`] (client-go `RateLimitingQueueConfig`).
pub struct RateLimitingQueueBuilder<T> {
    name: String,
    limiter: Option<Arc<dyn RateLimiter<T>>>,
    metrics_provider: Option<Arc<dyn MetricsProvider>>,
}

impl<T> fmt::Debug for RateLimitingQueueBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueueBuilder")
            .field("name", &self.name)
            .field("limiter", &self.limiter.is_some())
            .field("metrics_provider", &self.metrics_provider.is_some())
            .finish()
    }
}

impl<T: QueueItem> RateLimitingQueueBuilder<T> {
    /// Names the queue; the name is the `name` label of its metrics. Unnamed
    /// queues have no metrics.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The rate limiter (default: [`default_controller_rate_limiter`]).
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<T> + 'static) -> Self {
        self.limiter = Some(Arc::new(limiter));
        self
    }

    /// A rate limiter already behind an `Arc` (to share or inspect it).
    pub fn shared_rate_limiter(mut self, limiter: Arc<dyn RateLimiter<T>>) -> Self {
        self.limiter = Some(limiter);
        self
    }

    /// The metrics provider (default: the global one from [`set_provider`](crate::set_provider)).
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }

    /// Creates the queue and starts its timer task.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn build(self) -> RateLimitingQueue<T> {
        let (config, limiter) = self.into_parts();
        RateLimitingQueue {
            delaying: DelayingQueue::with_config(config),
            limiter,
        }
    }

    fn into_parts(self) -> (QueueConfig, Arc<dyn RateLimiter<T>>) {
        let limiter = self
            .limiter
            .unwrap_or_else(|| Arc::new(default_controller_rate_limiter::<T>()));
        let config = QueueConfig {
            name: self.name,
            metrics_provider: self.metrics_provider,
        };
        (config, limiter)
    }
}

impl<T: QueueItem> RateLimitingQueue<T> {
    /// An unnamed queue with the given rate limiter.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::builder().rate_limiter(limiter).build()
    }

    /// Starts configuring a queue.
    pub fn builder() -> RateLimitingQueueBuilder<T> {
        RateLimitingQueueBuilder {
            name: String::new(),
            limiter: None,
            metrics_provider: None,
        }
    }

    /// Adds `item` after the delay the rate limiter decides (recording a failure).
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.delaying.add_after(item, delay);
    }

    /// Clears `item`'s failure history. Does not remove it from the queue.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item)
    }

    /// How many failures of `item` the rate limiter has recorded.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }

    /// See [`DelayingQueue::add_after`].
    pub fn add_after(&self, item: T, delay: Duration) {
        self.delaying.add_after(item, delay)
    }

    /// The underlying delaying queue (shares state with this handle).
    pub fn delaying_queue(&self) -> &DelayingQueue<T> {
        &self.delaying
    }

    /// The underlying basic queue (shares state with this handle).
    pub fn queue(&self) -> &Queue<T> {
        self.delaying.queue()
    }

    /// See [`Queue::add`].
    pub fn add(&self, item: T) {
        self.delaying.add(item)
    }

    /// See [`Queue::get`].
    pub async fn get(&self) -> Option<T> {
        self.delaying.get().await
    }

    /// See [`Queue::try_get`].
    pub fn try_get(&self) -> Option<T> {
        self.delaying.try_get()
    }

    /// See [`Queue::done`].
    pub fn done(&self, item: &T) {
        self.delaying.done(item)
    }

    /// See [`Queue::len`]; delayed items are not counted.
    pub fn len(&self) -> usize {
        self.delaying.len()
    }

    /// See [`Queue::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.delaying.is_empty()
    }

    /// See [`DelayingQueue::shutdown`].
    pub fn shutdown(&self) {
        self.delaying.shutdown()
    }

    /// See [`DelayingQueue::shutdown_with_drain`].
    pub async fn shutdown_with_drain(&self) {
        self.delaying.shutdown_with_drain().await
    }

    /// See [`Queue::is_shutting_down`].
    pub fn is_shutting_down(&self) -> bool {
        self.delaying.is_shutting_down()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_rate_limiters::ItemExponentialFailureRateLimiter;
    use tokio::time::Instant;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Takes the pending entry of `item` out of the timer heap and returns its delay.
    fn next_wait(queue: &RateLimitingQueue<&'static str>, item: &'static str) -> Duration {
        match queue.delaying.take_waiting(&item) {
            Some(ready_at) => ready_at - Instant::now(),
            None => panic!("expected a waiting entry for {item}"),
        }
    }

    /// TestRateLimitingQueue: the waiting entries carry the limiter's delays.
    /// Upstream reads each entry off the timer goroutine's channel; here each
    /// entry is taken out of the timer heap (the paused clock never fires it).
    #[tokio::test(start_paused = true)]
    async fn test_rate_limiting_queue() {
        let queue = RateLimitingQueue::<&'static str>::new(ItemExponentialFailureRateLimiter::new(
            ms(1),
            Duration::from_secs(1),
        ));

        queue.add_rate_limited("one");
        assert_eq!(next_wait(&queue, "one"), ms(1));
        queue.add_rate_limited("one");
        assert_eq!(next_wait(&queue, "one"), ms(2));
        assert_eq!(queue.num_requeues(&"one"), 2);

        queue.add_rate_limited("two");
        assert_eq!(next_wait(&queue, "two"), ms(1));
        queue.add_rate_limited("two");
        assert_eq!(next_wait(&queue, "two"), ms(2));

        queue.forget(&"one");
        assert_eq!(queue.num_requeues(&"one"), 0);
        queue.add_rate_limited("one");
        assert_eq!(next_wait(&queue, "one"), ms(1));
    }

    /// End to end: a rate-limited item comes back after its delay; `forget`
    /// does not remove a waiting item.
    #[tokio::test(start_paused = true)]
    async fn add_rate_limited_end_to_end() {
        let queue: RateLimitingQueue<&str> = RateLimitingQueue::new(
            ItemExponentialFailureRateLimiter::new(ms(10), Duration::from_secs(1)),
        );
        let start = Instant::now();
        queue.add_rate_limited("a");
        queue.forget(&"a");
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(Instant::now() - start, ms(10));
        queue.done(&"a");
        queue.shutdown();
        assert_eq!(queue.get().await, None);
    }
}
