//! What keeps a member from holding its whole shard: for logs, metrics and a stuck-ring
//! condition (`docs/sharding.md`, "Handover protocol", liveness).

use std::fmt;

use crate::range::ShardRanges;
use crate::ring::RingFingerprint;

/// Why a member is not (yet) active on its whole shard, as [`Handover::waiting`] tells.
///
/// [`Handover::waiting`]: super::Handover::waiting
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Waiting {
    /// Its own Lease is not in its view yet: it is on no ring and owns nothing.
    OwnLease,
    /// In-flight syncs of these stopped ranges have not finished.
    Drain(ShardRanges),
    /// Its Lease write (an acknowledgement, or the clearing one when rejoining) has no answer.
    LeaseWrite,
    /// b1: its view does not contain its acknowledgement yet.
    OwnAcknowledgement {
        /// The view's version.
        view: u64,
        /// The version the acknowledgement was written at.
        ack: u64,
    },
    /// b3: a live member has not acknowledged the ring. Stuck here for long with the member
    /// live: it runs with another ring encoding or vnode count, or its Lease watch lags.
    Member {
        /// The member waited for.
        name: String,
        /// What it has acknowledged instead.
        applied: Option<RingFingerprint>,
    },
    /// The fresh list of the gained ranges has not completed.
    List,
    /// Leaving: the Lease deletion is up to the shell.
    Leaving,
}

impl fmt::Display for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OwnLease => f.write_str("own Lease not in view yet"),
            Self::Drain(r) => write!(f, "draining {r}"),
            Self::LeaseWrite => f.write_str("Lease write in flight"),
            Self::OwnAcknowledgement { view, ack } => {
                write!(f, "view at {view}, own acknowledgement at {ack}")
            }
            Self::Member { name, applied } => match applied {
                Some(fp) => write!(f, "member {name} has acknowledged ring {fp}"),
                None => write!(f, "member {name} has acknowledged no ring"),
            },
            Self::List => f.write_str("listing the gained ranges"),
            Self::Leaving => f.write_str("leaving"),
        }
    }
}
