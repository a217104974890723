//! The reflector's sharding: listing and watching a shard (the namespaces a member owns, in
//! `kcm-sharding`'s words) and following it as it changes. Each file holds one concept; this
//! file only declares them, and every file imports from the one that defines what it needs.
//!
//! | file | what |
//! | --- | --- |
//! | `scope.rs` | [`ShardScope`](scope::ShardScope) (a shard selector and the same test on the client), [`ShardSelection`](scope::ShardSelection) (everything, a scope, nothing), the client-side filter of every reflector with a shard, the `shardInfo` echo |
//! | `dynamic.rs` | [`DynamicShard`](dynamic::DynamicShard), its generations ([`ShardGeneration`](dynamic::ShardGeneration)) and changes ([`ShardChange`](dynamic::ShardChange)), and a reflector's follower of it |
//! | `follow.rs` | a reflector following a dynamic shard: one list-and-watch attempt per generation |
//! | `step.rs` | a change stepped to without listing the whole shard: the part listed alone while the rest is watched on |
//! | `replay.rs` | the watch after a step, skipping what either part has already seen |

pub(crate) mod dynamic;
pub(crate) mod follow;
pub(crate) mod replay;
pub(crate) mod scope;
pub(crate) mod step;
