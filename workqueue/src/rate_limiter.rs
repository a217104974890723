//! The rate limiter interface (client-go `util/workqueue/default_rate_limiters.go`, `TypedRateLimiter[T]`).

use std::sync::Arc;
use std::time::Duration;

/// Decides how long an item waits before it is retried.
///
/// Implementations are shared between tasks and use interior mutability.
pub trait RateLimiter<T>: Send + Sync {
    /// Records a failure of `item` and returns how long to wait before retrying it.
    fn when(&self, item: &T) -> Duration;
    /// Clears the failure history of `item` (called after it succeeded).
    fn forget(&self, item: &T);
    /// How many failures of `item` are recorded.
    fn num_requeues(&self, item: &T) -> usize;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}
