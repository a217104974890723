//! Leader election on a Lease, with client-go's semantics (`tools/leaderelection/leaderelection.go`,
//! `LeaderElector`), and a write fence.
//!
//! Only the leader runs controllers. A candidate acquires the lock by writing its identity into
//! the Lease, then renews it every retry period; if it cannot renew within the renew deadline it
//! has lost leadership and (like kube-controller-manager) the process exits non-zero.
//!
//! Expiry of somebody else's lease is judged only by this process's own clock: the lease is
//! valid until `lease_duration` after the local instant at which we last saw the record
//! *change*. Timestamps written by other candidates are never compared with our clock, so
//! clock skew between machines cannot cause two leaders.
//!
//! Two differences from client-go, both about a leader that was paused or cut off:
//! - the elector keeps a [`WriteFence`] open only for the [fence window](LeaderElectionConfig::fence_window)
//!   after the start of its last successful renewal; a write refused by it wakes the elector
//!   to re-check the lease at once;
//! - a renewal that finds another holder with an unexpired lease ends leadership at once,
//!   where client-go goes on polling until the renew deadline.

use std::time::Duration;

use parking_lot::Mutex;
use rand::Rng;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigError, JITTER_FACTOR, LeaderElectionConfig};
use crate::fence::WriteFence;
use crate::lease_lock::{LeaderElectionRecord, LeaseLock, LockError};

/// How one attempt to acquire or renew the lock ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// This candidate holds the lock (acquired or renewed).
    Held,
    /// Another candidate holds the lock and its lease has not expired by our clock.
    HeldByOther {
        /// The holder's identity.
        holder: String,
    },
    /// The lock could not be read or written (the error was logged).
    Failed,
}

impl Attempt {
    /// Whether this candidate holds the lock after the attempt.
    pub fn held(&self) -> bool {
        matches!(self, Attempt::Held)
    }
}

/// How a wait between two attempts ended.
enum Wait {
    Elapsed,
    Cancelled,
    /// A write was refused by the fence after the last attempt had opened it: try now.
    Fenced,
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
    fence: WriteFence,
}

impl<L: LeaseLock> LeaderElector<L> {
    /// A candidate using `lock`; fails on invalid timing or an empty identity.
    pub fn new(lock: L, config: LeaderElectionConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        if lock.identity().is_empty() {
            return Err(ConfigError::EmptyIdentity);
        }
        let fence = WriteFence::new(lock.describe());
        Ok(LeaderElector {
            config,
            lock,
            observed: Mutex::new(Observed::default()),
            fence,
        })
    }

    /// This candidate's identity.
    pub fn identity(&self) -> &str {
        self.lock.identity()
    }

    /// The fence this elector keeps open while it holds the lock: put it in front of every
    /// write of the controllers ([`FenceLayer`](crate::FenceLayer)).
    pub fn fence(&self) -> WriteFence {
        self.fence.clone()
    }

    /// The timing this candidate runs with.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.config
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

    /// We wrote `record` in an attempt that started at `started`: remember it, and open the
    /// fence for the window from that start.
    fn held(&self, record: LeaderElectionRecord, started: Instant) -> Attempt {
        self.set_observed(record, started);
        self.fence.open_until(started + self.config.fence_window());
        Attempt::Held
    }

