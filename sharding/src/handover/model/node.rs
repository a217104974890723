//! One member's state in the simulation: its status, its clock rate, its [`Handover`], what its
//! Lease informer delivered, its Lease writer's request in flight, its fence, drains and lists.
//! The world (`world.rs`) holds the members; their I/O shell (`shell.rs`) changes them.
//!
//! [`Handover`]: crate::handover::Handover

use std::collections::BTreeMap;

use crate::handover::{Handover, View};
use crate::liveness::Liveness;
use crate::range::ShardRanges;
use crate::ring::RingFingerprint;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Status {
    Running,
    Paused {
        until: u64,
    },
    Crashed,
    /// Left: its Lease is deleted.
    Gone,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum WriteState {
    Sent,
    Done { version: u64, ok: bool },
    Lost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Write {
    /// Local time the request was sent.
    pub(super) sent: u64,
    pub(super) delete: bool,
    pub(super) applied: Option<RingFingerprint>,
    pub(super) state: WriteState,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Node {
    pub(super) name: String,
    /// Clock rate, per mille of real time.
    pub(super) rate: u64,
    pub(super) status: Status,
    pub(super) machine: Handover,
    /// How much of the history the informer delivered.
    pub(super) seen: usize,
    /// The informer delivers a change no earlier than this long (real) after its commit.
    pub(super) lag: u64,
    /// A bursty informer: it delivers only while `now % period < window` (`(period, window)`).
    pub(super) burst: Option<(u64, u64)>,
    /// Name → (resourceVersion, applied, observed at local time): for the observer-clock rule
    /// (`Rule::ObserverClock`).
    pub(super) leases: BTreeMap<String, (u64, Option<RingFingerprint>, u64)>,
    pub(super) liveness: Liveness,
    pub(super) view_version: u64,
    pub(super) fed: Option<View>,
    pub(super) annotation: Option<RingFingerprint>,
    pub(super) ack_outstanding: bool,
    pub(super) delete_wanted: bool,
    pub(super) write: Option<Write>,
    pub(super) next_renew: u64,
    /// The fence is open while the local clock is below this (closed at first).
    pub(super) fence_until: u64,
    pub(super) drains: Vec<ShardRanges>,
    pub(super) listing: Option<RingFingerprint>,
    pub(super) stalled_until: [u64; 4],
}
