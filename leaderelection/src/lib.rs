//! Leader election on a `coordination.k8s.io/v1` Lease with client-go's semantics
//! (`tools/leaderelection`), and a **write fence** that keeps a leader which was paused from
//! writing once its lease may have passed to another candidate.
//!
//! | file | upstream (client-go) | what |
//! | --- | --- | --- |
//! | `config.rs` | `tools/leaderelection/leaderelection.go`: `LeaderElectionConfig`, `NewLeaderElector`'s checks | timing, the fence margin |
//! | `elector.rs` | `tools/leaderelection/leaderelection.go`: `LeaderElector` | [`LeaderElector`]: acquire, renew, release, health check; steps down at once when another holder is seen |
//! | `lease_lock.rs` | `tools/leaderelection/resourcelock/leaselock.go` | [`KubeLeaseLock`]: the record in a Lease, optimistic updates |
//! | `fence.rs` | — | [`WriteFence`]: writes allowed only within the lease by this process's monotonic clock |
//! | `fence_layer.rs` | — | [`FenceLayer`]: a tower layer putting a `kube::Client`'s writes behind the fence |
//! | `fence_wire.rs` | — | [`FencedConnector`]: connections that write to the socket only while the fence is open (a process stopped after the layer's check) |
//! | `member/` | — | sharding: a member of a ring of active replicas ([`ShardMember`]), on a Lease of its own ([`Membership`]) with its own fence, writing only in its active shard ([`ShardGate`]) |
//!
//! Libraries using this crate pick no k8s-openapi version feature; binaries and tests do.
//!
//! # Example: elect, then run writes behind the fence
//!
//! ```no_run
//! use kcm_leaderelection::{FenceLayer, KubeLeaseLock, LeaderElectionConfig, LeaderElector};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo() -> anyhow::Result<()> {
//! let config = kube::Config::infer().await?;
//! let lease_client = kube::Client::try_from(config.clone())?;
//! let lock = KubeLeaseLock::new(lease_client, "kube-system", "my-controller", "pod-a_1234");
//! let elector = LeaderElector::new(lock, LeaderElectionConfig::default())?;
//!
//! // The controller's own client: every POST/PUT/PATCH/DELETE passes the fence first.
//! let controller_client = kube::client::ClientBuilder::try_from(config)?
//!     .with_layer(&FenceLayer::new(elector.fence()))
//!     .build();
//!
//! let stop = CancellationToken::new();
//! if elector.acquire(&stop).await {
//!     let controllers = stop.child_token();
//!     // start the controllers with `controller_client` and `controllers` here
//!     let lost = elector.renew(&stop).await; // returns when leadership ends
//!     controllers.cancel();
//!     # let _ = (lost, controller_client);
//! }
//! # Ok(()) }
//! ```
//!
//! A write refused by the fence fails with [`Fenced`] (inside `kube::Error::Service`; test
//! with [`is_fenced`]); a controller requeues the key without counting a failure
//! (`kcm_controller::worker` does). See `docs/reliability.md` for why the fence's margin makes
//! a paused leader's writes arrive before any other candidate can hold the lease.

mod config;
mod elector;
mod fence;
mod fence_layer;
mod fence_wire;
mod lease_lock;
mod member;

pub use config::{ConfigError, LeaderElectionConfig, MAX_TOLERABLE_EXPIRED_LEASE};
pub use elector::{Attempt, LeaderElector};
pub use fence::{FENCED_PREFIX, Fenced, WriteFence, is_fenced};
pub use fence_layer::{FenceLayer, FencedService};
pub use fence_wire::{FencedConnection, FencedConnector};
pub use lease_lock::{KubeLeaseLock, LeaderElectionRecord, LeaseLock, LockError};
pub use member::gate::{InFlightWrite, NotInShard, ShardGate};
pub use member::membership::{
    APPLIED_RING_ANNOTATION, MemberState, Membership, MembershipConfig, MembershipError,
    MembershipView, RING_LABEL,
};
pub use member::shell::{MemberStatus, OnActivate, ShardMember, in_ranges};
