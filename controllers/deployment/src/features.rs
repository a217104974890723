//! Feature gates that change deployment decisions.

/// The kube-controller-manager feature gates consulted by this crate.
///
/// `Default` follows upstream master (1.35): `DeploymentReplicaSetTerminatingReplicas` is beta
/// and on by default (alpha, off, in 1.33–1.34).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureGates {
    /// `DeploymentReplicaSetTerminatingReplicas`: report `status.terminatingReplicas` and keep
    /// ReplicaSets with terminating pods out of revision-history cleanup.
    pub deployment_replica_set_terminating_replicas: bool,
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self {
            deployment_replica_set_terminating_replicas: true,
        }
    }
}
