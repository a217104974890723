//! Which members of a ring a member counts as live: the membership layer's judgement behind the
//! handover's [`View`] (`docs/sharding.md`, "Membership"), as a pure tracker over what the member's Lease
//! informer delivered and its own monotonic clock.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::handover::{MemberLease, View};
use crate::ring::RingFingerprint;

/// One membership Lease as the informer delivered it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeaseRecord {
    /// The member (`spec.holderIdentity`).
    pub name: String,
    /// The Lease's `metadata.resourceVersion`.
    pub resource_version: u64,
    /// Its `sharding.kcm.io/applied-ring` annotation.
    pub applied: Option<RingFingerprint>,
}

/// The liveness judgement of one member over its ring's Leases. Times are the member's own
/// monotonic clock, as offsets from any fixed origin.
///
/// **The rule.** A member M is *not live* for observer J once J has seen no change of M's Lease
/// for the lease duration LD, *measured up to a point where J's view is known to be complete*:
/// J's view contains a write of J's own Lease that J sent at least LD (on J's clock) after it
/// observed M's last change. Time passing alone never expires anyone.
///
/// Why not client-go's rule (expired LD after the last observed change, by the observer's
/// clock)? Leader election gets away with it because the takeover is a compare-and-swap on the
/// one Lease: a stale view makes the update fail. Membership has no such write: a member whose
/// Lease watch lags (or stalls) simply never sees the renewals of a live member and would start
/// on its namespaces while that member is still active; the handover's barrier does not catch
/// every such case (the model tests hold a concrete schedule). Anchoring the expiry at J's own
/// write restores the fence argument: every write of M that is not in the view committed after
/// J's anchoring write, which J sent at least LD after observing M's last change, so none of
/// them was answered before then; M's fence, opened at the latest when M *sent* that last
/// change, had closed LD × (1 − margin) later by M's clock, before J sent the anchor (assumption
/// A2, margin > 2ρ/(1+ρ)). So M was fenced, and dropped everything, before J judged it gone.
///
/// ```
/// use std::time::Duration;
/// use kcm_sharding::{LeaseRecord, Liveness};
///
/// let s = Duration::from_secs;
/// let lease = |name: &str, resource_version| LeaseRecord {
///     name: name.into(),
///     resource_version,
///     applied: None,
/// };
/// let mut j = Liveness::new("j", s(15));
/// j.observe(11, [lease("j", 10), lease("m", 11)], s(0));
/// // 20 s later, with no new Lease event: the view may be stale, so m still counts.
/// assert!(j.is_live("m"));
/// // j's renewal sent at 16 s returned version 30; once the view reaches it, m is gone.
/// j.own_write(30, s(16));
/// assert!(j.is_live("m"));
/// j.observe(30, [lease("j", 30), lease("m", 11)], s(20));
/// assert!(!j.is_live("m"));
/// assert!(j.view().member("m").is_some_and(|m| !m.live));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Liveness {
    me: String,
    lease_duration: Duration,
    leases: BTreeMap<String, Observed>,
    view_version: u64,
    /// Own successful writes not yet in the view: (resourceVersion, sent at).
    own_writes: Vec<(u64, Duration)>,
    /// When the newest own write the view contains was sent.
    complete_at: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Observed {
    resource_version: u64,
    applied: Option<RingFingerprint>,
    changed_at: Duration,
}

impl Liveness {
    /// The judgement of member `me` with lease duration `lease_duration` (LD).
    pub fn new(me: impl Into<String>, lease_duration: Duration) -> Self {
        Self {
            me: me.into(),
            lease_duration,
            leases: BTreeMap::new(),
            view_version: 0,
            own_writes: Vec::new(),
            complete_at: None,
        }
    }

    /// A write of the member's own Lease succeeded, returning `resource_version`; the request was
    /// sent at `sent_at` (before the write, as the fence counts it).
    pub fn own_write(&mut self, resource_version: u64, sent_at: Duration) {
        self.own_writes.push((resource_version, sent_at));
        self.settle_own_writes();
    }

