//! Feature gates that change deployment decisions.

/// The kube-controller-manager feature gates consulted by the Deployment controller, one public
/// field per gate.
///
/// `Default` is upstream v1.37's default for each gate (`pkg/features/kube_features.go`):
///
/// | field | gate | v1.37 default |
/// |---|---|---|
/// | [`deployment_replica_set_terminating_replicas`](Self::deployment_replica_set_terminating_replicas) | `DeploymentReplicaSetTerminatingReplicas` | on (beta since 1.35; alpha, off, in 1.33–1.34) |
///
/// Set from `--feature-gates` (e.g. `DeploymentReplicaSetTerminatingReplicas=false` against a
/// server that does not store `status.terminatingReplicas`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureGates {
    /// Gate `DeploymentReplicaSetTerminatingReplicas`: report `status.terminatingReplicas` (the
    /// sum over the Deployment's ReplicaSets, absent when a synced ReplicaSet does not report
    /// it). Off: the field is always left unset. Like upstream v1.37.2, it changes nothing
    /// else: revision-history cleanup ignores terminating pods either way.
    pub deployment_replica_set_terminating_replicas: bool,
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self {
            deployment_replica_set_terminating_replicas: true,
        }
    }
}
