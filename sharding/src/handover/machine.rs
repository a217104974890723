//! One member's handover state machine: `docs/sharding.md` ("Handover protocol") as a pure decision (events in,
//! actions out, no I/O, no clock).

use std::num::NonZeroU32;

use super::action::Action;
use super::barrier;
use super::event::Event;
use super::view::View;
use super::waiting::Waiting;
use crate::range::ShardRanges;
use crate::ring::{Ring, RingFingerprint};

/// Where a member is in its life on the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Applying the ring of the live members its view shows (handover steps 1–5).
    Member,
    /// Its fence closed: it dropped everything and clears its Lease's acknowledgement before
    /// anything else; then it is a member again, without acknowledgement.
    Rejoining,
    /// Leaving gracefully: stopping and draining everything before deleting its Lease.
    Leaving,
    /// It asked for its Lease to be deleted; it does nothing more.
    Left,
}

/// What the member's Lease is known to say.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum LeaseAck {
    /// A write failed or timed out, or none was answered yet.
    Unknown,
    /// `applied-ring` names `ring` (`None`: no ring) as of `version`.
    Known { ring: Option<Ring>, version: u64 },
}

/// The ring a member applies and its shard of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Target {
    ring: Ring,
    shard: ShardRanges,
}

/// One member's handover state machine (`docs/sharding.md`, "Handover protocol"); the [crate docs](crate) walk
/// through a join with it.
///
/// Feed it every [`Event`] with [`handle`](Handover::handle) and perform the [`Action`]s it
/// returns, in order; consult [`active`](Handover::active) in the write fence before every write.
/// It keeps these invariants, checked by the model tests over many interleavings:
///
/// - `active` is only ever extended after a barrier (handover step 5) and a fresh list, and only by
///   ranges of the ring it has acknowledged;
/// - it acknowledges a ring only when everything it still holds (active or draining) is in its
///   shard of that ring, and writes at most one acknowledgement at a time;
/// - a closed fence ([`Event::FenceClosed`]) drops everything and clears the acknowledgement
///   before anything else, so that with the shell's fence contract an acknowledgement is relied
///   on only while the fence has stayed open since it was sent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Handover {
    me: String,
    vnodes: NonZeroU32,
    phase: Phase,
    lease: LeaseAck,
    /// The ring of the outstanding [`Action::Acknowledge`] (`Some(None)`: clearing).
    pending: Option<Option<Ring>>,
    view: View,
    /// The ring of the live members in `view`; `None` while its own Lease is not in `view`.
    target: Option<Target>,
    active: ShardRanges,
    draining: ShardRanges,
    /// What the informers list and watch (the last [`Action::Relist`]).
    listed: ShardRanges,
    /// A [`Action::Start`] waiting for its [`Event::Listed`].
    starting: Option<(RingFingerprint, ShardRanges)>,
    /// Broken barriers the model tests must catch.
    #[cfg(test)]
    pub(crate) fault: Option<super::model::Fault>,
    /// The ring acknowledged before the current one (for [`super::model::Fault`]).
    #[cfg(test)]
    pub(crate) previous: Option<Ring>,
}

impl Handover {
    /// A new member `me` on rings of `vnodes` points per member; it owns nothing until its own
    /// Lease shows in a [`View`] and a barrier passes.
    pub fn new(me: impl Into<String>, vnodes: NonZeroU32) -> Self {
        Self {
            me: me.into(),
            vnodes,
            phase: Phase::Member,
            lease: LeaseAck::Unknown,
            pending: None,
            view: View::default(),
            target: None,
            active: ShardRanges::new(),
            draining: ShardRanges::new(),
            listed: ShardRanges::new(),
            starting: None,
            #[cfg(test)]
            fault: None,
            #[cfg(test)]
            previous: None,
        }
    }

    /// The member's name.
    #[must_use]
    pub fn me(&self) -> &str {
        &self.me
    }

    /// Where the member is in its life on the ring.
    #[must_use]
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The ranges the write fence allows (with an open fence): the only ones to process.
    #[must_use]
    pub fn active(&self) -> &ShardRanges {
        &self.active
    }

    /// Stopped ranges whose in-flight syncs have not all finished.
    #[must_use]
    pub fn draining(&self) -> &ShardRanges {
        &self.draining
    }

