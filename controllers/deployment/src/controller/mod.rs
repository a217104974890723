//! The controller loop: informers and handlers, the `deployment` work queue, and
//! `syncDeployment` executing the pure decisions of this crate against the API server.

mod deployment_controller;
mod handlers;
mod rollout;
mod slow_retry;
mod sync_deployment;
mod sync_error;

pub use deployment_controller::{DeploymentController, DeploymentControllerConfig, QUEUE_NAME};
pub use slow_retry::DROPPED_KEY_RETRY_PERIOD;
pub use sync_deployment::{PodMap, pod_map_for_deployment};
pub use sync_error::SyncError;
