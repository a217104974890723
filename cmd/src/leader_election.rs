//! Leader election on a Lease, with client-go's semantics (tools/leaderelection).
//!
//! Only the leader runs controllers. A candidate acquires the lock by writing its identity into
//! the Lease, then renews it every retry period; if it cannot renew within the renew deadline it
//! has lost leadership and (like kube-controller-manager) the process exits non-zero.
//!
//! Expiry of somebody else's lease is judged only by this process's own clock: the lease is
//! valid until `lease_duration` after the local instant at which we last saw the record
//! *change*. Timestamps written by other candidates are never compared with our clock, so
//! clock skew between machines cannot cause two leaders.

use std::time::Duration;

use parking_lot::Mutex;
use rand::Rng;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::lease_lock::{LeaderElectionRecord, LeaseLock, LockError};

/// How far (relative to the retry period) acquire attempts are spread: client-go's JitterFactor.
pub const JITTER_FACTOR: f64 = 1.2;

/// How long past the lease duration the health check tolerates a leader that failed to renew.
pub const MAX_TOLERABLE_EXPIRED_LEASE: Duration = Duration::from_secs(20);

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
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        LeaderElectionConfig {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
        }
    }
}

/// Invalid leader election timing, with client-go's messages.
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
}

impl LeaderElectionConfig {
    /// Checks the timing the way client-go's `NewLeaderElector` does.
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
        Ok(())
    }
}

/// What this candidate last saw of the lock.
#[derive(Debug, Default)]
struct Observed {
    record: Option<LeaderElectionRecord>,
    /// Local instant at which `record` last changed (or was written by us).
    at: Option<Instant>,
}

/// A candidate for leadership of one lock.
#[derive(Debug)]
pub struct LeaderElector<L> {
    config: LeaderElectionConfig,
    lock: L,
    observed: Mutex<Observed>,
}

impl<L: LeaseLock> LeaderElector<L> {
    /// A candidate using `lock`; fails on invalid timing or an empty identity.
    pub fn new(lock: L, config: LeaderElectionConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        if lock.identity().is_empty() {
            return Err(ConfigError::EmptyIdentity);
        }
        Ok(LeaderElector {
            config,
            lock,
            observed: Mutex::new(Observed::default()),
        })
    }

    /// This candidate's identity.
    pub fn identity(&self) -> &str {
        self.lock.identity()
    }

    /// Whether the last observed record names this candidate as holder.
    pub fn is_leader(&self) -> bool {
        self.observed
            .lock()
            .record
            .as_ref()
            .is_some_and(|r| r.holder_identity == self.lock.identity())
    }

    /// The holder named by the last observed record (empty if none).
    pub fn leader(&self) -> String {
        self.observed
            .lock()
            .record
            .as_ref()
            .map(|r| r.holder_identity.clone())
            .unwrap_or_default()
    }

    fn lease_valid(&self, now: Instant) -> bool {
        let observed = self.observed.lock();
        match (&observed.record, observed.at) {
            (Some(record), Some(at)) => {
                let duration = Duration::from_secs(record.lease_duration_seconds.max(0) as u64);
                at + duration > now
            }
            _ => false,
        }
    }

    fn set_observed(&self, record: LeaderElectionRecord, at: Instant) {
        let mut observed = self.observed.lock();
        observed.record = Some(record);
        observed.at = Some(at);
    }

    /// One attempt to acquire or renew the lock; true if we hold it afterwards.
    pub async fn try_acquire_or_renew(&self) -> bool {
        let now = Instant::now();
        let wall = jiff::Timestamp::now();
        let mut desired = LeaderElectionRecord {
            holder_identity: self.lock.identity().to_string(),
            lease_duration_seconds: self.config.lease_duration.as_secs() as i32,
            acquire_time: Some(wall),
            renew_time: Some(wall),
            leader_transitions: 0,
        };

        // Fast path: we hold a valid lease, so renew it without reading first.
        if self.is_leader() && self.lease_valid(now) {
            if let Some(old) = self.observed.lock().record.clone() {
                desired.acquire_time = old.acquire_time;
                desired.leader_transitions = old.leader_transitions;
            }
            match self.lock.update(&desired).await {
                Ok(()) => {
                    self.set_observed(desired, now);
                    return true;
                }
                Err(err) => tracing::warn!(
                    lock = %self.lock.describe(),
                    error = %err,
                    "failed to update lock optimistically, falling back to slow path"
                ),
            }
        }

        let current = match self.lock.get().await {
            Ok(record) => record,
            Err(LockError::NotFound(_)) => {
                return match self.lock.create(&desired).await {
                    Ok(()) => {
                        self.set_observed(desired, now);
                        true
                    }
                    Err(err) => {
                        tracing::error!(lock = %self.lock.describe(), error = %err, "error initially creating leader election record");
                        false
                    }
                };
            }
            Err(err) => {
                tracing::error!(lock = %self.lock.describe(), error = %err, "error retrieving resource lock");
                return false;
            }
        };

        let changed = self.observed.lock().record.as_ref() != Some(&current);
        if changed {
            self.set_observed(current.clone(), now);
        }
        if !current.holder_identity.is_empty() && self.lease_valid(now) && !self.is_leader() {
            tracing::debug!(lock = %self.lock.describe(), holder = %current.holder_identity, "lock is held and has not yet expired");
            return false;
        }

        if self.is_leader() {
            desired.acquire_time = current.acquire_time;
            desired.leader_transitions = current.leader_transitions;
        } else {
            desired.leader_transitions = current.leader_transitions.saturating_add(1);
        }
        match self.lock.update(&desired).await {
            Ok(()) => {
                self.set_observed(desired, now);
                true
            }
            Err(err) => {
                tracing::error!(lock = %self.lock.describe(), error = %err, "failed to update lock");
                false
            }
        }
    }