    /// The ring being applied: that of the live members in the latest view.
    #[must_use]
    pub fn ring(&self) -> Option<&Ring> {
        self.target.as_ref().map(|t| &t.ring)
    }

    /// The ring the member's Lease is known to acknowledge.
    #[must_use]
    pub fn applied(&self) -> Option<&Ring> {
        match &self.lease {
            LeaseAck::Known { ring, .. } => ring.as_ref(),
            LeaseAck::Unknown => None,
        }
    }

    /// What keeps the member from holding its whole shard; `None` once it does (or has left).
    #[must_use]
    pub fn waiting(&self) -> Option<Waiting> {
        match self.phase {
            Phase::Left => return None,
            Phase::Leaving if self.draining.is_empty() && self.pending.is_none() => {
                return Some(Waiting::Leaving);
            }
            Phase::Leaving | Phase::Rejoining | Phase::Member => {}
        }
        if self.pending.is_some() {
            return Some(Waiting::LeaseWrite);
        }
        if !self.draining.is_empty() {
            return Some(Waiting::Drain(self.draining.clone()));
        }
        let Some(target) = &self.target else {
            return Some(Waiting::OwnLease);
        };
        if self.phase == Phase::Rejoining || self.acked() != Some(target.ring.fingerprint()) {
            return Some(Waiting::LeaseWrite);
        }
        if self.starting.is_some() {
            return Some(Waiting::List);
        }
        if self.active == target.shard {
            return None;
        }
        self.barrier(&target.ring).err()
    }

    /// Takes one event; returns what to do, in order.
    pub fn handle(&mut self, event: Event) -> Vec<Action> {
        let mut out = Vec::new();
        match event {
            Event::View(view) => self.observe(view),
            Event::Drained(ranges) => self.draining = self.draining.difference(&ranges),
            Event::LeaseWritten { applied, version } => self.lease_written(applied, version),
            Event::LeaseWriteFailed => {
                self.pending = None;
                self.lease = LeaseAck::Unknown;
            }
            Event::Listed { ring } => self.listed_afresh(ring),
            Event::FenceClosed => {
                if matches!(self.phase, Phase::Member | Phase::Rejoining) {
                    self.phase = Phase::Rejoining;
                }
                self.starting = None;
                self.stop_outside(&ShardRanges::new(), &mut out);
            }
            Event::Leave => {
                if self.phase != Phase::Left {
                    self.phase = Phase::Leaving;
                    self.starting = None;
                }
            }
        }
        self.drive(&mut out);
        out
    }

    fn observe(&mut self, view: View) {
        let names = view.ring_members(&self.me);
        let present = view.member(&self.me).is_some();
        let unchanged = self
            .target
            .as_ref()
            .is_some_and(|t| t.ring.members().iter().eq(names.iter().copied()));
        if !present {
            self.target = None;
        } else if !unchanged {
            let ring = Ring::with_vnodes(names, self.vnodes);
            let shard = ring.ranges(&self.me);
            self.target = Some(Target { ring, shard });
        }
        self.view = view;
    }

    fn lease_written(&mut self, applied: Option<RingFingerprint>, version: u64) {
        let fp = |r: &Option<Ring>| r.as_ref().map(Ring::fingerprint);
        let ring = match self.pending.take() {
            Some(ring) if fp(&ring) == applied => ring,
            other => {
                // Not the answer to the outstanding write: keep waiting for that one.
                self.pending = other;
                self.lease = LeaseAck::Unknown;
                return;
            }
        };
        #[cfg(test)]
        if let LeaseAck::Known {
            ring: Some(old), ..
        } = &self.lease
            && Some(old.fingerprint()) != applied
        {
            self.previous = Some(old.clone());
        }
        self.lease = LeaseAck::Known { ring, version };
    }

    fn listed_afresh(&mut self, ring: RingFingerprint) {
        let Some((fp, ranges)) = self.starting.take() else {
            return;
        };
        if fp != ring {
            // The answer to an older, cancelled start.
            self.starting = Some((fp, ranges));
            return;
        }
        // A start is cancelled whenever the target or the acknowledgement changes (`drive`), so
        // the barrier this list follows still stands; checked again all the same.
        if let Some(target) = &self.target
            && self.phase == Phase::Member
            && self.pending.is_none()
            && target.ring.fingerprint() == fp
            && self.acked() == Some(fp)
        {
            self.active = self.active.union(&ranges.intersection(&target.shard));
        }
    }

