//! Table tests of [`Handover`]'s transitions, one situation each. The model tests (`model`) check
//! the safety claim over many interleavings; these pin down what each event does.

use std::num::NonZeroU32;

use super::{Action, Event, Handover, Phase, View, Waiting};
use crate::range::ShardRanges;
use crate::ring::{Ring, RingFingerprint};

const VNODES: NonZeroU32 = match NonZeroU32::new(4) {
    Some(n) => n,
    None => unreachable!(),
};

fn ring(members: &[&str]) -> Ring {
    Ring::with_vnodes(members.iter().copied(), VNODES)
}

fn fp(members: &[&str]) -> Option<RingFingerprint> {
    Some(ring(members).fingerprint())
}

/// A view at `version` of live members with their acknowledgements.
fn view(version: u64, members: &[(&str, Option<RingFingerprint>)]) -> Event {
    let mut v = View::new(version);
    for &(name, applied) in members {
        v = v.with_member(name, true, applied);
    }
    Event::View(v)
}

/// `a` holding its whole shard of the ring {a, b}, everything acknowledged at version 10.
fn a_active_with_b() -> Handover {
    let ab = fp(&["a", "b"]);
    let mut a = Handover::new("a", VNODES);
    a.handle(view(5, &[("a", None), ("b", None)]));
    a.handle(Event::LeaseWritten {
        applied: ab,
        version: 10,
    });
    let start = a.handle(view(10, &[("a", ab), ("b", ab)]));
    assert!(
        matches!(start.as_slice(), [Action::Start { .. }]),
        "{start:?}"
    );
    a.handle(Event::Listed {
        ring: ring(&["a", "b"]).fingerprint(),
    });
    assert_eq!(a.active(), &ring(&["a", "b"]).ranges("a"));
    assert_eq!(a.waiting(), None);
    a
}

#[test]
fn nothing_before_its_own_lease_is_in_view() {
    let mut a = Handover::new("a", VNODES);
    assert_eq!(a.handle(view(3, &[("b", fp(&["b"]))])), []);
    assert_eq!(a.ring(), None);
    assert_eq!(a.waiting(), Some(Waiting::OwnLease));
}

#[test]
fn b3_waits_for_every_live_member() {
    let (ab, b) = (fp(&["a", "b"]), fp(&["b"]));
    let mut a = Handover::new("a", VNODES);
    a.handle(view(5, &[("a", None), ("b", b)]));
    a.handle(Event::LeaseWritten {
        applied: ab,
        version: 6,
    });
    assert_eq!(a.handle(view(6, &[("a", ab), ("b", b)])), []);
    assert_eq!(
        a.waiting(),
        Some(Waiting::Member {
            name: "b".into(),
            applied: b
        })
    );
    let start = a.handle(view(7, &[("a", ab), ("b", ab)]));
    assert_eq!(
        start,
        [Action::Start {
            ring: ring(&["a", "b"]).fingerprint(),
            ranges: ring(&["a", "b"]).ranges("a"),
        }]
    );
    assert_eq!(a.waiting(), Some(Waiting::List));
}

#[test]
fn a_member_not_live_is_off_the_ring_and_not_waited_for() {
    let a_alone = fp(&["a"]);
    let mut a = Handover::new("a", VNODES);
    let v = View::new(5)
        .with_member("a", true, None)
        .with_member("b", false, fp(&["a", "b"]));
    assert_eq!(
        a.handle(Event::View(v.clone())),
        [
            Action::Relist(ShardRanges::full()),
            Action::Acknowledge(a_alone)
        ]
    );
    a.handle(Event::LeaseWritten {
        applied: a_alone,
        version: 6,
    });
    let mut v = v;
    v.version = 6;
    v.members[0].applied = a_alone;
    assert!(matches!(
        a.handle(Event::View(v)).as_slice(),
        [Action::Start { .. }]
    ));
}

#[test]
fn a_loss_stops_at_once_and_is_acknowledged_after_the_drain() {
    let mut a = a_active_with_b();
    let (ab, abc) = (fp(&["a", "b"]), fp(&["a", "b", "c"]));
    let lost = ring(&["a", "b"])
        .ranges("a")
        .difference(&ring(&["a", "b", "c"]).ranges("a"));
    assert!(!lost.is_empty());
    let actions = a.handle(view(11, &[("a", ab), ("b", ab), ("c", None)]));
    assert_eq!(
        actions,
        [
            Action::StopTaking(lost.clone()),
            Action::WaitDrain(lost.clone())
        ]
    );
    assert_eq!(a.active(), &ring(&["a", "b", "c"]).ranges("a"));
    assert_eq!(a.waiting(), Some(Waiting::Drain(lost.clone())));
    // A partial drain is not enough.
    let first = ShardRanges::from_ranges(lost.iter().take(1).copied());
    assert_eq!(a.handle(Event::Drained(first.clone())), []);
    let actions = a.handle(Event::Drained(lost.difference(&first)));
    assert_eq!(
        actions,
        [
            Action::Forget(lost),
            Action::Relist(ring(&["a", "b", "c"]).ranges("a")),
            Action::Acknowledge(abc),
        ]
    );
}