    /// One attempt to acquire or renew the lock.
    pub async fn try_acquire_or_renew(&self) -> Attempt {
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
                Ok(()) => return self.held(desired, now),
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
                    Ok(()) => self.held(desired, now),
                    Err(err) => {
                        tracing::error!(lock = %self.lock.describe(), error = %err, "error initially creating leader election record");
                        Attempt::Failed
                    }
                };
            }
            Err(err) => {
                tracing::error!(lock = %self.lock.describe(), error = %err, "error retrieving resource lock");
                return Attempt::Failed;
            }
        };

        let changed = self.observed.lock().record.as_ref() != Some(&current);
        if changed {
            self.set_observed(current.clone(), now);
        }
        if !current.holder_identity.is_empty() && self.lease_valid(now) && !self.is_leader() {
            // Whatever we believed before, somebody else holds the lease now.
            self.fence.close();
            tracing::debug!(lock = %self.lock.describe(), holder = %current.holder_identity, "lock is held and has not yet expired");
            return Attempt::HeldByOther {
                holder: current.holder_identity,
            };
        }

        if self.is_leader() {
            desired.acquire_time = current.acquire_time;
            desired.leader_transitions = current.leader_transitions;
        } else {
            desired.leader_transitions = current.leader_transitions.saturating_add(1);
        }
        match self.lock.update(&desired).await {
            Ok(()) => self.held(desired, now),
            Err(err) => {
                tracing::error!(lock = %self.lock.describe(), error = %err, "failed to update lock");
                Attempt::Failed
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
            if self.try_acquire_or_renew().await.held() {
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

    /// Waits until `until`, or less if `cancel` fires or a write is refused by the fence
    /// while the last attempt (started at `last_attempt`) is what opened it.
    async fn wait(
        &self,
        until: Instant,
        last_attempt: Instant,
        cancel: &CancellationToken,
    ) -> Wait {
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return Wait::Cancelled,
                _ = tokio::time::sleep_until(until) => return Wait::Elapsed,
                _ = self.fence.refused() => {
                    // Once per closing of the fence: an attempt made after it closed and
                    // failed is retried on the retry period, not on every refused write.
                    if self.fence.deadline().is_some_and(|d| last_attempt < d) {
                        return Wait::Fenced;
                    }
                }
            }
        }
    }

    /// Keeps renewing until leadership is lost (true) or `cancel` fires (false). Leadership
    /// is lost when renewals fail for a whole renew deadline, or at once when a renewal finds
    /// another holder with an unexpired lease; either way the fence is closed first.
    pub async fn renew(&self, cancel: &CancellationToken) -> bool {
        loop {
            let deadline = Instant::now() + self.config.renew_deadline;
            let renewed = loop {
                if cancel.is_cancelled() {
                    break None;
                }
                let started = Instant::now();
                match self.try_acquire_or_renew().await {
                    Attempt::Held => break Some(true),
                    Attempt::HeldByOther { holder } => {
                        self.fence.close();
                        tracing::info!(lock = %self.lock.describe(), holder = %holder, "failed to renew lease: another candidate holds it and it has not expired; stepping down at once");
                        return true;
                    }
                    Attempt::Failed => {}
                }
                let next = Instant::now() + self.config.retry_period;
                if next > deadline {
                    break Some(false);
                }
                match self.wait(next, started, cancel).await {
                    Wait::Cancelled => break None,
                    Wait::Elapsed => {}
                    Wait::Fenced => {
                        tracing::info!(lock = %self.lock.describe(), "a write was fenced; re-checking the lease now")
                    }
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
                    self.fence.close();
                    tracing::info!(lock = %self.lock.describe(), "failed to renew lease: timed out waiting for the condition");
                    return true;
                }
                Some(true) => {
                    tracing::trace!(lock = %self.lock.describe(), "successfully renewed lease");
                }
            }
            let last = Instant::now();
            match self
                .wait(last + self.config.retry_period, last, cancel)
                .await
            {
                Wait::Cancelled => {
                    if self.config.release_on_cancel {
                        self.release().await;
                    }
                    return false;
                }
                Wait::Elapsed => {}
                Wait::Fenced => {
                    tracing::info!(lock = %self.lock.describe(), "a write was fenced; re-checking the lease now")
                }
            }
        }
    }

    /// Gives the lock up if we hold it: the fence closed, then the holder cleared, lease
    /// duration 1 s, transitions kept.
    pub async fn release(&self) -> bool {
        self.fence.close();
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
#[path = "elector_tests.rs"]
mod tests;
