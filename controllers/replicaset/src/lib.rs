//! The ReplicaSet controller of kube-controller-manager, in Rust
//! (upstream `pkg/controller/replicaset`).
//!
//! The controller reads ReplicaSets (full type) and pods (as the projected
//! [`PodView`](kcm_controller::PodView)) from a shared
//! [`InformerFactory`](kcm_informer::InformerFactory), creates and deletes pods
//! with `SuccessfulCreate`/`FailedCreate`/`SuccessfulDelete`/`FailedDelete`
//! events (source `replicaset-controller`), adopts matching orphans, releases
//! pods that stopped matching, and writes `status` through the `/status`
//! subresource.
//!
//! ```no_run
//! use kcm_informer::{InformerFactory, InformerOptions};
//! use kcm_replicaset::{ReplicaSetController, ReplicaSetControllerConfig};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn example() -> anyhow::Result<()> {
//! let client = kube::Client::try_default().await?;
//! let factory = InformerFactory::new(client.clone(), InformerOptions::default());
//! let rs = ReplicaSetController::new(client, &factory, ReplicaSetControllerConfig::default())?;
//! let cancel = CancellationToken::new();
//! factory.start(&cancel);
//! rs.run(cancel).await; // returns after the token is cancelled
//! # Ok(())
//! # }
//! ```
//!
//! Inside, two layers like the Deployment controller's (`controllers/README.md`):
//!
//! | module | upstream | holds |
//! | --- | --- | --- |
//! | `status` | `replica_set_utils.go` (`calculateStatus`, the `ReplicaFailure` condition helpers) | the decision: the status a sync writes, no I/O |
//! | `controller` | `replica_set.go`, `replica_set_utils.go` (`updateReplicaSetStatus`) | wiring, handlers, `syncReplicaSet`, `manageReplicas`, every API write |
//! | `config`, `error` | `NewReplicaSetController`'s options, `pkg/features` | [`ReplicaSetControllerConfig`], [`ReplicaSetFeatures`], [`SyncError`] |

mod config;
mod controller;
mod error;
mod status;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod testing;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use config::{
    BURST_REPLICAS, DEFAULT_WORKERS, QUEUE_NAME, ReplicaSetControllerConfig, ReplicaSetFeatures,
};
pub use controller::ReplicaSetController;
pub use error::SyncError;
