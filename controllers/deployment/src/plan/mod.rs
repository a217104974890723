//! The decision layer: what a sync should do, as free functions over k8s-openapi objects with
//! an explicit `now`, returning plans (a [`ScaleStep`](scale::ScaleStep) list, a
//! [`RollingPlan`](rolling::RollingPlan), a status to write, …) that
//! [`controller`](crate::controller) executes. Nothing here performs I/O; every file is tested
//! by tables beside it.
//!
//! | file | upstream | decides |
//! |---|---|---|
//! | `dispatch.rs` | `deployment_controller.go` (`syncDeployment`) | which path a sync takes, and the steps before it |
//! | `new_replica_set.rs` | `sync.go` (`getNewReplicaSet`, `getAllReplicaSetsAndSyncRevision`) | old vs. new ReplicaSets, revisions, the new ReplicaSet to create, AlreadyExists and create failures |
//! | `scale.rs` | `sync.go` (`scale`, `isScalingEvent`, `scaleReplicaSet`) | resize steps, proportional scaling |
//! | `status.rs` | `sync.go` (`calculateStatus`, `syncDeploymentStatus`) | the status to write |
//! | `paused.rs` | `sync.go` (`checkPausedConditions`) | the paused/resumed Progressing condition |
//! | `cleanup.rs` | `sync.go` (`cleanupDeployment`) | which old ReplicaSets to delete |
//! | `rolling.rs` | `rolling.go` | the RollingUpdate plan of one pass |
//! | `recreate.rs` | `recreate.go` | the Recreate plan of one pass |
//! | `rollback.rs` | `rollback.go` | the legacy rollback annotation |
//! | `progress.rs` | `progress.go` | the Progressing/ReplicaFailure conditions, the stuck re-check |

pub(crate) mod cleanup;
pub(crate) mod dispatch;
pub(crate) mod new_replica_set;
pub(crate) mod paused;
pub(crate) mod progress;
pub(crate) mod recreate;
pub(crate) mod rollback;
pub(crate) mod rolling;
pub(crate) mod scale;
pub(crate) mod status;

#[cfg(test)]
mod rollout_math_proptests;
#[cfg(test)]
mod simulation_tests;
