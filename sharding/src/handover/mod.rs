//! The handover protocol (`docs/sharding.md`, "Handover protocol") as a pure state machine: how a member moves from
//! one ring to the next so that no namespace ever has two active owners.
//!
//! A member's [`Handover`] takes [`Event`]s (its Lease informer's [`View`] with the membership
//! layer's liveness judgement, drains finished, Lease writes answered, fresh lists done, its
//! fence closed, leave) and answers with [`Action`]s for its I/O shell (stop taking, wait for the
//! drain, forget and re-list, acknowledge, start). It has no clock and does no I/O: the shell
//! owns the Lease, the informers, the queue and the fence, and consults
//! [`Handover::active`] in the write path. Liveness comes from outside; the
//! [`Liveness`](crate::Liveness) tracker implements the rule the safety argument needs.
//!
//! Applying a ring R' that differs from the acknowledged R: (1) stop taking what R' does not
//! give, (2) wait for the in-flight syncs of it to drain, (3) forget it and re-list the shard of
//! R', (4) acknowledge R' in the Lease, (5) once a view contains that acknowledgement (b1), shows
//! R' as the ring of its live members (b2) and every other live member acknowledging R' (b3),
//! list the gains afresh and only then add them to the active set.
//!
//! `model` (tests) checks the claim over many interleavings of members, views that lag, Lease
//! writes that fail or stall, drains, pauses, crashes, joins and leaves.
//!
//! The crate docs walk through a join with it (a runnable example).

mod action;
mod barrier;
mod event;
mod machine;
#[cfg(test)]
mod machine_tests;
#[cfg(test)]
mod model;
mod view;
mod waiting;

pub use action::Action;
pub use event::Event;
pub use machine::{Handover, Phase};
pub use view::{MemberLease, View};
pub use waiting::Waiting;
