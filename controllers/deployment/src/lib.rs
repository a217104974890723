//! The Deployment controller of kube-controller-manager, in Rust (upstream
//! `pkg/controller/deployment`).
//!
//! [`DeploymentController`] registers the Deployment, ReplicaSet and Pod handlers on a shared
//! [`InformerFactory`](kcm_informer::InformerFactory), runs the `deployment` work queue
//! (default controller rate limiter, 15 retries) with [`DEFAULT_WORKERS`] workers, and each
//! `syncDeployment` claims the Deployment's ReplicaSets, creates, resizes and deletes them,
//! writes `/status` and records events as `deployment-controller`. [`FeatureGates`] holds the
//! kube-controller-manager gates it consults. Two deliberate differences from upstream keep a
//! rollout from stalling after a transient failure (`docs/fidelity.md`): a write failure that
//! upstream swallows still retries the key with backoff ([`SyncError::Swallowed`]), and a key
//! dropped after 15 retries is synced again every [`DROPPED_KEY_RETRY_PERIOD`] while its
//! Deployment is not complete.
//!
//! ```no_run
//! use kcm_deployment::{DeploymentController, DeploymentControllerConfig};
//! use kcm_informer::{CancellationToken, InformerFactory, InformerOptions};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = kube::Client::try_default().await?;
//! let factory = InformerFactory::new(client.clone(), InformerOptions::default());
//! let controller = DeploymentController::new(client, &factory, DeploymentControllerConfig::default())?;
//! let cancel = CancellationToken::new();
//! factory.start(&cancel); // after every controller registered its informers
//! controller.run(cancel).await; // returns once the token is cancelled
//! # Ok(())
//! # }
//! ```
//!
//! Inside, two layers mirror upstream's files (`controllers/README.md`):
//!
//! | module | upstream | holds |
//! |---|---|---|
//! | `plan` | `sync.go`, `rolling.go`, `recreate.go`, `rollback.go`, `progress.go`, `syncDeployment`'s order | the decisions: free functions over k8s-openapi objects and an explicit `now`, returning plans; no I/O |
//! | `controller` | `deployment_controller.go` and the I/O halves of the files above | informers, handlers, queue, workers, `syncDeployment` executing the plans, every API write |
//! | `util` | `util/deployment_util.go`, `pkg/controller/controller_utils.go` (`ComputeHash`) | revisions, annotations, conditions, fenceposts, counting, sorting, the pod-template hash |
//! | `events` | (several) | event reasons and messages |
//! | `config`, `features`, `error` | `NewDeploymentController`'s options, `pkg/features` | [`DeploymentControllerConfig`], [`FeatureGates`], [`DeploymentError`] |

#![cfg_attr(test, allow(clippy::type_complexity))]

mod config;
mod controller;
mod error;
mod events;
mod features;
mod plan;
mod util;

pub use config::{DEFAULT_WORKERS, DeploymentControllerConfig, QUEUE_NAME};
pub use controller::{DROPPED_KEY_RETRY_PERIOD, DeploymentController, SyncError};
pub use error::DeploymentError;
pub use features::FeatureGates;
pub use util::hash::{DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, compute_hash};

#[cfg(test)]
mod testing;