    /// The informer's Leases after it reached `view_version`, delivered at `now`: every Lease
    /// present (absent ones are gone).
    pub fn observe(
        &mut self,
        view_version: u64,
        leases: impl IntoIterator<Item = LeaseRecord>,
        now: Duration,
    ) {
        let mut next = BTreeMap::new();
        for lease in leases {
            let changed_at = match self.leases.get(&lease.name) {
                Some(old) if old.resource_version == lease.resource_version => old.changed_at,
                _ => now,
            };
            next.insert(
                lease.name,
                Observed {
                    resource_version: lease.resource_version,
                    applied: lease.applied,
                    changed_at,
                },
            );
        }
        self.leases = next;
        self.view_version = self.view_version.max(view_version);
        self.settle_own_writes();
    }

    /// Whether `name`'s Lease is in the view and counts as live.
    #[must_use]
    pub fn is_live(&self, name: &str) -> bool {
        self.leases
            .get(name)
            .is_some_and(|lease| self.live(name, lease))
    }

    /// The view to feed the handover ([`Event::View`](crate::Event::View)).
    #[must_use]
    pub fn view(&self) -> View {
        View {
            version: self.view_version,
            members: self
                .leases
                .iter()
                .map(|(name, lease)| MemberLease {
                    name: name.clone(),
                    live: self.live(name, lease),
                    applied: lease.applied,
                })
                .collect(),
        }
    }

    fn live(&self, name: &str, lease: &Observed) -> bool {
        name == self.me
            || self
                .complete_at
                .is_none_or(|at| at < lease.changed_at.saturating_add(self.lease_duration))
    }

    fn settle_own_writes(&mut self) {
        let version = self.view_version;
        for &(_, sent_at) in self.own_writes.iter().filter(|(v, _)| *v <= version) {
            self.complete_at = Some(self.complete_at.map_or(sent_at, |at| at.max(sent_at)));
        }
        self.own_writes.retain(|(v, _)| *v > version);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(name: &str, resource_version: u64) -> LeaseRecord {
        LeaseRecord {
            name: name.into(),
            resource_version,
            applied: None,
        }
    }

    const LD: Duration = Duration::from_secs(15);

    fn s(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    #[test]
    fn expiry_needs_an_own_write_sent_ld_after_the_last_change_in_the_view() {
        // (own write sent at, its version, view version, live?)
        let cases = [
            (s(14), 20, 20, true),  // sent less than LD after m's change
            (s(15), 20, 20, false), // exactly LD after
            (s(40), 20, 19, true),  // sent late enough, but the view does not contain it
            (s(40), 20, 25, false), // the view is past it
        ];
        for (sent, version, view_version, live) in cases {
            let mut j = Liveness::new("j", LD);
            j.observe(5, [lease("j", 4), lease("m", 5)], s(0));
            j.own_write(version, sent);
            j.observe(view_version, [lease("j", 4), lease("m", 5)], s(100));
            assert_eq!(
                j.is_live("m"),
                live,
                "sent {sent:?} v{version} view v{view_version}"
            );
            assert!(j.is_live("j"), "a member always counts itself");
        }
    }

    #[test]
    fn a_change_restarts_the_lease_and_gone_leases_leave_the_view() {
        let mut j = Liveness::new("j", LD);
        j.observe(5, [lease("j", 4), lease("m", 5)], s(0));
        j.observe(8, [lease("j", 4), lease("m", 8)], s(10));
        j.own_write(9, s(20));
        j.observe(9, [lease("j", 9), lease("m", 8)], s(21));
        assert!(j.is_live("m"), "changed at 10 s, anchor sent at 20 s");
        j.own_write(12, s(25));
        j.observe(12, [lease("j", 12), lease("m", 8)], s(26));
        assert!(!j.is_live("m"));
        // A relist at the same resourceVersion is no change.
        j.observe(12, [lease("j", 12), lease("m", 8)], s(27));
        assert!(!j.is_live("m"));
        j.observe(13, [lease("j", 12)], s(28));
        assert!(j.view().member("m").is_none());
        assert!(!j.is_live("m"));
        assert_eq!(j.view().version, 13);
    }

    #[test]
    fn time_alone_expires_nobody() {
        let mut j = Liveness::new("j", LD);
        j.observe(5, [lease("j", 4), lease("m", 5)], s(0));
        j.observe(5, [lease("j", 4), lease("m", 5)], s(3600));
        assert!(j.is_live("m"));
    }
}
