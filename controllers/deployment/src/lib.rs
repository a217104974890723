//! The Deployment controller of kube-controller-manager, in Rust.
//!
//! Two layers, mirroring upstream `pkg/controller/deployment` file by file:
//!
//! * the **pure decision core**: every function takes k8s-openapi objects (`Deployment`,
//!   `ReplicaSet`, `PodTemplateSpec`, `IntOrString`) plus, where time matters, an explicit `now`
//!   and returns a value, a plan of ReplicaSet updates, or an updated object — no I/O;
//! * the **controller loop** ([`controller`]): [`DeploymentController`] registers the
//!   Deployment, ReplicaSet and Pod handlers on a shared `kcm_informer::InformerFactory`, runs
//!   the `deployment` work queue (default controller rate limiter, 15 retries) with 5 workers,
//!   and each `syncDeployment` executes the decisions against the API server (claims
//!   ReplicaSets, creates/updates/deletes them, writes `/status`, records events as
//!   `deployment-controller`). Two deliberate differences from upstream keep a rollout from
//!   stalling after a transient failure (`docs/fidelity.md`): a write failure that upstream
//!   swallows still retries the key with backoff ([`SyncError::Swallowed`]), and a key dropped
//!   after 15 retries is synced again every [`controller::DROPPED_KEY_RETRY_PERIOD`] while its
//!   Deployment is not complete.
//!
//! | module | upstream file | contents |
//! |---|---|---|
//! | [`util`] | `util/deployment_util.go`, hash | revisions, annotations, fenceposts, counting, sorting, hash |
//! | [`conditions`] | `util/deployment_util.go` | condition types/reasons, `SetDeploymentCondition` |
//! | [`sync`] | `sync.go` | new ReplicaSet, proportional `scale()`, `calculateStatus`, cleanup, paused |
//! | [`rolling`] | `rolling.go` | RollingUpdate scale-up/scale-down decisions |
//! | [`recreate`] | `recreate.go` | Recreate decisions, `oldPodsRunning` |
//! | [`progress`] | `progress.go` | `syncRolloutStatus` conditions, `requeueStuckDeployment` |
//! | [`rollback`] | `rollback.go` | legacy rollback annotation |
//! | [`events`] | (several) | event reasons and message formats |
//! | [`dispatch`] | `deployment_controller.go` | the path a sync takes (`syncDeployment` order) |
//! | [`config`] | `NewDeploymentController`'s options | [`QUEUE_NAME`](config::QUEUE_NAME), [`DeploymentControllerConfig`] |
//! | [`controller`] | `deployment_controller.go`, I/O halves of the others | informers, handlers, queue, workers, `syncDeployment`, every API write |
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
//! use kcm_deployment::util::resolve_fenceposts;
//!
//! // maxSurge 25% rounds up, maxUnavailable 25% rounds down.
//! let surge = IntOrString::String("25%".into());
//! let unavailable = IntOrString::String("25%".into());
//! assert_eq!(resolve_fenceposts(Some(&surge), Some(&unavailable), 10), Ok((3, 2)));
//! ```

#![cfg_attr(test, allow(clippy::type_complexity))]

pub mod conditions;
pub mod config;
pub mod controller;
pub mod dispatch;
pub mod error;
pub mod events;
pub mod features;
pub mod progress;
pub mod recreate;
pub mod rollback;
pub mod rolling;
pub mod sync;
pub mod util;

pub use config::DeploymentControllerConfig;
pub use controller::{DeploymentController, SyncError};
pub use error::DeploymentError;
pub use features::FeatureGates;

#[cfg(test)]
mod testing;
