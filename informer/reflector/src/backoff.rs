//! The reflector's retry backoff (client-go `tools/cache/reflector.go`'s `defaultBackoff*`
//! parameters, with apimachinery `pkg/util/wait/backoff.go`'s `Backoff.DelayWithReset`).
//!
//! Upstream parameters: first delay 800 ms, factor 2, jitter 1.0 (each delay is uniform in
//! `[d, 2d)`), cap 30 s (jitter is applied after the cap, so capped delays are in `[30 s, 60 s)`),
//! and a reset to the first delay whenever a delay is requested more than 2 minutes after the
//! previous *reset*. The reset is a fixed cadence measured from the last reset (the manager only
//! refreshes its timestamp when it resets), not an idle timer.

use std::time::Duration;

use tokio::time::Instant;

/// Parameters of the exponential backoff used between list/watch attempts.
#[derive(Clone, Debug, PartialEq)]
pub struct BackoffConfig {
    /// First delay (upstream: 800 ms).
    pub initial: Duration,
    /// Multiplier applied after each delay (upstream: 2.0).
    pub factor: f64,
    /// Jitter fraction: a delay `d` becomes uniform in `[d, d + jitter * d)` (upstream: 1.0).
    pub jitter: f64,
    /// Largest pre-jitter delay (upstream: 30 s).
    pub cap: Duration,
    /// The state goes back to `initial` when a delay is requested more than this long after the
    /// last reset (upstream: 2 minutes).
    pub reset_after: Duration,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(800),
            factor: 2.0,
            jitter: 1.0,
            cap: Duration::from_secs(30),
            reset_after: Duration::from_secs(120),
        }
    }
}

/// Stateful backoff: each call to [`Backoff::next_delay`] returns the next delay.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    config: BackoffConfig,
    current: Duration,
    last_reset: Instant,
}

impl Backoff {
    /// A fresh backoff; its creation counts as a reset.
    pub(crate) fn new(config: BackoffConfig) -> Self {
        Self::new_at(config, Instant::now())
    }

    /// A fresh backoff whose last reset happened at `now` (for tests with explicit clocks).
    pub(crate) fn new_at(config: BackoffConfig, now: Instant) -> Self {
        Self {
            current: config.initial,
            config,
            last_reset: now,
        }
    }

    /// The next delay, using the current time and a random jitter.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let unit: f64 = rand::random();
        self.next_delay_at(Instant::now(), unit)
    }

    /// The next delay at time `now`, with `unit` in `[0, 1)` as the random jitter draw.
    pub(crate) fn next_delay_at(&mut self, now: Instant, unit: f64) -> Duration {
        if now.saturating_duration_since(self.last_reset) > self.config.reset_after {
            self.current = self.config.initial;
            self.last_reset = now;
        }
        let base = self.current;
        let next = base.mul_f64(self.config.factor.max(1.0));
        self.current = next.min(self.config.cap);
        let jitter = self.config.jitter.max(0.0) * unit.clamp(0.0, 1.0);
        base + base.mul_f64(jitter)
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(BackoffConfig::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn nominal_sequence_without_jitter_doubles_up_to_the_cap() {
        let start = Instant::now();
        let mut b = Backoff::new_at(BackoffConfig::default(), start);
        let got: Vec<Duration> = (0..9).map(|_| b.next_delay_at(start, 0.0)).collect();
        let want = [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000].map(ms);
        assert_eq!(got, want);
    }

    #[test]
    fn jitter_is_applied_after_the_cap() {
        let start = Instant::now();
        let mut b = Backoff::new_at(BackoffConfig::default(), start);
        for _ in 0..7 {
            b.next_delay_at(start, 0.0);
        }
        // Capped at 30 s, then jitter 1.0 with draw 0.5 → 45 s.
        assert_eq!(b.next_delay_at(start, 0.5), ms(45_000));
        // First delay with the maximal draw stays below 1.6 s (TestSharedInformerWatchDisruption
        // steps 1601 ms to get past it).
        let mut fresh = Backoff::new_at(BackoffConfig::default(), start);
        assert!(fresh.next_delay_at(start, 0.999_999) < ms(1601));
        assert!(fresh.next_delay_at(start, 0.0) >= ms(1600));
    }

    #[test]
    fn reset_happens_on_a_cadence_from_the_last_reset_not_on_idle() {
        let start = Instant::now();
        let mut b = Backoff::new_at(BackoffConfig::default(), start);
        assert_eq!(b.next_delay_at(start, 0.0), ms(800));
        assert_eq!(
            b.next_delay_at(start + Duration::from_secs(60), 0.0),
            ms(1600)
        );
        // 119 s after the reset (creation): no reset even though 59 s were idle.
        assert_eq!(
            b.next_delay_at(start + Duration::from_secs(119), 0.0),
            ms(3200)
        );
        // 121 s after creation: reset, even though the last delay was only 2 s ago.
        assert_eq!(
            b.next_delay_at(start + Duration::from_secs(121), 0.0),
            ms(800)
        );
        // The cadence restarts from that reset.
        assert_eq!(
            b.next_delay_at(start + Duration::from_secs(200), 0.0),
            ms(1600)
        );
        assert_eq!(
            b.next_delay_at(start + Duration::from_secs(242), 0.0),
            ms(800)
        );
    }

    #[test]
    fn exactly_reset_after_does_not_reset() {
        let start = Instant::now();
        let mut b = Backoff::new_at(BackoffConfig::default(), start);
        b.next_delay_at(start, 0.0);
        assert_eq!(
            b.next_delay_at(start + Duration::from_secs(120), 0.0),
            ms(1600)
        );
    }
}
