//! What a member's [`Handover`](super::Handover) asks its I/O shell to do.

use crate::range::ShardRanges;
use crate::ring::RingFingerprint;

/// An output of the handover state machine, to be performed in the order given.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Handover step 1: these ranges left the active set. Event handlers and the queue drop their keys;
    /// the write path refuses them (it consults [`Handover::active`](super::Handover::active)).
    StopTaking(ShardRanges),
    /// Handover step 2: report [`Event::Drained`](super::Event::Drained) once every in-flight sync of
    /// these ranges has finished.
    WaitDrain(ShardRanges),
    /// Handover step 3: drop expectations, queued keys and cached objects of these ranges.
    Forget(ShardRanges),
    /// Handover step 3: list and watch exactly these ranges from now on (the informers' shard
    /// selector); the ranges not yet active are cached but not processed.
    Relist(ShardRanges),
    /// Handover step 4: write `sharding.kcm.io/applied-ring` in the member's Lease (`None`: clear it),
    /// with a renewal; answer with [`LeaseWritten`](super::Event::LeaseWritten) or
    /// [`LeaseWriteFailed`](super::Event::LeaseWriteFailed). At most one is outstanding.
    Acknowledge(Option<RingFingerprint>),
    /// Handover step 5: the barrier passed. List these ranges afresh with a consistent read issued
    /// now, then report [`Listed`](super::Event::Listed); they become active only then.
    Start {
        /// The ring whose barrier passed.
        ring: RingFingerprint,
        /// The ranges to list and then process.
        ranges: ShardRanges,
    },
    /// Graceful leave: everything is drained; delete the member's Lease.
    DeleteLease,
}
