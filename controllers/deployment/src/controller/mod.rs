//! The controller loop: informers and handlers, the `deployment` work queue, and
//! `syncDeployment` executing the pure decisions of this crate against the API server.
//!
//! | file | upstream | holds |
//! |---|---|---|
//! | `deployment_controller.rs` | `deployment_controller.go` | [`DeploymentController`]: wiring, workers, `handleErr` |
//! | `context.rs` | the `DeploymentController` struct | the state every file shares: caches, queue, recorder, clock |
//! | `handlers.rs` | `deployment_controller.go` | informer event handlers, `resolveControllerRef` |
//! | `sync_deployment.rs` | `deployment_controller.go` | `syncDeployment` (a `match` on [`crate::dispatch::sync_path`]), `getReplicaSetsForDeployment` |
//! | `pod_map.rs` | `deployment_controller.go` | `getPodMapForDeployment` |
//! | `sync.rs`, `rolling.rs`, `recreate.rs`, `rollback.rs`, `progress.rs` | the same names | the I/O half of each file; the decisions are in the same-named modules of the crate root |
//! | `writes.rs` | — | every API write, each with its log line |
//! | `slow_retry.rs` | — | kcm's slow retry of dropped keys |
//! | `sync_error.rs` | — | [`SyncError`] |

mod context;
mod deployment_controller;
mod handlers;
mod pod_map;
mod progress;
mod recreate;
mod rollback;
mod rolling;
mod slow_retry;
mod sync;
mod sync_deployment;
mod sync_error;
mod writes;

pub use deployment_controller::DeploymentController;
pub use pod_map::{PodMap, pod_map_for_deployment};
pub use slow_retry::DROPPED_KEY_RETRY_PERIOD;
pub use sync_error::SyncError;
