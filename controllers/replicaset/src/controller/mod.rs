//! The controller loop: informers and handlers, the `replicaset` work queue, and
//! `syncReplicaSet` executing the pure decisions of this crate against the API server.
//!
//! | file | upstream | holds |
//! |---|---|---|
//! | `replica_set_controller.rs` | `replica_set.go` (`NewReplicaSetController`, `Run`) | [`ReplicaSetController`]: wiring, workers |
//! | `context.rs` | the `ReplicaSetController` struct | the state every file shares, the parts tests build the controller from |
//! | `handlers.rs` | `replica_set.go` (`addRS` … `deletePod`) | informer event handlers, expectations observations |
//! | `sync.rs` | `replica_set.go` (`syncReplicaSet`) | one sync: expectations, claim, manage, status, availability requeue |
//! | `manage.rs` | `replica_set.go` (`manageReplicas`) | slow-start creates, ranked deletes |
//! | `writes.rs` | `replica_set_utils.go` (`updateReplicaSetStatus`) | the status write with its log line and retry, the uncached GET |

mod context;
mod handlers;
mod manage;
mod replica_set_controller;
mod sync;
mod writes;

#[cfg(test)]
pub(crate) use context::ReplicaSetControllerParts;
pub use replica_set_controller::ReplicaSetController;
