//! Controller expectations: how a controller remembers the creates and deletes it
//! has asked for and not yet seen through its informer (upstream
//! `pkg/controller/controller_utils.go`, `ControllerExpectations` and
//! `UIDTrackingControllerExpectations`).
//!
//! A controller sets expectations *before* it issues API calls, the informer
//! event handlers lower them as the resulting objects are observed, and a sync
//! only creates or deletes again once the expectations are
//! [satisfied](ControllerExpectations::satisfied_expectations): fulfilled
//! (both counters ≤ 0), expired (older than [`EXPECTATIONS_TIMEOUT`]), or absent.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kcm_store::ObjectKey;
use parking_lot::{Mutex, RwLock};

use crate::clock::{RealClock, SharedClock};

/// How long expectations are honoured before a controller syncs anyway
/// (upstream `ExpectationsTimeout`). Guards against dropped watch events.
pub const EXPECTATIONS_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The pending creations/deletions recorded for one controller key.
#[derive(Debug)]
struct ControlleeExpectations {
    add: AtomicI64,
    del: AtomicI64,
    timestamp: Timestamp,
}

impl ControlleeExpectations {
    fn fulfilled(&self) -> bool {
        self.add.load(Ordering::SeqCst) <= 0 && self.del.load(Ordering::SeqCst) <= 0
    }

    fn adjust(&self, add: i64, del: i64) {
        self.add.fetch_add(add, Ordering::SeqCst);
        self.del.fetch_add(del, Ordering::SeqCst);
    }

    fn counts(&self) -> (i64, i64) {
        (
            self.add.load(Ordering::SeqCst),
            self.del.load(Ordering::SeqCst),
        )
    }
}

/// Per-controller-key add/delete counters with a 5-minute TTL.
///
/// ```
/// use kcm_controller::expectations::ControllerExpectations;
/// use kcm_store::ObjectKey;
/// let exp = ControllerExpectations::new();
/// let rs = ObjectKey::new("ns", "rs");
/// assert!(exp.satisfied_expectations(&rs)); // never set
/// exp.expect_creations(&rs, 2);
/// assert!(!exp.satisfied_expectations(&rs));
/// exp.creation_observed(&rs);
/// exp.creation_observed(&rs);
/// assert!(exp.satisfied_expectations(&rs));
/// ```
#[derive(Debug)]
pub struct ControllerExpectations {
    records: RwLock<HashMap<ObjectKey, Arc<ControlleeExpectations>>>,
    clock: SharedClock,
}

impl Default for ControllerExpectations {
    fn default() -> Self {
        Self::new()
    }
}

impl ControllerExpectations {
    /// Expectations using the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(RealClock))
    }

    /// Expectations using the given clock (tests pass a [`FakeClock`](crate::clock::FakeClock)).
    pub fn with_clock(clock: SharedClock) -> Self {
        Self {
            records: RwLock::new(HashMap::new()),
            clock,
        }
    }

    fn get(&self, key: &ObjectKey) -> Option<Arc<ControlleeExpectations>> {
        self.records.read().get(key).cloned()
    }

    /// The current `(add, del)` counters for `key`, if a record exists.
    pub fn get_expectations(&self, key: &ObjectKey) -> Option<(i64, i64)> {
        self.get(key).map(|e| e.counts())
    }

    /// Whether a sync for `key` may create/delete: true if no record exists, the
    /// record is fulfilled, or it is older than [`EXPECTATIONS_TIMEOUT`]
    /// (an expired record is ignored, not removed).
    pub fn satisfied_expectations(&self, key: &ObjectKey) -> bool {
        let Some(exp) = self.get(key) else {
            tracing::trace!(controller = %key, "no expectations recorded");
            return true;
        };
        if exp.fulfilled() {
            return true;
        }
        let age = self.clock.now().duration_since(exp.timestamp);
        let ttl = SignedDuration::try_from(EXPECTATIONS_TIMEOUT).unwrap_or(SignedDuration::MAX);
        if age > ttl {
            tracing::debug!(controller = %key, counts = ?exp.counts(), "controller expectations expired");
            return true;
        }
        tracing::trace!(controller = %key, counts = ?exp.counts(), "still waiting on expectations");
        false
    }

    /// Removes the record for `key`.
    pub fn delete_expectations(&self, key: &ObjectKey) {
        self.records.write().remove(key);
    }

    /// Replaces the record for `key` with fresh counters, restarting the TTL.
    pub fn set_expectations(&self, key: &ObjectKey, add: i64, del: i64) {
        let rec = ControlleeExpectations {
            add: AtomicI64::new(add),
            del: AtomicI64::new(del),
            timestamp: self.clock.now(),
        };
        tracing::trace!(controller = %key, add, del, "setting expectations");
        self.records.write().insert(key.clone(), Arc::new(rec));
    }

    /// `set_expectations(key, adds, 0)`.
    pub fn expect_creations(&self, key: &ObjectKey, adds: i64) {
        self.set_expectations(key, adds, 0);
    }

    /// `set_expectations(key, 0, dels)`.
    pub fn expect_deletions(&self, key: &ObjectKey, dels: i64) {
        self.set_expectations(key, 0, dels);
    }

    /// Decrements the counters of an existing record (no-op when absent).
    pub fn lower_expectations(&self, key: &ObjectKey, add: i64, del: i64) {
        if let Some(exp) = self.get(key) {
            exp.adjust(-add, -del);
        }
    }

    /// Increments the counters of an existing record (no-op when absent).
    pub fn raise_expectations(&self, key: &ObjectKey, add: i64, del: i64) {
        if let Some(exp) = self.get(key) {
            exp.adjust(add, del);
        }
    }

    /// One creation observed (or failed): `lower_expectations(key, 1, 0)`.
    pub fn creation_observed(&self, key: &ObjectKey) {
        self.lower_expectations(key, 1, 0);
    }

    /// One deletion observed: `lower_expectations(key, 0, 1)`.
    pub fn deletion_observed(&self, key: &ObjectKey) {
        self.lower_expectations(key, 0, 1);
    }
}

