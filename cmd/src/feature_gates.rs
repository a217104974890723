//! The kube-controller-manager feature gates kcm's controllers consult, as v1.37 declares them
//! (`pkg/features/kube_features.go`), and each controller's settings from their values.

use kcm_manager::{FeatureGate, FeatureGates, Stage};

/// `DeploymentReplicaSetTerminatingReplicas` (beta, on since v1.35): both controllers report
/// `status.terminatingReplicas`.
pub(crate) const DEPLOYMENT_REPLICA_SET_TERMINATING_REPLICAS: FeatureGate = FeatureGate {
    name: "DeploymentReplicaSetTerminatingReplicas",
    stage: Stage::Beta,
    default: true,
};

/// `StaleControllerConsistencyReplicaSet` (beta, on since v1.36): a ReplicaSet sync waits until
/// the caches show the controller's own last writes.
pub(crate) const STALE_CONTROLLER_CONSISTENCY_REPLICA_SET: FeatureGate = FeatureGate {
    name: "StaleControllerConsistencyReplicaSet",
    stage: Stage::Beta,
    default: true,
};

/// `PodDeletionCost` (beta, on since v1.22): the `controller.kubernetes.io/pod-deletion-cost`
/// annotation orders which pods a scale-down deletes.
pub(crate) const POD_DELETION_COST: FeatureGate = FeatureGate {
    name: "PodDeletionCost",
    stage: Stage::Beta,
    default: true,
};

/// The gates of the Deployment controller.
pub(crate) const DEPLOYMENT_GATES: &[FeatureGate] = &[DEPLOYMENT_REPLICA_SET_TERMINATING_REPLICAS];

/// The gates of the ReplicaSet controller.
pub(crate) const REPLICA_SET_GATES: &[FeatureGate] = &[
    DEPLOYMENT_REPLICA_SET_TERMINATING_REPLICAS,
    STALE_CONTROLLER_CONSISTENCY_REPLICA_SET,
    POD_DELETION_COST,
];

/// The Deployment controller's gates under `gates`.
pub(crate) fn deployment(gates: &FeatureGates) -> kcm_deployment::FeatureGates {
    kcm_deployment::FeatureGates {
        deployment_replica_set_terminating_replicas: gates
            .enabled(&DEPLOYMENT_REPLICA_SET_TERMINATING_REPLICAS),
    }
}

/// The ReplicaSet controller's features under `gates`.
pub(crate) fn replica_set(gates: &FeatureGates) -> kcm_replicaset::ReplicaSetFeatures {
    let mut features = kcm_replicaset::ReplicaSetFeatures {
        deployment_replica_set_terminating_replicas: gates
            .enabled(&DEPLOYMENT_REPLICA_SET_TERMINATING_REPLICAS),
        stale_controller_consistency: gates.enabled(&STALE_CONTROLLER_CONSISTENCY_REPLICA_SET),
        ..Default::default()
    };
    features.ranking.pod_deletion_cost = gates.enabled(&POD_DELETION_COST);
    features
}
