//! Timing of leader election and of its write fence, with client-go's checks
//! (`tools/leaderelection/leaderelection.go`: `LeaderElectionConfig`, `NewLeaderElector`).

use std::time::Duration;

/// How far (relative to the retry period) acquire attempts are spread: client-go's JitterFactor.
pub(crate) const JITTER_FACTOR: f64 = 1.2;

/// How long past the lease duration the health check tolerates a leader that failed to renew.
pub const MAX_TOLERABLE_EXPIRED_LEASE: Duration = Duration::from_secs(20);

/// The default fence margin: writes stop 15 % of the lease duration before the lease could
/// expire in another candidate's eyes (see [`LeaderElectionConfig::fence_margin_percent`]).
pub(crate) const DEFAULT_FENCE_MARGIN_PERCENT: u8 = 15;

/// Timing of leader election; defaults are kube-controller-manager's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// How long non-leaders wait after the last observed change before taking over (15 s).
    pub lease_duration: Duration,
    /// How long the leader keeps retrying to renew before giving up leadership (10 s).
    pub renew_deadline: Duration,
    /// How long candidates wait between attempts (2 s).
    pub retry_period: Duration,
    /// Clear the holder when leadership ends by cancellation (kube-controller-manager: false).
    pub release_on_cancel: bool,
    /// The part of the lease duration, in percent, cut from the end of the write fence's
    /// window (default 15): the holder writes only until the start of its last successful
    /// renewal plus `lease_duration × (100 − margin) / 100`. The margin must cover the rate
    /// difference of the two candidates' monotonic clocks over one lease duration (twice the
    /// drift bound) plus the longest a write may travel after its check; 15 % of kcm's 15 s
    /// lease is 2.25 s. Between 1 and 50.
    pub fence_margin_percent: u8,
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        LeaderElectionConfig {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
            fence_margin_percent: DEFAULT_FENCE_MARGIN_PERCENT,
        }
    }
}

/// Invalid leader election timing, with client-go's messages (the fence's are kcm's).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// lease duration must exceed the renew deadline
    #[error("leaseDuration must be greater than renewDeadline")]
    LeaseNotLongerThanRenew,
    /// renew deadline must exceed 1.2 × retry period
    #[error("renewDeadline must be greater than retryPeriod*JitterFactor")]
    RenewTooShort,
    /// every duration must be positive
    #[error("{0} must be greater than zero")]
    NotPositive(&'static str),
    /// the lock has no identity
    #[error("Lock identity is empty")]
    EmptyIdentity,
    /// the fence margin is outside 1–50 %
    #[error("the write fence margin must be between 1 and 50 percent of leaseDuration (got {0})")]
    FenceMargin(u8),
    /// the fence window would close before the next renewal could open it again
    #[error(
        "the write fence window ({window:?}: leaseDuration less the margin) must be longer than retryPeriod ({retry:?})"
    )]
    FenceWindowTooShort {
        /// The window.
        window: Duration,
        /// The retry period.
        retry: Duration,
    },
}

impl LeaderElectionConfig {
    /// Checks the timing the way client-go's `NewLeaderElector` does, and the fence's margin.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.lease_duration <= self.renew_deadline {
            return Err(ConfigError::LeaseNotLongerThanRenew);
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(ConfigError::RenewTooShort);
        }
        for (name, d) in [
            ("leaseDuration", self.lease_duration),
            ("renewDeadline", self.renew_deadline),
            ("retryPeriod", self.retry_period),
        ] {
            if d.is_zero() {
                return Err(ConfigError::NotPositive(name));
            }
        }
        if !(1..=50).contains(&self.fence_margin_percent) {
            return Err(ConfigError::FenceMargin(self.fence_margin_percent));
        }
        let window = self.fence_window();
        if window <= self.retry_period {
            return Err(ConfigError::FenceWindowTooShort {
                window,
                retry: self.retry_period,
            });
        }
        Ok(())
    }

    /// How long after the start of a successful acquire or renewal the holder may still send
    /// writes: the lease duration less the margin.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kcm_leaderelection::LeaderElectionConfig;
    ///
    /// let config = LeaderElectionConfig::default();
    /// assert_eq!(config.fence_window(), Duration::from_millis(12_750));
    /// ```
    ///
    /// The lease duration is taken in whole seconds, as it is written into the Lease
    /// (`leaseDurationSeconds`) and as other candidates time it.
    pub fn fence_window(&self) -> Duration {
        let written = Duration::from_secs(self.lease_duration.as_secs());
        written.mul_f64(f64::from(100 - self.fence_margin_percent.min(100)) / 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(lease: Duration, renew: Duration, retry: Duration) -> LeaderElectionConfig {
        LeaderElectionConfig {
            lease_duration: lease,
            renew_deadline: renew,
            retry_period: retry,
            ..Default::default()
        }
    }

    #[test]
    fn validation_matches_client_go() {
        let secs = Duration::from_secs;
        let cases = [
            (secs(15), secs(10), secs(2), Ok(())),
            (
                secs(10),
                secs(10),
                secs(2),
                Err(ConfigError::LeaseNotLongerThanRenew),
            ),
            (secs(15), secs(2), secs(2), Err(ConfigError::RenewTooShort)),
            // 2.4 s is exactly 1.2 × 2 s: not strictly greater.
            (
                secs(15),
                Duration::from_millis(2400),
                secs(2),
                Err(ConfigError::RenewTooShort),
            ),
            (
                secs(15),
                secs(10),
                Duration::ZERO,
                Err(ConfigError::NotPositive("retryPeriod")),
            ),
        ];
        for (lease, renew, retry, want) in cases {
            assert_eq!(
                config(lease, renew, retry).validate(),
                want,
                "{lease:?} {renew:?} {retry:?}"
            );
        }
    }

    #[test]
    fn fence_margin_is_bounded_and_leaves_a_window_past_the_retry_period() {
        let ms = Duration::from_millis;
        let mut c = config(ms(3000), ms(2000), ms(500));
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.fence_window(), ms(2550));
        // Written as whole seconds: a 3.9 s lease is 3 s in the Lease and to other candidates.
        assert_eq!(config(ms(3900), ms(2000), ms(500)).fence_window(), ms(2550));
        for bad in [0, 51, 100, 255] {
            c.fence_margin_percent = bad;
            assert_eq!(c.validate(), Err(ConfigError::FenceMargin(bad)));
        }
        // lease 1 s, renew 0.9 s, retry 0.7 s passes client-go's checks, but half of the
        // lease is shorter than the retry period.
        let mut short = config(ms(1000), ms(900), ms(700));
        short.fence_margin_percent = 50;
        assert_eq!(
            short.validate(),
            Err(ConfigError::FenceWindowTooShort {
                window: ms(500),
                retry: ms(700)
            })
        );
    }
}
