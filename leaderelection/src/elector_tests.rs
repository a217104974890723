//! Leader election against an in-memory lock, on a paused clock.

use super::*;
use crate::config::MAX_TOLERABLE_EXPIRED_LEASE;
use std::sync::Arc;

/// An in-memory lock shared by several candidates; `update` fails with a conflict when the
/// caller's last read is stale, like an API server would.
#[derive(Debug, Default)]
struct Shared {
    record: Option<LeaderElectionRecord>,
    version: u64,
    fail_all: bool,
}

#[derive(Debug)]
struct FakeLock {
    shared: Arc<Mutex<Shared>>,
    identity: String,
    seen_version: Mutex<Option<u64>>,
}

impl FakeLock {
    fn new(shared: &Arc<Mutex<Shared>>, identity: &str) -> Self {
        FakeLock {
            shared: shared.clone(),
            identity: identity.into(),
            seen_version: Mutex::new(None),
        }
    }
}

fn conflict() -> LockError {
    LockError::NotInitialized("conflict".into())
}

impl LeaseLock for FakeLock {
    async fn get(&self) -> Result<LeaderElectionRecord, LockError> {
        let shared = self.shared.lock();
        if shared.fail_all {
            return Err(conflict());
        }
        let record = shared
            .record
            .clone()
            .ok_or_else(|| LockError::NotFound("fake".into()))?;
        *self.seen_version.lock() = Some(shared.version);
        Ok(record)
    }
    async fn create(&self, record: &LeaderElectionRecord) -> Result<(), LockError> {
        let mut shared = self.shared.lock();
        if shared.fail_all || shared.record.is_some() {
            return Err(conflict());
        }
        shared.record = Some(record.clone());
        shared.version += 1;
        *self.seen_version.lock() = Some(shared.version);
        Ok(())
    }
    async fn update(&self, record: &LeaderElectionRecord) -> Result<(), LockError> {
        let mut shared = self.shared.lock();
        if shared.fail_all || *self.seen_version.lock() != Some(shared.version) {
            return Err(conflict());
        }
        shared.record = Some(record.clone());
        shared.version += 1;
        *self.seen_version.lock() = Some(shared.version);
        Ok(())
    }
    fn identity(&self) -> &str {
        &self.identity
    }
    fn describe(&self) -> String {
        "kube-system/kcm".into()
    }
}

fn elector(shared: &Arc<Mutex<Shared>>, id: &str) -> LeaderElector<FakeLock> {
    LeaderElector::new(FakeLock::new(shared, id), LeaderElectionConfig::default())
        .expect("default config is valid")
}

#[tokio::test(start_paused = true)]
async fn first_candidate_creates_the_lease_and_second_waits() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    let b = elector(&shared, "b");
    assert!(a.try_acquire_or_renew().await.held());
    assert!(a.is_leader());
    assert!(!b.try_acquire_or_renew().await.held());
    assert_eq!(b.leader(), "a");
    let record = shared.lock().record.clone().expect("created");
    assert_eq!(record.holder_identity, "a");
    assert_eq!(record.lease_duration_seconds, 15);
    assert_eq!(record.leader_transitions, 0);
}

#[tokio::test(start_paused = true)]
async fn renewal_keeps_acquire_time_and_transitions() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    assert!(a.try_acquire_or_renew().await.held());
    let first = shared.lock().record.clone().expect("created");
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(a.try_acquire_or_renew().await.held());
    let second = shared.lock().record.clone().expect("renewed");
    assert_eq!(second.acquire_time, first.acquire_time);
    assert_eq!(second.leader_transitions, 0);
    assert_eq!(second.holder_identity, "a");
}

