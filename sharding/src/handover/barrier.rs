//! Handover step 5, the barrier: when a member that acknowledged a ring may start on what it gains.

use super::view::View;
use super::waiting::Waiting;
use crate::ring::Ring;

/// Whether `view` lets `me`, which acknowledged `ring` in the Lease write that returned
/// `ack_version`, start on its gains:
///
/// - (b1) the view contains that acknowledgement: it is at least as new as the write, and shows
///   `me`'s Lease naming `ring`;
/// - (b2) the ring of the live members in the view is `ring`;
/// - (b3) every other live member in the view has acknowledged `ring`.
///
/// Members the view judges not live are not waited for: that judgement must imply their fence
/// has closed ([`Liveness`](crate::Liveness)).
pub(super) fn check(view: &View, me: &str, ring: &Ring, ack_version: u64) -> Result<(), Waiting> {
    own_acknowledgement(view, me, ring, ack_version)?;
    same_ring(view, me, ring)?;
    acknowledged_by(view, me, ring, |_| true)
}

/// (b1) The view contains `me`'s acknowledgement of `ring`, written at `ack_version`.
pub(super) fn own_acknowledgement(
    view: &View,
    me: &str,
    ring: &Ring,
    ack_version: u64,
) -> Result<(), Waiting> {
    let own = view.member(me).and_then(|m| m.applied);
    if view.version < ack_version || own != Some(ring.fingerprint()) {
        return Err(Waiting::OwnAcknowledgement {
            view: view.version,
            ack: ack_version,
        });
    }
    Ok(())
}

/// (b2) The ring of the live members in the view is `ring`. The machine applies the ring of its
/// latest view, so this holds there by construction.
pub(super) fn same_ring(view: &View, me: &str, ring: &Ring) -> Result<(), Waiting> {
    if view.ring_members(me).iter().eq(ring.members()) {
        Ok(())
    } else {
        Err(Waiting::OwnLease)
    }
}

/// (b3) Every other live member in the view for which `waited_for` holds has acknowledged `ring`.
pub(super) fn acknowledged_by(
    view: &View,
    me: &str,
    ring: &Ring,
    waited_for: impl Fn(&str) -> bool,
) -> Result<(), Waiting> {
    let fp = Some(ring.fingerprint());
    match view
        .members
        .iter()
        .find(|m| m.live && m.name != me && m.applied != fp && waited_for(&m.name))
    {
        Some(m) => Err(Waiting::Member {
            name: m.name.clone(),
            applied: m.applied,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;

    #[test]
    fn b1_b2_b3_table() {
        let ring = Ring::with_vnodes(["a", "b", "c"], NonZeroU32::MIN);
        let fp = Some(ring.fingerprint());
        let other = Some(Ring::with_vnodes(["a", "b"], NonZeroU32::MIN).fingerprint());
        let all = |version, a, b, c, c_live| {
            View::new(version)
                .with_member("a", true, a)
                .with_member("b", true, b)
                .with_member("c", c_live, c)
        };
        let member = |name: &str, applied| {
            Err(Waiting::Member {
                name: name.into(),
                applied,
            })
        };
        let behind = |view, ack| Err(Waiting::OwnAcknowledgement { view, ack });
        let cases: Vec<(&str, View, u64, Result<(), Waiting>)> = vec![
            ("all acknowledged", all(10, fp, fp, fp, true), 10, Ok(())),
            (
                "b1: view older than the ack",
                all(9, fp, fp, fp, true),
                10,
                behind(9, 10),
            ),
            (
                "b1: own Lease shows another ring",
                all(12, other, fp, fp, true),
                10,
                behind(12, 10),
            ),
            (
                "b3: b has not acknowledged",
                all(10, fp, other, fp, true),
                10,
                member("b", other),
            ),
            (
                "b3: c has no acknowledgement",
                all(10, fp, fp, None, true),
                10,
                member("c", None),
            ),
            // c not live: the ring of the live members is {a, b}, not `ring` (b2).
            (
                "b2: c not live",
                all(10, fp, fp, None, false),
                10,
                Err(Waiting::OwnLease),
            ),
        ];
        for (name, view, ack, want) in cases {
            assert_eq!(check(&view, "a", &ring, ack), want, "{name}");
        }
        // A member the view judges not live is not waited for.
        let two = Ring::with_vnodes(["a", "b"], NonZeroU32::MIN);
        let fp2 = Some(two.fingerprint());
        let view = all(10, fp2, fp2, fp, false);
        assert_eq!(check(&view, "a", &two, 10), Ok(()));
    }
}
