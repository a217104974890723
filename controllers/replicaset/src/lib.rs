//! The ReplicaSet controller of kube-controller-manager, in Rust
//! (upstream `pkg/controller/replicaset`).
//!
//! Two layers, like the Deployment controller's (see `controllers/README.md`):
//!
//! | module | upstream | what |
//! | --- | --- | --- |
//! | [`status`] | `calculateStatus`, `ReplicaFailure` helpers | pure: the status a sync writes |
//! | [`config`] | `BurstReplicas`, … | constants, feature switches, configuration |
//! | [`error`] | — | [`SyncError`] |
//! | [`controller`] | `replica_set.go`, `updateReplicaSetStatus` | wiring, handlers, `syncReplicaSet`, `manageReplicas`, every API write |
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

pub mod config;
pub mod controller;
pub mod error;
pub mod status;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod testing;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use config::{ReplicaSetControllerConfig, ReplicaSetFeatures};
pub use controller::{ReplicaSetController, ReplicaSetControllerParts};
pub use error::SyncError;
