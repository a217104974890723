//! The per-item and combining rate limiters of client-go
//! (`util/workqueue/default_rate_limiters.go`) and the default limiters.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::time::Duration;

use parking_lot::Mutex;

use crate::bucket_rate_limiter::BucketRateLimiter;
use crate::rate_limiter::RateLimiter;

/// The limiter kube-controller-manager's controllers use: the maximum of a
/// per-item exponential backoff (5 ms doubling up to 1000 s) and an overall
/// token bucket (10 qps, burst 100).
///
/// One key failing repeatedly waits 5 ms, 10 ms, 20 ms, … 655.36 s (18th
/// failure), then 1000 s from the 19th failure on.
pub fn default_controller_rate_limiter<T: Eq + Hash + Clone + Send + Sync + 'static>()
-> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}

/// Per-item exponential backoff from 1 ms up to 1000 s.
pub fn default_item_based_rate_limiter<T: Eq + Hash + Clone>()
-> ItemExponentialFailureRateLimiter<T> {
    ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1000))
}

/// Per-item failure counter shared by the item limiters (foldhash: workers ask for
/// `num_requeues` on every sync, so the map is on the hot path).
struct Failures<T>(Mutex<HashMap<T, usize, foldhash::fast::RandomState>>);

impl<T: Eq + Hash + Clone> Failures<T> {
    fn new() -> Self {
        Self(Mutex::new(HashMap::default()))
    }

    /// Returns the count before this failure, then records it.
    fn record(&self, item: &T) -> usize {
        let mut failures = self.0.lock();
        match failures.get_mut(item) {
            Some(n) => {
                let before = *n;
                *n = n.saturating_add(1);
                before
            }
            None => {
                failures.insert(item.clone(), 1);
                0
            }
        }
    }

    fn get(&self, item: &T) -> usize {
        self.0.lock().get(item).copied().unwrap_or(0)
    }

    fn forget(&self, item: &T) {
        self.0.lock().remove(item);
    }

    fn len(&self) -> usize {
        self.0.lock().len()
    }
}

/// `base · 2^failures`, capped at `max` (client-go `ItemExponentialFailureRateLimiter`).
///
/// The power is computed in floating point, so large failure counts saturate
/// at `max` instead of overflowing.
pub struct ItemExponentialFailureRateLimiter<T> {
    base_delay: Duration,
    max_delay: Duration,
    failures: Failures<T>,
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base_delay", &self.base_delay)
            .field("max_delay", &self.max_delay)
            .finish()
    }
}

impl<T: Eq + Hash + Clone> ItemExponentialFailureRateLimiter<T> {
    /// Backoff starting at `base_delay`, doubling per failure, at most `max_delay`.
    pub fn new(base_delay: Duration, max_delay: Duration) -> Self {
        Self {
            base_delay,
            max_delay,
            failures: Failures::new(),
        }
    }

    /// Number of items with recorded failures.
    pub fn tracked_items(&self) -> usize {
        self.failures.len()
    }
}

/// `base · 2^exp` with Go's overflow rules: above `i64::MAX` ns → `max`.
fn exponential_backoff(base: Duration, max: Duration, exp: usize) -> Duration {
    // 2^1100 is already infinite in f64; clamping keeps the cast exact.
    let exp = exp.min(1100) as i32;
    let backoff = base.as_nanos() as f64 * 2f64.powi(exp);
    if backoff.is_nan() || backoff > i64::MAX as f64 {
        return max;
    }
    let calculated = Duration::from_nanos(backoff as u64);
    calculated.min(max)
}

impl<T: Eq + Hash + Clone + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = self.failures.record(item);
        exponential_backoff(self.base_delay, self.max_delay, exp)
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item)
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.get(item)
    }
}

/// `fast` for the first `max_fast_attempts` failures of an item, then `slow`
/// (client-go `ItemFastSlowRateLimiter`).
pub struct ItemFastSlowRateLimiter<T> {
    fast_delay: Duration,
    slow_delay: Duration,
    max_fast_attempts: usize,
    failures: Failures<T>,
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast_delay", &self.fast_delay)
            .field("slow_delay", &self.slow_delay)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .finish()
    }
}

impl<T: Eq + Hash + Clone> ItemFastSlowRateLimiter<T> {
    /// `fast_delay` for attempts `1..=max_fast_attempts`, then `slow_delay`.
    pub fn new(fast_delay: Duration, slow_delay: Duration, max_fast_attempts: usize) -> Self {
        Self {
            fast_delay,
            slow_delay,
            max_fast_attempts,
            failures: Failures::new(),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let attempts = self.failures.record(item).saturating_add(1);
        if attempts <= self.max_fast_attempts {
            self.fast_delay
        } else {
            self.slow_delay
        }
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item)
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.get(item)
    }
}

/// The worst (longest) delay of several limiters (client-go `MaxOfRateLimiter`).
///
/// Every limiter is asked on each `when`, so each records the failure.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// Combines `limiters`.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .fold(Duration::ZERO, Duration::max)
    }

    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// Caps another limiter's delay at `max_delay` (client-go `WithMaxWaitRateLimiter`).
pub struct WithMaxWaitRateLimiter<T> {
    limiter: Box<dyn RateLimiter<T>>,
    max_delay: Duration,
}

impl<T> fmt::Debug for WithMaxWaitRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithMaxWaitRateLimiter")
            .field("max_delay", &self.max_delay)
            .finish()
    }
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// `limiter`'s delays, but never more than `max_delay`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>, max_delay: Duration) -> Self {
        Self { limiter, max_delay }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_delay)
    }

    fn forget(&self, item: &T) {
        self.limiter.forget(item)
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}

#[cfg(test)]
#[path = "default_rate_limiters_tests.rs"]
mod tests;
