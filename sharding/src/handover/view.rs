//! The ring's membership as one member's Lease informer shows it: the input of every handover
//! decision.

use crate::ring::RingFingerprint;

/// The membership Leases of a ring as a member's informer shows them at one point of the Lease
/// history (a consistent prefix, `docs/sharding.md`, "Membership"), with the membership layer's liveness
/// judgement of each.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct View {
    /// How far into the Lease history the view reaches: the highest Lease `resourceVersion` seen
    /// (the informer's last list, event or bookmark). Compared with the version an
    /// acknowledgement was written at, it tells whether the view contains that write (the barrier's b1).
    pub version: u64,
    /// One entry per Lease present in the view, in any order.
    pub members: Vec<MemberLease>,
}

/// One membership Lease in a [`View`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemberLease {
    /// The member's name (`spec.holderIdentity`).
    pub name: String,
    /// Whether the membership layer counts the member as live (see [`Liveness`](crate::Liveness)
    /// for the rule that makes this safe). A member always counts itself once its Lease is here.
    pub live: bool,
    /// The ring the member has acknowledged (annotation `sharding.kcm.io/applied-ring`), if any.
    pub applied: Option<RingFingerprint>,
}

impl View {
    /// An empty view at `version`.
    #[must_use]
    pub fn new(version: u64) -> Self {
        Self {
            version,
            members: Vec::new(),
        }
    }

    /// Adds a Lease (builder style).
    #[must_use]
    pub fn with_member(
        mut self,
        name: impl Into<String>,
        live: bool,
        applied: Option<RingFingerprint>,
    ) -> Self {
        self.members.push(MemberLease {
            name: name.into(),
            live,
            applied,
        });
        self
    }

    /// The Lease of `name`, if the view has it.
    #[must_use]
    pub fn member(&self, name: &str) -> Option<&MemberLease> {
        self.members.iter().find(|m| m.name == name)
    }

    /// The names the ring is computed from, sorted and deduplicated: the live members, and `me`
    /// if its own Lease is in the view (whatever its liveness flag says).
    #[must_use]
    pub fn ring_members(&self, me: &str) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .members
            .iter()
            .filter(|m| m.live || m.name == me)
            .map(|m| m.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_members_are_the_live_ones_and_me() {
        let view = View::new(7)
            .with_member("c", true, None)
            .with_member("a", false, None)
            .with_member("me", false, None)
            .with_member("b", true, None);
        assert_eq!(view.ring_members("me"), ["b", "c", "me"]);
        assert_eq!(view.ring_members("a"), ["a", "b", "c"]);
        assert_eq!(view.ring_members("x"), ["b", "c"]);
        assert!(view.member("a").is_some_and(|m| !m.live));
        assert!(view.member("zz").is_none());
    }
}