#[tokio::test(start_paused = true)]
async fn takeover_needs_a_full_lease_duration_of_unchanged_record() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    let b = elector(&shared, "b");
    assert!(a.try_acquire_or_renew().await.held());
    // b observes the record now; a then stops renewing (crashed).
    assert!(!b.try_acquire_or_renew().await.held());
    tokio::time::advance(Duration::from_secs(14)).await;
    assert!(
        !b.try_acquire_or_renew().await.held(),
        "lease still valid by b's own clock"
    );
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(
        b.try_acquire_or_renew().await.held(),
        "expired after 15 s of no change"
    );
    let record = shared.lock().record.clone().expect("taken over");
    assert_eq!(record.holder_identity, "b");
    assert_eq!(record.leader_transitions, 1);
    // a comes back: it sees b's record as new, so it cannot take it back.
    assert!(!a.try_acquire_or_renew().await.held());
    assert!(!a.is_leader());
}

#[tokio::test(start_paused = true)]
async fn renew_reports_loss_after_the_renew_deadline() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    let cancel = CancellationToken::new();
    assert!(a.acquire(&cancel).await);
    shared.lock().fail_all = true;
    let started = Instant::now();
    assert!(a.renew(&cancel).await, "leadership lost");
    let waited = started.elapsed();
    // The first round fails for a whole renew deadline (10 s), after one retry period.
    assert!(
        waited >= Duration::from_secs(10) && waited <= Duration::from_secs(12),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn renew_returns_false_on_cancel_and_release_clears_holder() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let lock = FakeLock::new(&shared, "a");
    let config = LeaderElectionConfig {
        release_on_cancel: true,
        ..Default::default()
    };
    let a = LeaderElector::new(lock, config).expect("valid");
    let cancel = CancellationToken::new();
    assert!(a.acquire(&cancel).await);
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(7)).await;
        c2.cancel();
    });
    assert!(!a.renew(&cancel).await);
    let record = shared.lock().record.clone().expect("released");
    assert_eq!(record.holder_identity, "");
    assert_eq!(record.lease_duration_seconds, 1);
}

#[tokio::test(start_paused = true)]
async fn health_check_fails_when_leader_stops_renewing() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    assert!(a.try_acquire_or_renew().await.held());
    assert!(a.check(MAX_TOLERABLE_EXPIRED_LEASE).is_ok());
    tokio::time::advance(Duration::from_secs(36)).await;
    let err = a
        .check(MAX_TOLERABLE_EXPIRED_LEASE)
        .expect_err("stale leader");
    assert_eq!(
        err,
        "failed election to renew leadership on lease kube-system/kcm"
    );
}

/// A log sink for one test: what the waiting candidate wrote, at info and above.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn waiting_candidate_logs_each_holder_once_at_info() {
    let captured = Captured::default();
    let sink = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    assert!(a.try_acquire_or_renew().await.held());
    let b = elector(&shared, "b");
    let cancel = CancellationToken::new();
    let (changer, stopper) = (shared.clone(), cancel.clone());
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(6)).await;
        {
            let mut shared = changer.lock();
            if let Some(record) = shared.record.as_mut() {
                record.holder_identity = "c".into();
            }
            shared.version += 1;
        }
        tokio::time::sleep(Duration::from_secs(6)).await;
        stopper.cancel();
    });
    // About six retries before the change and six after, all while the lease is valid.
    assert!(!b.acquire(&cancel).await);
    let logs = String::from_utf8(captured.0.lock().clone()).expect("utf-8");
    let waits: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("lease is held by another candidate"))
        .collect();
    assert_eq!(waits.len(), 2, "{logs}");
    assert!(waits[0].contains("holder=a"), "{logs}");
    assert!(waits[1].contains("holder=c"), "{logs}");
    assert!(waits[0].contains(" INFO "), "{logs}");
}

#[test]
fn empty_identity_is_rejected() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let err = LeaderElector::new(FakeLock::new(&shared, ""), LeaderElectionConfig::default())
        .expect_err("empty identity");
    assert_eq!(err, ConfigError::EmptyIdentity);
}

#[tokio::test(start_paused = true)]
async fn fence_opens_for_the_window_from_the_start_of_each_renewal() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    let fence = a.fence();
    assert!(fence.check().is_err(), "closed before the lease is held");
    assert_eq!(a.try_acquire_or_renew().await, Attempt::Held);
    // Default timing: 15 s lease less 15 % = 12.75 s.
    assert_eq!(fence.remaining(), Some(Duration::from_millis(12_750)));
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(a.try_acquire_or_renew().await, Attempt::Held);
    assert_eq!(fence.remaining(), Some(Duration::from_millis(12_750)));
    tokio::time::advance(Duration::from_millis(12_749)).await;
    assert!(fence.check().is_ok());
    tokio::time::advance(Duration::from_millis(1)).await;
    assert!(fence.check().is_err(), "no renewal for the whole window");
}

