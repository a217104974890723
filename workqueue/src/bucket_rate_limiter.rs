//! The overall (not per-item) token-bucket limiter (client-go `util/workqueue/default_rate_limiters.go`, `TypedBucketRateLimiter`).
//!
//! Upstream wraps `golang.org/x/time/rate.Limiter` and returns
//! `Reserve().Delay()`: each call takes one token, even when none is left, and
//! the deficit is paid by later callers — reservations accumulate and are never
//! cancelled. So with 10 qps and burst 100, the 101st call within an instant
//! waits 100 ms, the 102nd 200 ms, and so on.
//!
//! This is a small hand-written token bucket rather than `governor`: governor's
//! GCRA `check()` either admits a cell or returns `NotUntil` *without* recording
//! anything, so the "reserve a future slot and let the deficit accumulate"
//! behaviour cannot be expressed with it (its `until_ready` waits instead of
//! returning the delay). The bucket below follows `rate.Limiter`'s arithmetic:
//! tokens refill at `qps` per second up to `burst`; a reservation subtracts one
//! and, if the balance is negative, waits `-balance / qps`.

use std::fmt;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::rate_limiter::RateLimiter;

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Option<Instant>,
}

/// A token bucket shared by all items: `qps` tokens per second, at most `burst`.
///
/// [`when`](RateLimiter::when) is zero while tokens remain, else the delay of
/// the reserved slot. [`num_requeues`](RateLimiter::num_requeues) is always 0
/// and [`forget`](RateLimiter::forget) does nothing, as upstream.
///
/// Degenerate settings follow `rate.Limiter`: an infinite `qps` never delays;
/// `burst == 0`, or `qps <= 0` once the initial burst is spent, yields
/// [`Duration::MAX`] (the item is never retried).
pub struct BucketRateLimiter {
    qps: f64,
    burst: usize,
    bucket: Mutex<Bucket>,
}

impl fmt::Debug for BucketRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BucketRateLimiter")
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .finish()
    }
}

impl BucketRateLimiter {
    /// A bucket refilled at `qps` tokens per second, holding at most `burst`
    /// (initially full).
    pub fn new(qps: f64, burst: usize) -> Self {
        Self {
            qps,
            burst,
            bucket: Mutex::new(Bucket {
                tokens: 0.0,
                last: None,
            }),
        }
    }

    /// Reserves one token now and returns how long until it is available.
    pub fn reserve(&self) -> Duration {
        self.reserve_at(Instant::now())
    }

    fn reserve_at(&self, now: Instant) -> Duration {
        if self.qps.is_infinite() && self.qps > 0.0 {
            return Duration::ZERO;
        }
        if self.burst == 0 {
            return Duration::MAX;
        }
        let burst = self.burst as f64;
        let mut bucket = self.bucket.lock();
        let available = match bucket.last {
            None => burst,
            Some(last) => {
                let elapsed = now.saturating_duration_since(last).as_secs_f64();
                let refill = if self.qps > 0.0 {
                    elapsed * self.qps
                } else {
                    0.0
                };
                (bucket.tokens + refill).min(burst)
            }
        };
        let balance = available - 1.0;
        let wait = if balance >= 0.0 {
            Duration::ZERO
        } else if self.qps > 0.0 {
            // Truncated to whole nanoseconds, as Go's time.Duration conversion.
            let nanos = (-balance / self.qps) * 1e9;
            if nanos >= u64::MAX as f64 {
                Duration::MAX
            } else {
                Duration::from_nanos(nanos as u64)
            }
        } else {
            // No refill and nothing left: the reservation can never be met,
            // and rate.Limiter does not record it.
            return Duration::MAX;
        };
        bucket.tokens = balance;
        bucket.last = Some(now.max(bucket.last.unwrap_or(now)));
        wait
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// 10 qps, burst 100: 100 free slots, then +100 ms per reservation, accumulating.
    #[test]
    fn burst_then_accumulating_reservations() {
        let limiter = BucketRateLimiter::new(10.0, 100);
        let t0 = Instant::now();
        for i in 0..100 {
            assert_eq!(limiter.reserve_at(t0), Duration::ZERO, "call {i}");
        }
        assert_eq!(limiter.reserve_at(t0), ms(100));
        assert_eq!(limiter.reserve_at(t0), ms(200));
        assert_eq!(limiter.reserve_at(t0), ms(300));
        // 1 s later 10 tokens came back, but the debt of 3 is still owed.
        assert_eq!(limiter.reserve_at(t0 + ms(1000)), Duration::ZERO);
        for _ in 0..5 {
            limiter.reserve_at(t0 + ms(1000));
        }
        // balance: 10 - 3 - 6 = 1 left
        assert_eq!(limiter.reserve_at(t0 + ms(1000)), Duration::ZERO);
        assert_eq!(limiter.reserve_at(t0 + ms(1000)), ms(100));
    }

    /// The bucket refills up to the burst only.
    #[test]
    fn refill_capped_at_burst() {
        let limiter = BucketRateLimiter::new(1.0, 2);
        let t0 = Instant::now();
        assert_eq!(limiter.reserve_at(t0), Duration::ZERO);
        assert_eq!(limiter.reserve_at(t0), Duration::ZERO);
        assert_eq!(limiter.reserve_at(t0), ms(1000));
        // After an hour the bucket is full again (2 tokens), not 3600.
        let later = t0 + Duration::from_secs(3600);
        assert_eq!(limiter.reserve_at(later), Duration::ZERO);
        assert_eq!(limiter.reserve_at(later), Duration::ZERO);
        assert_eq!(limiter.reserve_at(later), ms(1000));
    }

    #[test]
    fn degenerate_settings() {
        let t0 = Instant::now();
        let inf = BucketRateLimiter::new(f64::INFINITY, 0);
        assert_eq!(inf.reserve_at(t0), Duration::ZERO);
        let zero_burst = BucketRateLimiter::new(10.0, 0);
        assert_eq!(zero_burst.reserve_at(t0), Duration::MAX);
        let no_refill = BucketRateLimiter::new(0.0, 1);
        assert_eq!(no_refill.reserve_at(t0), Duration::ZERO);
        assert_eq!(no_refill.reserve_at(t0 + ms(10_000)), Duration::MAX);
        let limiter = BucketRateLimiter::new(10.0, 1);
        assert_eq!(RateLimiter::<&str>::num_requeues(&limiter, &"x"), 0);
    }
}
