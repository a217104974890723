//! Ports of upstream `util/workqueue/default_rate_limiters_test.go`.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// TestItemExponentialFailureRateLimiter
#[test]
fn test_item_exponential_failure_rate_limiter() {
    let limiter = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1));
    for expected in [1, 2, 4, 8, 16] {
        assert_eq!(limiter.when(&"one"), ms(expected));
    }
    assert_eq!(limiter.num_requeues(&"one"), 5);

    assert_eq!(limiter.when(&"two"), ms(1));
    assert_eq!(limiter.when(&"two"), ms(2));
    assert_eq!(limiter.num_requeues(&"two"), 2);

    limiter.forget(&"one");
    assert_eq!(limiter.num_requeues(&"one"), 0);
    assert_eq!(limiter.when(&"one"), ms(1));
}

/// TestItemExponentialFailureRateLimiterOverFlow
#[test]
fn test_item_exponential_failure_rate_limiter_over_flow() {
    let limiter = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1000));
    for _ in 0..5 {
        limiter.when(&"one");
    }
    assert_eq!(limiter.when(&"one"), ms(32));
    for _ in 0..1000 {
        limiter.when(&"overflow1");
    }
    assert_eq!(limiter.when(&"overflow1"), Duration::from_secs(1000));

    let hour = Duration::from_secs(3600);
    let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_secs(60), 1000 * hour);
    for _ in 0..2 {
        limiter.when(&"two");
    }
    assert_eq!(limiter.when(&"two"), Duration::from_secs(240));
    for _ in 0..1000 {
        limiter.when(&"overflow2");
    }
    assert_eq!(limiter.when(&"overflow2"), 1000 * hour);
}

/// Exponents far beyond f64's range still saturate at the cap.
#[test]
fn exponential_backoff_never_overflows() {
    let max = Duration::from_secs(1000);
    assert_eq!(exponential_backoff(ms(5), max, usize::MAX), max);
    assert_eq!(
        exponential_backoff(Duration::MAX, Duration::MAX, 0),
        Duration::MAX
    );
    assert_eq!(exponential_backoff(ms(5), max, 0), ms(5));
}

/// TestItemFastSlowRateLimiter
#[test]
fn test_item_fast_slow_rate_limiter() {
    let limiter = ItemFastSlowRateLimiter::new(ms(5), Duration::from_secs(10), 3);
    for expected in [
        ms(5),
        ms(5),
        ms(5),
        Duration::from_secs(10),
        Duration::from_secs(10),
    ] {
        assert_eq!(limiter.when(&"one"), expected);
    }
    assert_eq!(limiter.num_requeues(&"one"), 5);

    assert_eq!(limiter.when(&"two"), ms(5));
    assert_eq!(limiter.when(&"two"), ms(5));
    assert_eq!(limiter.num_requeues(&"two"), 2);

    limiter.forget(&"one");
    assert_eq!(limiter.num_requeues(&"one"), 0);
    assert_eq!(limiter.when(&"one"), ms(5));
}

/// TestMaxOfRateLimiter
#[test]
fn test_max_of_rate_limiter() {
    let limiter: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
        Box::new(ItemFastSlowRateLimiter::new(
            ms(5),
            Duration::from_secs(3),
            3,
        )),
        Box::new(ItemExponentialFailureRateLimiter::new(
            ms(1),
            Duration::from_secs(1),
        )),
    ]);
    for expected in [
        ms(5),
        ms(5),
        ms(5),
        Duration::from_secs(3),
        Duration::from_secs(3),
    ] {
        assert_eq!(limiter.when(&"one"), expected);
    }
    assert_eq!(limiter.num_requeues(&"one"), 5);

    assert_eq!(limiter.when(&"two"), ms(5));
    assert_eq!(limiter.when(&"two"), ms(5));
    assert_eq!(limiter.num_requeues(&"two"), 2);

    limiter.forget(&"one");
    assert_eq!(limiter.num_requeues(&"one"), 0);
    assert_eq!(limiter.when(&"one"), ms(5));
}

/// Upstream's test helper: `base` for the first `threshold` calls (any item), then `max`.
struct StepRateLimiter {
    count: AtomicUsize,
    threshold: usize,
    base_delay: Duration,
    max_delay: Duration,
}

impl<T> RateLimiter<T> for StepRateLimiter {
    fn when(&self, _: &T) -> Duration {
        let count = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        if count <= self.threshold {
            self.base_delay
        } else {
            self.max_delay
        }
    }
    fn forget(&self, _: &T) {}
    fn num_requeues(&self, _: &T) -> usize {
        0
    }
}

/// TestWithMaxWaitRateLimiter
#[test]
fn test_with_max_wait_rate_limiter() {
    let limiter: WithMaxWaitRateLimiter<usize> = WithMaxWaitRateLimiter::new(
        Box::new(StepRateLimiter {
            count: AtomicUsize::new(0),
            threshold: 100,
            base_delay: ms(5),
            max_delay: Duration::from_secs(1000),
        }),
        Duration::from_secs(500),
    );
    for i in 0..100 {
        assert_eq!(limiter.when(&i), ms(5), "call {i}");
    }
    for i in 100..200 {
        assert_eq!(limiter.when(&i), Duration::from_secs(500), "call {i}");
    }
}

/// The default controller limiter (client-go `DefaultTypedControllerRateLimiter`) for one
/// failing key, bucket untouched: 5 ms doubling per failure up to the 1,000 s cap.
#[test]
fn default_controller_rate_limiter_sequence() {
    let limiter = default_controller_rate_limiter::<String>();
    let key = "default/web".to_string();
    let mut expected_ms: Vec<u64> = (0..18).map(|n| 5u64 << n).collect();
    assert_eq!(expected_ms[17], 655_360);
    expected_ms.extend([1_000_000, 1_000_000, 1_000_000]);
    for (i, e) in expected_ms.iter().enumerate() {
        assert_eq!(limiter.when(&key), ms(*e), "failure {}", i + 1);
    }
    assert_eq!(limiter.num_requeues(&key), 21);
    limiter.forget(&key);
    assert_eq!(limiter.num_requeues(&key), 0);
    assert_eq!(limiter.when(&key), ms(5));
}

/// The bucket dominates once more than 100 failures happen at once.
#[tokio::test(start_paused = true)]
async fn default_controller_rate_limiter_bucket_dominates() {
    let limiter = default_controller_rate_limiter::<u32>();
    for i in 0..100 {
        assert_eq!(limiter.when(&i), ms(5));
    }
    assert_eq!(limiter.when(&100), ms(100));
    assert_eq!(limiter.when(&101), ms(200));
}

#[test]
fn default_item_based_rate_limiter_sequence() {
    let limiter = default_item_based_rate_limiter::<&str>();
    assert_eq!(limiter.when(&"x"), ms(1));
    assert_eq!(limiter.when(&"x"), ms(2));
    assert_eq!(limiter.tracked_items(), 1);
    limiter.forget(&"x");
    assert_eq!(limiter.tracked_items(), 0);
}
