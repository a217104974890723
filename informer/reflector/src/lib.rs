//! List + watch into an ordered stream of deltas: client-go's `Reflector` on kube-client.
//!
//! A [`Reflector`] lists a resource type (paginated, or as a streaming list), then watches it from
//! the list's resourceVersion, and writes every change in order into a [`ReflectorStore`] — or, via
//! [`Reflector::deltas`], into a stream of [`Delta`]s with client-go's meaning. A relist after the
//! watch was down yields tombstones ([`DeletedFinalStateUnknown`], with the last known state) for
//! every object that disappeared meanwhile; nothing vanishes silently.
//!
//! Works for any `K` satisfying [`Watchable`]: k8s-openapi types and hand-written *projected*
//! types that hold only the fields a controller reads (deserialized straight from the wire).
//!
//! ```no_run
//! use futures::StreamExt;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use kcm_reflector::{Delta, Reflector, ReflectorConfig};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn example() -> anyhow::Result<()> {
//! let client = kube::Client::try_default().await?;
//! let cancel = CancellationToken::new();
//! let reflector = Reflector::<Deployment>::new(client, None, ReflectorConfig::default().streaming_list());
//! let last_rv = reflector.last_sync_resource_version();
//! let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
//! while let Some(delta) = deltas.next().await {
//!     if let Delta::ListComplete { .. } = delta {
//!         println!("synced at {}", last_rv.get());
//!         cancel.cancel();
//!     }
//! }
//! # Ok(())
//! # }
//! ```

pub mod backoff;
pub mod config;
pub mod delta;
pub mod error;
pub mod list;
pub mod lister_watcher;
pub mod metrics;
pub mod reflector;
pub mod reflector_store;
pub mod shard;
pub mod share;
mod share_replay;
mod share_step;
pub mod streaming_list;
pub mod watch;

pub use backoff::{Backoff, BackoffConfig};
pub use config::{InitialListStrategy, ReflectorConfig};
pub use delta::{DeletedFinalStateUnknown, DeletedObject, Delta, DeltaProducer, relist_tombstones};
pub use error::ReflectorError;
pub use lister_watcher::{ApiListerWatcher, ListOptions, ListerWatcher, WatchOptions, WatchStream};
pub use metrics::{CountingMetrics, ErrorKind, NoopMetrics, ReflectorMetrics};
pub use reflector::{LastSyncResourceVersion, Reflector, Watchable};
pub use reflector_store::ReflectorStore;
pub use shard::{ServerFiltering, ShardFilter, ShardScope};
pub use share::{DynamicShare, Share, ShareChange, ShareFilter};
pub use tokio_util::sync::CancellationToken;