    /// Retries until the lock is acquired (true) or `cancel` fires (false). Attempts are
    /// spaced by the retry period plus up to 1.2× of it in jitter, as client-go does.
    pub async fn acquire(&self, cancel: &CancellationToken) -> bool {
        tracing::info!(lock = %self.lock.describe(), identity = %self.identity(), "attempting to acquire leader lease");
        let mut last_holder = String::new();
        loop {
            if cancel.is_cancelled() {
                return false;
            }
            if self.try_acquire_or_renew().await {
                tracing::info!(lock = %self.lock.describe(), identity = %self.identity(), "successfully acquired lease");
                return true;
            }
            let leader = self.leader();
            // Once per holder, not every retry: a standby can wait for hours.
            if !leader.is_empty() && leader != last_holder {
                tracing::info!(lock = %self.lock.describe(), holder = %leader, "lease is held by another candidate; waiting to acquire it");
                last_holder = leader;
            }
            let jitter = rand::rng().random::<f64>() * JITTER_FACTOR;
            let wait = self.config.retry_period.mul_f64(1.0 + jitter);
            tokio::select! {
                _ = cancel.cancelled() => return false,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Keeps renewing until renewal fails for a whole renew deadline (leadership lost) or
    /// `cancel` fires. Returns true if leadership was lost, false on cancellation.
    pub async fn renew(&self, cancel: &CancellationToken) -> bool {
        loop {
            let deadline = Instant::now() + self.config.renew_deadline;
            let renewed = loop {
                if cancel.is_cancelled() {
                    break None;
                }
                if self.try_acquire_or_renew().await {
                    break Some(true);
                }
                let next = Instant::now() + self.config.retry_period;
                if next > deadline {
                    break Some(false);
                }
                tokio::select! {
                    _ = cancel.cancelled() => break None,
                    _ = tokio::time::sleep_until(next) => {}
                }
            };
            match renewed {
                None => {
                    if self.config.release_on_cancel {
                        self.release().await;
                    }
                    return false;
                }
                Some(false) => {
                    tracing::info!(lock = %self.lock.describe(), "failed to renew lease: timed out waiting for the condition");
                    return true;
                }
                Some(true) => {
                    tracing::trace!(lock = %self.lock.describe(), "successfully renewed lease");
                }
            }
            tokio::select! {
                _ = cancel.cancelled() => {
                    if self.config.release_on_cancel {
                        self.release().await;
                    }
                    return false;
                }
                _ = tokio::time::sleep(self.config.retry_period) => {}
            }
        }
    }

    /// Gives the lock up if we hold it: holder cleared, lease duration 1 s, transitions kept.
    pub async fn release(&self) -> bool {
        if !self.is_leader() {
            return true;
        }
        let wall = jiff::Timestamp::now();
        let transitions = self
            .observed
            .lock()
            .record
            .as_ref()
            .map(|r| r.leader_transitions)
            .unwrap_or_default();
        let record = LeaderElectionRecord {
            holder_identity: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(wall),
            renew_time: Some(wall),
            leader_transitions: transitions,
        };
        match self.lock.update(&record).await {
            Ok(()) => {
                self.set_observed(record, Instant::now());
                true
            }
            Err(err) => {
                tracing::error!(lock = %self.lock.describe(), error = %err, "failed to release lock");
                false
            }
        }
    }

    /// Health check: fails if we believe we lead but have not renewed for longer than the
    /// lease duration plus `slack` (client-go's HealthzAdaptor).
    pub fn check(&self, slack: Duration) -> Result<(), String> {
        if !self.is_leader() {
            return Ok(());
        }
        let at = self.observed.lock().at;
        match at {
            Some(at) if at.elapsed() > self.config.lease_duration + slack => Err(format!(
                "failed election to renew leadership on lease {}",
                self.lock.describe()
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
