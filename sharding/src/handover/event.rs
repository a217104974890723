//! What the I/O shell tells a member's [`Handover`](super::Handover).

use super::view::View;
use crate::range::ShardRanges;
use crate::ring::RingFingerprint;

/// An input of the handover state machine. The shell feeds every one it observes, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// The Lease informer (and the membership layer's liveness judgement) changed. Feed the
    /// whole current view each time; the machine keeps only the latest.
    View(View),
    /// Every in-flight sync of these ranges has finished: its writes got an answer (success or
    /// a definite error). Answers a [`WaitDrain`](super::Action::WaitDrain), possibly in parts.
    Drained(ShardRanges),
    /// The member's Lease says `applied` as of `version` (the `resourceVersion` the write
    /// returned): the answer to an [`Acknowledge`](super::Action::Acknowledge) that succeeded.
    LeaseWritten {
        /// The annotation written (`None`: cleared).
        applied: Option<RingFingerprint>,
        /// The Lease's `resourceVersion` after the write.
        version: u64,
    },
    /// The answer to an [`Acknowledge`](super::Action::Acknowledge) that failed or whose outcome
    /// is unknown (a timeout): the machine no longer knows what its Lease says and writes again.
    LeaseWriteFailed,
    /// The fresh list asked for by [`Start`](super::Action::Start) for `ring` has completed.
    Listed {
        /// The ring the start was for.
        ring: RingFingerprint,
    },
    /// The write fence is closed: no Lease write sent within the last LD × (1 − margin), by the
    /// member's own clock, has been answered with success. Feed it whenever the shell finds the
    /// fence closed: on every check while it stays closed (a timer), and before the answer to a
    /// Lease write if the fence was closed at any moment since the previous answer, even when
    /// this answer reopens it. A new member's fence is closed until its first write is answered
    /// in time. The machine then drops everything and clears its acknowledgement: an
    /// acknowledgement may be relied on only while the fence has stayed open since it was sent
    /// (`docs/sharding.md`, "Handover protocol"), and the machine cannot see the fence otherwise.
    FenceClosed,
    /// Leave the ring gracefully: stop and drain everything, then delete the Lease.
    Leave,
}
