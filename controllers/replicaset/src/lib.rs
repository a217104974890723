//! The ReplicaSet controller of kube-controller-manager, in Rust
//! (upstream `pkg/controller/replicaset`).
//!
//! | module | upstream | what |
//! | --- | --- | --- |
//! | [`replica_set`] | `NewReplicaSetController`, `Run` | wiring: informers, queue, workers |
//! | [`handlers`] | `addRS` … `deletePod` | informer event handlers, expectations observations |
//! | [`sync`] | `syncReplicaSet` | one reconciliation |
//! | [`manage`] | `manageReplicas` | slow-start creates, ranked deletes |
//! | [`status`] | `calculateStatus`, `updateReplicaSetStatus` | status and the `ReplicaFailure` condition |
//! | [`pod_index`] | `PodControllerUIDIndex` | pods by controller UID + orphans per namespace |
//! | [`client`] | — | live GET and `/status` PUT of ReplicaSets |
//! | [`config`] | `BurstReplicas`, … | constants, feature switches, configuration |
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

pub mod client;
pub mod config;
pub mod error;
pub mod handlers;
pub mod manage;
pub mod pod_index;
pub mod replica_set;
pub mod status;
pub mod sync;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod testing;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use client::{KubeReplicaSetClient, ReplicaSetClient};
pub use config::{ReplicaSetControllerConfig, ReplicaSetFeatures};
pub use error::SyncError;
pub use replica_set::{ReplicaSetController, ReplicaSetControllerParts};