    fn drive(&mut self, out: &mut Vec<Action>) {
        match self.phase {
            Phase::Left => {}
            Phase::Leaving => {
                self.stop_outside(&ShardRanges::new(), out);
                if self.draining.is_empty() && self.pending.is_none() {
                    self.forget_all(out);
                    out.push(Action::DeleteLease);
                    self.phase = Phase::Left;
                }
            }
            Phase::Rejoining => {
                if self.draining.is_empty() {
                    self.forget_all(out);
                }
                if self.pending.is_some() {
                    return;
                }
                if matches!(self.lease, LeaseAck::Known { ring: None, .. }) {
                    self.phase = Phase::Member;
                    self.drive_member(out);
                } else {
                    out.push(Action::Acknowledge(None));
                    self.pending = Some(None);
                }
            }
            Phase::Member => self.drive_member(out),
        }
    }

    fn drive_member(&mut self, out: &mut Vec<Action>) {
        let shard = self
            .target
            .as_ref()
            .map_or_else(ShardRanges::new, |t| t.shard.clone());
        // Step 1: stop taking what the ring does not give.
        self.stop_outside(&shard, out);
        let Some(ring) = self.target.as_ref().map(|t| t.ring.fingerprint()) else {
            self.starting = None;
            return;
        };
        if self.starting.as_ref().is_some_and(|(fp, _)| *fp != ring) {
            self.starting = None;
        }
        if self.pending.is_some() {
            return;
        }
        if self.acked() != Some(ring) {
            // Steps 2–4: once no sync outside the shard is in flight, forget, re-list and
            // acknowledge.
            if self.draining.difference(&shard).is_empty() {
                let forget = self.listed.difference(&shard);
                if !forget.is_empty() {
                    out.push(Action::Forget(forget));
                }
                if self.listed != shard {
                    out.push(Action::Relist(shard.clone()));
                    self.listed = shard;
                }
                out.push(Action::Acknowledge(Some(ring)));
                self.pending = Some(self.target.as_ref().map(|t| t.ring.clone()));
            }
            return;
        }
        // Step 5: the barrier, then a fresh list. Own syncs of ranges stopped earlier and
        // regained since must have finished too.
        if self.draining.is_empty() && self.starting.is_none() {
            let gained = shard.difference(&self.active);
            if let Some(target) = &self.target
                && !gained.is_empty()
                && self.barrier(&target.ring).is_ok()
            {
                self.starting = Some((ring, gained.clone()));
                out.push(Action::Start {
                    ring,
                    ranges: gained,
                });
            }
        }
    }

    /// The barrier for `ring`, which the member's Lease is known to acknowledge.
    fn barrier(&self, ring: &Ring) -> Result<(), Waiting> {
        let LeaseAck::Known { version, .. } = self.lease else {
            return Err(Waiting::LeaseWrite);
        };
        #[cfg(test)]
        if let Some(fault) = self.fault {
            return fault.barrier(&self.view, &self.me, ring, version, self.previous.as_ref());
        }
        barrier::check(&self.view, &self.me, ring, version)
    }

    fn acked(&self) -> Option<RingFingerprint> {
        self.applied().map(Ring::fingerprint)
    }

    /// Steps 1–2 for everything active outside `keep`.
    fn stop_outside(&mut self, keep: &ShardRanges, out: &mut Vec<Action>) {
        let lost = self.active.difference(keep);
        if lost.is_empty() {
            return;
        }
        self.active = self.active.intersection(keep);
        self.draining = self.draining.union(&lost);
        out.push(Action::StopTaking(lost.clone()));
        out.push(Action::WaitDrain(lost));
    }

    fn forget_all(&mut self, out: &mut Vec<Action>) {
        if !self.listed.is_empty() {
            out.push(Action::Forget(std::mem::take(&mut self.listed)));
            out.push(Action::Relist(ShardRanges::new()));
        }
    }
}
