//! A small clock abstraction so time-dependent logic (expectation TTLs, event
//! correlation, pod availability) can be tested without sleeping.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use parking_lot::Mutex;

/// Source of "now" (wall-clock time, as Kubernetes timestamps are wall-clock).
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to; cheap to clone (clones share the time).
///
/// ```
/// use kcm_controller::clock::{Clock, FakeClock};
/// use std::time::Duration;
/// let clock = FakeClock::new(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
/// clock.step(Duration::from_secs(5));
/// assert_eq!(clock.now().as_second(), 5);
/// ```
#[derive(Debug, Clone)]
pub struct FakeClock {
    now: Arc<Mutex<Timestamp>>,
}

impl FakeClock {
    /// A fake clock starting at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// Sets the current time.
    pub fn set(&self, t: Timestamp) {
        *self.now.lock() = t;
    }

    /// Moves the clock forward by `d` (saturating at the maximum timestamp).
    pub fn step(&self, d: Duration) {
        let mut now = self.now.lock();
        let sd = SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX);
        *now = now.checked_add(sd).unwrap_or(Timestamp::MAX);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Timestamp {
        *self.now.lock()
    }
}

/// A shared clock handle.
pub type SharedClock = Arc<dyn Clock>;

/// The real clock as a [`SharedClock`].
pub fn real_clock() -> SharedClock {
    Arc::new(RealClock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_steps_and_sets() {
        let c = FakeClock::new(Timestamp::UNIX_EPOCH);
        let shared = c.clone();
        c.step(Duration::from_millis(1500));
        assert_eq!(shared.now().as_millisecond(), 1500);
        c.set(Timestamp::from_second(100).unwrap());
        assert_eq!(shared.now().as_second(), 100);
    }

    #[test]
    fn real_clock_is_after_2020() {
        assert!(RealClock.now().as_second() > 1_577_836_800);
    }
}
