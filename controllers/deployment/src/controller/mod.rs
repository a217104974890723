//! The I/O layer: informers and handlers, the `deployment` work queue, and `syncDeployment`
//! executing the plans of [`crate::plan`] against the API server.
//!
//! | file | upstream | holds |
//! |---|---|---|
//! | `deployment_controller.rs` | `deployment_controller.go` | [`DeploymentController`]: wiring, workers, `handleErr` |
//! | `context.rs` | the `DeploymentController` struct | the state every file shares: caches, queue, recorder, clock |
//! | `handlers.rs` | `deployment_controller.go` | informer event handlers, `resolveControllerRef` |
//! | `sync_deployment.rs` | `deployment_controller.go`, `sync.go` | `syncDeployment` (a `match` on [`crate::plan::dispatch::sync_path`]), its short paths (`syncStatusOnly`, `sync`), `getReplicaSetsForDeployment` |
//! | `pod_map.rs` | `deployment_controller.go` | `getPodMapForDeployment` |
//! | `rollouts.rs` | `rolling.go`, `recreate.go`, `rollback.go` | `rolloutRolling`, `rolloutRecreate`, `rollback`: each executes its plan |
//! | `replica_set_changes.rs` | `sync.go` | `getAllReplicaSetsAndSyncRevision`/`getNewReplicaSet`, `scaleReplicaSet`, `cleanupDeployment` |
//! | `status_updates.rs` | `sync.go`, `progress.go` | `syncDeploymentStatus`, `checkPausedConditions`, `syncRolloutStatus` |
//! | `writes.rs` | — | every API write, each with its log line |
//! | `slow_retry.rs` | — | kcm's slow retry of dropped keys |
//! | `sync_error.rs` | — | [`SyncError`] |

mod context;
mod deployment_controller;
mod handlers;
mod pod_map;
mod replica_set_changes;
mod rollouts;
mod slow_retry;
mod status_updates;
mod sync_deployment;
mod sync_error;
mod writes;

pub use deployment_controller::DeploymentController;
pub use slow_retry::DROPPED_KEY_RETRY_PERIOD;
pub use sync_error::SyncError;
