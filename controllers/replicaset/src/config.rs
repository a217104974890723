//! Constants and configuration of the ReplicaSet controller (upstream `replica_set.go`:
//! `BurstReplicas`, `statusUpdateRetries`, the controller and queue names).

use std::time::Duration;

use kcm_controller::ranking::RankingOptions;

/// Controller name: event source component, client user agent, `--controllers` entry.
pub(crate) const CONTROLLER_NAME: &str = "replicaset-controller";

/// Name of the work queue (and of its metrics).
pub const QUEUE_NAME: &str = "replicaset";

/// Subsystem of the controller's own metrics (`replicaset_controller_*`).
pub(crate) const METRICS_SUBSYSTEM: &str = "replicaset_controller";

/// Upstream `BurstReplicas`: at most this many creates or deletes per sync.
pub const BURST_REPLICAS: usize = 500;

/// Upstream `statusUpdateRetries`: one retry after a failed status PUT
/// (so at most two PUTs and one GET per sync).
pub(crate) const STATUS_UPDATE_RETRIES: usize = 1;

/// Default number of workers (`--concurrent-replicaset-syncs`).
pub const DEFAULT_WORKERS: usize = 5;

/// Feature switches of one controller instance: one public field per kube-controller-manager
/// feature gate this controller consults, plus upstream's per-controller switch
/// `EnableStatusTerminatingReplicas`.
///
/// `Default` is upstream v1.37's default for each gate (`pkg/features/kube_features.go`):
///
/// | field | gate | v1.37 default |
/// |---|---|---|
/// | [`deployment_replica_set_terminating_replicas`](Self::deployment_replica_set_terminating_replicas) | `DeploymentReplicaSetTerminatingReplicas` | on (beta since 1.35; alpha, off, in 1.33–1.34) |
/// | [`stale_controller_consistency`](Self::stale_controller_consistency) | `StaleControllerConsistencyReplicaSet` | on (beta since 1.36) |
/// | [`ranking`](Self::ranking)`.pod_deletion_cost` | `PodDeletionCost` | on (beta since 1.22) |
///
/// [`enable_status_terminating_replicas`](Self::enable_status_terminating_replicas) is not a
/// gate (upstream `ReplicaSetControllerFeatures`): `true` for ReplicaSets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaSetFeatures {
    /// Gate `DeploymentReplicaSetTerminatingReplicas`. With
    /// [`enable_status_terminating_replicas`](Self::enable_status_terminating_replicas): count
    /// the claimed terminating pods and write `status.terminatingReplicas` (compared with the
    /// stored value like the other counters). Off: the field is written absent and terminating
    /// pods are not looked at. Set it off against a server that does not store the field
    /// (v1.33/v1.34 defaults); with it on there, like upstream v1.37.2, every sync PUTs a status
    /// the server stores unchanged.
    pub deployment_replica_set_terminating_replicas: bool,
    /// Upstream's per-controller switch `EnableStatusTerminatingReplicas` (not a gate; `true`
    /// for the ReplicaSet controller).
    pub enable_status_terminating_replicas: bool,
    /// Deletion ordering switches (gate `PodDeletionCost`, on).
    pub ranking: RankingOptions,
    /// Gate `StaleControllerConsistencyReplicaSet` (beta and on since 1.36): defer a sync until
    /// the ReplicaSet and pod caches show the controller's own last writes for that ReplicaSet.
    pub stale_controller_consistency: bool,
}

impl ReplicaSetFeatures {
    /// Whether `status.terminatingReplicas` is computed and written: the gate and the
    /// controller switch together, as upstream checks them.
    pub fn terminating_replicas(&self) -> bool {
        self.deployment_replica_set_terminating_replicas && self.enable_status_terminating_replicas
    }
}

impl Default for ReplicaSetFeatures {
    fn default() -> Self {
        Self {
            deployment_replica_set_terminating_replicas: true,
            enable_status_terminating_replicas: true,
            ranking: RankingOptions::default(),
            stale_controller_consistency: true,
        }
    }
}

/// Configuration of a [`ReplicaSetController`](crate::ReplicaSetController).
///
/// ```
/// use kcm_replicaset::ReplicaSetControllerConfig;
/// let config = ReplicaSetControllerConfig { workers: 10, ..Default::default() };
/// assert_eq!(config.burst_replicas, 500);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaSetControllerConfig {
    /// Concurrent syncs (upstream `ConcurrentRSSyncs`, default 5).
    pub workers: usize,
    /// Creates/deletes per sync (upstream always 500).
    pub burst_replicas: usize,
    /// Feature switches.
    pub features: ReplicaSetFeatures,
    /// How long `run` waits for the informer caches (`None`: until cancelled).
    pub cache_sync_timeout: Option<Duration>,
    /// Sync only ReplicaSets of the namespaces the gate allows (a sharded controller manager's
    /// active shard); `None`: every namespace.
    pub namespace_gate: Option<kcm_controller::NamespaceGate>,
}

impl Default for ReplicaSetControllerConfig {
    fn default() -> Self {
        Self {
            workers: DEFAULT_WORKERS,
            burst_replicas: BURST_REPLICAS,
            features: ReplicaSetFeatures::default(),
            cache_sync_timeout: None,
            namespace_gate: None,
        }
    }
}