/// [`ControllerExpectations`] that also remembers *which* objects (by pod key
/// `namespace/name`) it expects to see deleted, so that a graceful deletion
/// (deletionTimestamp update, then the final delete, or a NotFound on delete)
/// is counted only once.
///
/// ```
/// use kcm_controller::expectations::UIDTrackingControllerExpectations;
/// use kcm_store::ObjectKey;
/// let exp = UIDTrackingControllerExpectations::new();
/// let rs = ObjectKey::new("ns", "rs");
/// exp.expect_deletions(&rs, &["ns/p1".to_string(), "ns/p2".to_string()]);
/// exp.deletion_observed(&rs, "ns/p1");
/// exp.deletion_observed(&rs, "ns/p1"); // counted once
/// assert_eq!(exp.get_expectations(&rs), Some((0, 1)));
/// exp.deletion_observed(&rs, "ns/p2");
/// assert!(exp.satisfied_expectations(&rs));
/// ```
#[derive(Debug, Default)]
pub struct UIDTrackingControllerExpectations {
    inner: ControllerExpectations,
    uids: Mutex<HashMap<ObjectKey, HashSet<String>>>,
}

impl UIDTrackingControllerExpectations {
    /// UID-tracking expectations using the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(RealClock))
    }

    /// UID-tracking expectations using the given clock.
    pub fn with_clock(clock: SharedClock) -> Self {
        Self {
            inner: ControllerExpectations::with_clock(clock),
            uids: Mutex::new(HashMap::new()),
        }
    }

    /// The plain counter expectations underneath.
    pub fn counters(&self) -> &ControllerExpectations {
        &self.inner
    }

    /// See [`ControllerExpectations::get_expectations`].
    pub fn get_expectations(&self, key: &ObjectKey) -> Option<(i64, i64)> {
        self.inner.get_expectations(key)
    }

    /// See [`ControllerExpectations::satisfied_expectations`].
    pub fn satisfied_expectations(&self, key: &ObjectKey) -> bool {
        self.inner.satisfied_expectations(key)
    }

    /// See [`ControllerExpectations::expect_creations`] (the UID set is left untouched).
    pub fn expect_creations(&self, key: &ObjectKey, adds: i64) {
        self.inner.expect_creations(key, adds);
    }

    /// See [`ControllerExpectations::creation_observed`].
    pub fn creation_observed(&self, key: &ObjectKey) {
        self.inner.creation_observed(key);
    }

    /// See [`ControllerExpectations::lower_expectations`].
    pub fn lower_expectations(&self, key: &ObjectKey, add: i64, del: i64) {
        self.inner.lower_expectations(key, add, del);
    }

    /// See [`ControllerExpectations::raise_expectations`].
    pub fn raise_expectations(&self, key: &ObjectKey, add: i64, del: i64) {
        self.inner.raise_expectations(key, add, del);
    }

    /// The pod keys still expected to be deleted for `key` (a copy), if any set exists.
    pub fn get_uids(&self, key: &ObjectKey) -> Option<HashSet<String>> {
        self.uids.lock().get(key).cloned()
    }

    /// Records that the pods with the given keys are about to be deleted: replaces
    /// the key set and sets the counters to `(0, distinct keys)`.
    pub fn expect_deletions(&self, key: &ObjectKey, delete_keys: &[String]) {
        let expected: HashSet<String> = delete_keys.iter().cloned().collect();
        let mut uids = self.uids.lock();
        if let Some(existing) = uids.get(key)
            && !existing.is_empty()
        {
            tracing::error!(controller = %key, keys = ?existing, "Clobbering existing delete keys");
        }
        let n = i64::try_from(expected.len()).unwrap_or(i64::MAX);
        uids.insert(key.clone(), expected);
        self.inner.expect_deletions(key, n);
    }

    /// Records the deletion of `delete_key`; lowers the counter only if that key was
    /// expected (and forgets it, so a second observation does nothing).
    pub fn deletion_observed(&self, key: &ObjectKey, delete_key: &str) {
        let mut uids = self.uids.lock();
        if let Some(set) = uids.get_mut(key)
            && set.remove(delete_key)
        {
            tracing::trace!(
                controller = %key,
                pod = delete_key,
                "received expected delete"
            );
            self.inner.deletion_observed(key);
        }
    }

    /// Removes both the counters and the key set for `key`.
    pub fn delete_expectations(&self, key: &ObjectKey) {
        let mut uids = self.uids.lock();
        self.inner.delete_expectations(key);
        uids.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    /// The controller key `s` (`namespace/name` or `name`).
    fn k(s: &str) -> ObjectKey {
        ObjectKey::parse(s).expect("valid key")
    }

    fn fake() -> (FakeClock, SharedClock) {
        let c = FakeClock::new(Timestamp::from_second(1_700_000_000).unwrap());
        (c.clone(), Arc::new(c))
    }

    /// Upstream `TestControllerExpectations`.
    #[test]
    fn test_controller_expectations() {
        let (clock, shared) = fake();
        let e = Arc::new(ControllerExpectations::with_clock(shared));
        let key = &k("default/rc");
        e.set_expectations(key, 10, 30);
        let threads: Vec<_> = (0..11)
            .map(|_| {
                let (e, key) = (e.clone(), key.clone());
                std::thread::spawn(move || e.creation_observed(&key))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert!(
            !e.satisfied_expectations(key),
            "delete expectations pending"
        );
        let threads: Vec<_> = (0..31)
            .map(|_| {
                let (e, key) = (e.clone(), key.clone());
                std::thread::spawn(move || e.deletion_observed(&key))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());

        struct Case {
            name: &'static str,
            set: Option<(i64, i64)>,
            expire: bool,
            want: (i64, i64),
            want_satisfied: bool,
        }
        let cases = [
            Case {
                name: "Expectations have been surpassed",
                set: None,
                expire: false,
                want: (-1, -1),
                want_satisfied: true,
            },
            Case {
                name: "Old expectations are cleared because of ttl",
                set: Some((1, 2)),
                expire: true,
                want: (1, 2),
                want_satisfied: false,
            },
        ];
        for c in cases {
            if let Some((a, d)) = c.set {
                e.set_expectations(key, a, d);
            }
            assert_eq!(e.get_expectations(key), Some(c.want), "{}", c.name);
            assert_eq!(
                e.satisfied_expectations(key),
                c.want_satisfied,
                "{}",
                c.name
            );
            if c.expire {
                clock.step(EXPECTATIONS_TIMEOUT + Duration::from_nanos(1));
                assert!(e.satisfied_expectations(key), "{}: should expire", c.name);
            }
        }
    }

    #[test]
    fn ttl_boundary_is_strict() {
        let (clock, shared) = fake();
        let e = ControllerExpectations::with_clock(shared);
        e.expect_creations(&k("k"), 1);
        clock.step(EXPECTATIONS_TIMEOUT);
        assert!(
            !e.satisfied_expectations(&k("k")),
            "exactly 5 min is not expired"
        );
        clock.step(Duration::from_nanos(1));
        assert!(e.satisfied_expectations(&k("k")));
        // The expired record is still there and can be lowered.
        assert_eq!(e.get_expectations(&k("k")), Some((1, 0)));
        // Re-setting restarts the TTL.
        e.expect_creations(&k("k"), 1);
        assert!(!e.satisfied_expectations(&k("k")));
    }

    #[test]
    fn lower_and_raise_without_record_are_noops() {
        let e = ControllerExpectations::new();
        e.lower_expectations(&k("k"), 1, 1);
        e.raise_expectations(&k("k"), 1, 1);
        assert_eq!(e.get_expectations(&k("k")), None);
        assert!(e.satisfied_expectations(&k("k")));
        e.set_expectations(&k("k"), 0, 0);
        e.raise_expectations(&k("k"), 2, 1);
        assert_eq!(e.get_expectations(&k("k")), Some((2, 1)));
        e.lower_expectations(&k("k"), 2, 0);
        assert!(!e.satisfied_expectations(&k("k")));
        e.deletion_observed(&k("k"));
        assert!(e.satisfied_expectations(&k("k")));
        e.delete_expectations(&k("k"));
        assert_eq!(e.get_expectations(&k("k")), None);
    }

    /// Upstream `TestUIDExpectations`.
    #[test]
    fn test_uid_expectations() {
        let e = UIDTrackingControllerExpectations::new();
        let mut rc_keys = Vec::new();
        let mut rc_pods: HashMap<ObjectKey, Vec<String>> = HashMap::new();
        // Replica counts as upstream; order shuffled deterministically.
        for (n, replicas) in [5, 0, 2, 1].into_iter().enumerate() {
            let key = ObjectKey::new("default", format!("rc-{n}-{replicas}"));
            let pods: Vec<String> = (0..5).map(|i| format!("default/pod{i}-rc-{n}")).collect();
            e.expect_deletions(&key, &pods);
            rc_pods.insert(key.clone(), pods);
            rc_keys.push(key);
        }
        for key in &rc_keys {
            assert!(!e.satisfied_expectations(key), "{key} should wait");
        }
        for key in &rc_keys {
            for p in &rc_pods[key] {
                e.deletion_observed(key, p);
            }
            assert!(e.satisfied_expectations(key), "{key} should be satisfied");
            e.delete_expectations(key);
            assert!(e.get_uids(key).is_none(), "{key} uid set should be gone");
            assert_eq!(e.get_expectations(key), None);
        }
    }

    proptest::proptest! {
        /// Before expiry, satisfied ⇔ both counters ≤ 0, whatever the sequence of
        /// observations.
        #[test]
        fn satisfied_iff_fulfilled(add in 0i64..20, del in 0i64..20, ops in proptest::collection::vec(0u8..4, 0..60)) {
            let (_clock, shared) = fake();
            let e = ControllerExpectations::with_clock(shared);
            e.set_expectations(&k("k"), add, del);
            for op in ops {
                match op {
                    0 => e.creation_observed(&k("k")),
                    1 => e.deletion_observed(&k("k")),
                    2 => e.raise_expectations(&k("k"), 1, 0),
                    _ => e.lower_expectations(&k("k"), 1, 1),
                }
            }
            let (a, d) = e.get_expectations(&k("k")).unwrap();
            proptest::prop_assert_eq!(e.satisfied_expectations(&k("k")), a <= 0 && d <= 0);
        }
    }

    #[test]
    fn uid_expect_deletions_dedups_and_replaces() {
        let e = UIDTrackingControllerExpectations::new();
        let keys = ["a".to_string(), "a".to_string(), "b".to_string()];
        e.expect_deletions(&k("rs"), &keys);
        assert_eq!(e.get_expectations(&k("rs")), Some((0, 2)));
        e.deletion_observed(&k("rs"), "unknown");
        assert_eq!(e.get_expectations(&k("rs")), Some((0, 2)));
        e.deletion_observed(&k("rs"), "a");
        e.deletion_observed(&k("rs"), "a");
        assert_eq!(e.get_expectations(&k("rs")), Some((0, 1)));
        // Clobbering replaces the set and the counters.
        e.expect_deletions(&k("rs"), &["c".to_string()]);
        assert_eq!(e.get_uids(&k("rs")), Some(HashSet::from(["c".to_string()])));
        e.deletion_observed(&k("rs"), "b");
        assert_eq!(e.get_expectations(&k("rs")), Some((0, 1)));
        // Creations leave the UID set alone.
        e.expect_creations(&k("rs"), 3);
        assert_eq!(e.get_expectations(&k("rs")), Some((3, 0)));
        assert_eq!(e.get_uids(&k("rs")), Some(HashSet::from(["c".to_string()])));
    }
}