#[test]
fn one_acknowledgement_at_a_time_and_a_failed_one_is_written_again() {
    let mut a = Handover::new("a", VNODES);
    let (a1, ab) = (fp(&["a"]), fp(&["a", "b"]));
    a.handle(view(5, &[("a", None)]));
    // The ring changes while the first acknowledgement is in flight: no second write yet.
    assert_eq!(a.handle(view(6, &[("a", None), ("b", None)])), []);
    assert_eq!(a.waiting(), Some(Waiting::LeaseWrite));
    // The answer comes: now the next ring is acknowledged. a never started, so nothing drains,
    // but its informers listed everything for {a}: b's shard is forgotten first.
    let actions = a.handle(Event::LeaseWritten {
        applied: a1,
        version: 7,
    });
    assert_eq!(
        actions,
        [
            Action::Forget(ring(&["a", "b"]).ranges("b")),
            Action::Relist(ring(&["a", "b"]).ranges("a")),
            Action::Acknowledge(ab)
        ]
    );
    assert_eq!(a.handle(Event::LeaseWriteFailed), [Action::Acknowledge(ab)]);
    assert_eq!(a.applied(), None, "after a failure the Lease is unknown");
    // An answer for another value is not the answer: still waiting, Lease unknown.
    assert_eq!(
        a.handle(Event::LeaseWritten {
            applied: a1,
            version: 8
        }),
        []
    );
    assert_eq!(a.waiting(), Some(Waiting::LeaseWrite));
    a.handle(Event::LeaseWritten {
        applied: ab,
        version: 9,
    });
    assert_eq!(a.applied(), Some(&ring(&["a", "b"])));
}

#[test]
fn a_closed_fence_drops_everything_and_clears_the_acknowledgement_first() {
    let mut a = a_active_with_b();
    let (ab, shard) = (fp(&["a", "b"]), ring(&["a", "b"]).ranges("a"));
    let actions = a.handle(Event::FenceClosed);
    assert_eq!(
        actions,
        [
            Action::StopTaking(shard.clone()),
            Action::WaitDrain(shard.clone()),
            Action::Acknowledge(None),
        ]
    );
    assert!(a.active().is_empty());
    assert_eq!(a.phase(), Phase::Rejoining);
    // Repeated while the fence stays closed: nothing new.
    assert_eq!(a.handle(Event::FenceClosed), []);
    assert_eq!(
        a.handle(Event::Drained(shard.clone())),
        [
            Action::Forget(shard.clone()),
            Action::Relist(ShardRanges::new()),
        ]
    );
    // Cleared: a member again, it acknowledges the ring anew (the old acknowledgement is void)
    // and starts only after a new barrier.
    let actions = a.handle(Event::LeaseWritten {
        applied: None,
        version: 20,
    });
    assert_eq!(a.phase(), Phase::Member);
    assert_eq!(
        actions,
        [Action::Relist(shard.clone()), Action::Acknowledge(ab)]
    );
    assert_eq!(a.handle(view(19, &[("a", ab), ("b", ab)])), []);
    assert!(a.active().is_empty());
}

#[test]
fn a_start_is_void_when_the_fence_closes_or_the_ring_changes_before_the_list() {
    for event in [
        Event::FenceClosed,
        view(
            11,
            &[("a", fp(&["a", "b"])), ("b", fp(&["a", "b"])), ("c", None)],
        ),
    ] {
        let (ab, abc) = (fp(&["a", "b"]), fp(&["a", "b", "c"]));
        let mut a = Handover::new("a", VNODES);
        a.handle(view(5, &[("a", None), ("b", ab)]));
        a.handle(Event::LeaseWritten {
            applied: ab,
            version: 6,
        });
        a.handle(view(6, &[("a", ab), ("b", ab)]));
        a.handle(event.clone());
        a.handle(Event::Listed {
            ring: ring(&["a", "b"]).fingerprint(),
        });
        assert!(a.active().is_empty(), "after {event:?}");
        assert_ne!(a.applied().map(Ring::fingerprint), abc);
    }
}

#[test]
fn its_lease_gone_from_the_view_stops_everything() {
    let mut a = a_active_with_b();
    let shard = ring(&["a", "b"]).ranges("a");
    let actions = a.handle(view(12, &[("b", fp(&["a", "b"]))]));
    assert_eq!(
        actions,
        [Action::StopTaking(shard.clone()), Action::WaitDrain(shard)]
    );
    assert_eq!(
        a.waiting(),
        Some(Waiting::Drain(ring(&["a", "b"]).ranges("a")))
    );
}

#[test]
fn a_graceful_leave_drains_then_deletes_the_lease() {
    let mut a = a_active_with_b();
    let shard = ring(&["a", "b"]).ranges("a");
    assert_eq!(
        a.handle(Event::Leave),
        [
            Action::StopTaking(shard.clone()),
            Action::WaitDrain(shard.clone())
        ]
    );
    assert_eq!(a.phase(), Phase::Leaving);
    // Views no longer matter.
    assert_eq!(a.handle(view(12, &[("a", fp(&["a", "b"]))])), []);
    assert_eq!(
        a.handle(Event::Drained(shard.clone())),
        [
            Action::Forget(shard),
            Action::Relist(ShardRanges::new()),
            Action::DeleteLease
        ]
    );
    assert_eq!(a.phase(), Phase::Left);
    assert_eq!(a.handle(Event::FenceClosed), []);
    assert_eq!(a.handle(view(13, &[("a", None)])), []);
    assert_eq!(a.waiting(), None);
}