/// The scenario: the leader is stopped for longer than the lease, a standby takes
/// over, then the old leader resumes with work queued.
#[tokio::test(start_paused = true)]
async fn a_paused_leader_is_fenced_when_it_resumes_and_steps_down_at_once() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    let b = elector(&shared, "b");
    assert_eq!(a.try_acquire_or_renew().await, Attempt::Held);
    assert_eq!(
        b.try_acquire_or_renew().await,
        Attempt::HeldByOther { holder: "a".into() }
    );
    // a is paused: it neither renews nor writes; b times the lease out and takes it.
    tokio::time::advance(Duration::from_secs(16)).await;
    assert_eq!(b.try_acquire_or_renew().await, Attempt::Held);
    // a resumes: its first write is refused, before it has even looked at the lease.
    assert!(a.fence().check().is_err());
    // Its renewal finds b's unexpired lease and ends leadership at once, not after the 10 s
    // renew deadline as client-go would.
    let started = Instant::now();
    let cancel = CancellationToken::new();
    assert!(a.renew(&cancel).await, "leadership lost");
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert!(!a.is_leader());
    assert!(a.fence().check().is_err(), "the fence stays closed");
    assert!(b.fence().check().is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_pause_inside_the_lease_but_past_the_window_is_renewed_and_reopens_the_fence() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    let b = elector(&shared, "b");
    assert_eq!(a.try_acquire_or_renew().await, Attempt::Held);
    assert!(!b.try_acquire_or_renew().await.held());
    tokio::time::advance(Duration::from_secs(13)).await;
    assert!(
        a.fence().check().is_err(),
        "13 s is past the 12.75 s window"
    );
    // b cannot have taken the lease (15 s by its clock): a's renewal succeeds.
    assert!(!b.try_acquire_or_renew().await.held());
    assert_eq!(a.try_acquire_or_renew().await, Attempt::Held);
    assert!(a.fence().check().is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_refused_write_wakes_the_renew_loop_at_once() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    // A renew deadline (14 s) longer than the window (12.75 s): the fence closes while the
    // renew loop is still retrying every 2 s.
    let config = LeaderElectionConfig {
        renew_deadline: Duration::from_secs(14),
        ..Default::default()
    };
    let a = Arc::new(LeaderElector::new(FakeLock::new(&shared, "a"), config).expect("valid"));
    let cancel = CancellationToken::new();
    assert!(a.acquire(&cancel).await);
    shared.lock().fail_all = true;
    let renewing = {
        let (a, cancel) = (a.clone(), cancel.clone());
        tokio::spawn(async move { a.renew(&cancel).await })
    };
    // Renewals fail at 2, 4, ..., 12 s; the window ends at 12.75 s.
    tokio::time::sleep(Duration::from_millis(12_800)).await;
    shared.lock().fail_all = false;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(a.fence().check().is_err(), "refused at 12.9 s");
    // Woken by the refusal, not by the next retry at 14 s.
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(
        a.fence().check().is_ok(),
        "renewed at once after the refusal"
    );
    assert!(a.is_leader());
    cancel.cancel();
    assert!(!renewing.await.expect("no panic"), "cancelled, not lost");
}

#[tokio::test(start_paused = true)]
async fn losing_at_the_renew_deadline_closes_the_fence() {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let a = elector(&shared, "a");
    let cancel = CancellationToken::new();
    assert!(a.acquire(&cancel).await);
    shared.lock().fail_all = true;
    assert!(a.renew(&cancel).await);
    // Lost at about 12 s, before the 12.75 s window ends: the fence is closed anyway.
    assert!(a.fence().check().is_err());
    assert_eq!(a.fence().deadline(), None);
}
