//! The sharding of this crate: one member of a ring of active replicas (the vocabulary is
//! `kcm-sharding`'s: a *member* owns a *shard* of the namespaces, a *handover* moves them). Each
//! file holds one concept; this file only declares them.
//!
//! | file | what |
//! | --- | --- |
//! | `membership.rs` | [`Membership`](membership::Membership): the member's own Lease, renewed with the ring it applied, each renewal opening its write fence; the ring's Leases as it sees them |
//! | `gate.rs` | [`ShardGate`](gate::ShardGate): the namespaces its controllers may write now, and the writes in flight a drain waits for |
//! | `shell.rs` | [`ShardMember`](shell::ShardMember): the handover's I/O shell, tying the Lease, the liveness judgement, the handover, the gate and the informers' shard together |

pub(crate) mod gate;
pub(crate) mod membership;
pub(crate) mod shell;
