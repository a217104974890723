//! Model checking of the claim of `docs/sharding.md` ("Handover protocol"): no hash is ever in the active set of two
//! members at once (as their write fences allow it), and once faults stop every hash gets
//! exactly one active owner.
//!
//! - `world`: the simulated system (Lease store and history, clocks, members, faults) and the
//!   claim checked after every step; `shell`: one member's I/O shell around its [`Handover`]
//!   (informer, serial Lease writer, write fence: the contract a real shell must keep);
//! - `swarm` (fine-grained steps with per-schedule weights) and `rounds` (coarse rounds with
//!   long one-sided stalls): seeded random schedules, each followed by a quiet period that checks
//!   liveness (`schedule`); `exhaustive`: every schedule of a few steps from chosen states;
//! - `tests`: the protocol over many schedules, and deliberately broken variants ([`Fault`], the
//!   observer-clock liveness rule of the first draft) that the checker must catch.
//!
//! Longer runs: `SHARDING_MODEL_SCHEDULES=100000 cargo test -p kcm-sharding --release model`
//! (schedules per driver), `SHARDING_MODEL_STEPS` (steps per swarm schedule),
//! `SHARDING_MODEL_DEPTH` (exhaustive depth); `-- --ignored` adds the unaided search for the
//! observer-clock counterexample.
//!
//! [`Handover`]: super::Handover

mod exhaustive;
mod node;
mod rounds;
mod schedule;
mod shell;
mod swarm;
mod tests;
mod world;

use super::barrier;
use super::view::View;
use super::waiting::Waiting;
use crate::ring::Ring;

/// A deliberately broken barrier, for showing the checker catches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Fault {
    /// No (b1): a view older than the member's own acknowledgement may pass.
    SkipB1,
    /// (b3) waits only for the previous owners of the gained ranges (their owners in the last
    /// ring the member acknowledged before this one, a rejoin's cleared acknowledgement skipped;
    /// for a newcomer, the ring without it), not for every live member.
    PreviousOwnerOnly,
}

impl Fault {
    pub(crate) fn barrier(
        self,
        view: &View,
        me: &str,
        ring: &Ring,
        ack_version: u64,
        previous: Option<&Ring>,
    ) -> Result<(), Waiting> {
        match self {
            Self::SkipB1 => {
                barrier::same_ring(view, me, ring)?;
                barrier::acknowledged_by(view, me, ring, |_| true)
            }
            Self::PreviousOwnerOnly => {
                barrier::own_acknowledgement(view, me, ring, ack_version)?;
                barrier::same_ring(view, me, ring)?;
                let before = previous.cloned().unwrap_or_else(|| {
                    Ring::with_vnodes(
                        ring.members().iter().filter(|m| m.as_str() != me),
                        ring.vnodes(),
                    )
                });
                let gains = ring.ranges(me).difference(&before.ranges(me));
                barrier::acknowledged_by(view, me, ring, |name| {
                    !before.ranges(name).intersection(&gains).is_empty()
                })
            }
        }
    }
}
