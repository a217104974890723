//! `--feature-gates`: the kube-controller-manager feature gates the Deployment and ReplicaSet
//! controllers and kcm's process consult, with v1.37's defaults. Gates of other components and
//! controllers are accepted (a kubeadm manifest passes one list to all of them) and named in one
//! warning.

use crate::options::feature_gates as parse_pairs;

/// The gates kcm's controllers consult.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gates {
    /// `DeploymentReplicaSetTerminatingReplicas` (beta, on since v1.35).
    pub deployment_replica_set_terminating_replicas: bool,
    /// `StaleControllerConsistencyReplicaSet` (beta, on since v1.36).
    pub stale_controller_consistency_replica_set: bool,
    /// `PodDeletionCost` (beta, on since v1.22).
    pub pod_deletion_cost: bool,
    /// `ControllerManagerReleaseLeaderElectionLockOnExit` (alpha since v1.36, off): on SIGTERM
    /// the leader gives its Lease up once its controllers have stopped, so a standby takes over
    /// within a retry period instead of a lease duration.
    pub release_leader_election_lock_on_exit: bool,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            deployment_replica_set_terminating_replicas: true,
            stale_controller_consistency_replica_set: true,
            pod_deletion_cost: true,
            release_leader_election_lock_on_exit: false,
        }
    }
}

/// The gates of `--feature-gates` (upstream's defaults for those not named) and the names kcm
/// does not consult. `AllAlpha`/`AllBeta` set every alpha/beta gate here first, as
/// component-base does, before the named ones.
pub fn resolve(value: Option<&str>) -> Result<(Gates, Vec<String>), String> {
    let mut gates = Gates::default();
    let mut unused = Vec::new();
    let pairs = match value {
        Some(v) => parse_pairs(v)?,
        None => Vec::new(),
    };
    if let Some((_, on)) = pairs.iter().find(|(n, _)| n == "AllAlpha") {
        gates.release_leader_election_lock_on_exit = *on;
    }
    // The three controller gates are beta in v1.37.
    if let Some((_, on)) = pairs.iter().find(|(n, _)| n == "AllBeta") {
        gates.deployment_replica_set_terminating_replicas = *on;
        gates.stale_controller_consistency_replica_set = *on;
        gates.pod_deletion_cost = *on;
    }
    for (name, on) in pairs {
        match name.as_str() {
            "DeploymentReplicaSetTerminatingReplicas" => {
                gates.deployment_replica_set_terminating_replicas = on;
            }
            "StaleControllerConsistencyReplicaSet" => {
                gates.stale_controller_consistency_replica_set = on;
            }
            "PodDeletionCost" => gates.pod_deletion_cost = on,
            "ControllerManagerReleaseLeaderElectionLockOnExit" => {
                gates.release_leader_election_lock_on_exit = on;
            }
            "AllBeta" | "AllAlpha" => {}
            _ => unused.push(name),
        }
    }
    Ok((gates, unused))
}

impl Gates {
    /// The Deployment controller's gates.
    pub fn deployment(&self) -> kcm_deployment::FeatureGates {
        kcm_deployment::FeatureGates {
            deployment_replica_set_terminating_replicas: self
                .deployment_replica_set_terminating_replicas,
        }
    }

    /// The ReplicaSet controller's features.
    pub fn replica_set(&self) -> kcm_replicaset::ReplicaSetFeatures {
        let mut features = kcm_replicaset::ReplicaSetFeatures {
            deployment_replica_set_terminating_replicas: self
                .deployment_replica_set_terminating_replicas,
            stale_controller_consistency: self.stale_controller_consistency_replica_set,
            ..Default::default()
        };
        features.ranking.pod_deletion_cost = self.pod_deletion_cost;
        features
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_v1_37s() {
        let (g, unused) = resolve(None).expect("no flag");
        assert_eq!(g, Gates::default());
        assert!(unused.is_empty());
        let rs = g.replica_set();
        assert!(rs.terminating_replicas() && rs.stale_controller_consistency);
        assert!(rs.ranking.pod_deletion_cost);
        assert!(g.deployment().deployment_replica_set_terminating_replicas);
    }

    #[test]
    fn named_gates_apply_and_others_are_reported() {
        let cases: &[(&str, Gates, &[&str])] = &[
            (
                "DeploymentReplicaSetTerminatingReplicas=false",
                Gates {
                    deployment_replica_set_terminating_replicas: false,
                    ..Gates::default()
                },
                &[],
            ),
            (
                "StaleControllerConsistencyReplicaSet=false,RotateKubeletServerCertificate=true",
                Gates {
                    stale_controller_consistency_replica_set: false,
                    ..Gates::default()
                },
                &["RotateKubeletServerCertificate"],
            ),
            (
                "AllBeta=false,PodDeletionCost=true",
                Gates {
                    deployment_replica_set_terminating_replicas: false,
                    stale_controller_consistency_replica_set: false,
                    pod_deletion_cost: true,
                    ..Gates::default()
                },
                &[],
            ),
            (
                "ControllerManagerReleaseLeaderElectionLockOnExit=true",
                Gates {
                    release_leader_election_lock_on_exit: true,
                    ..Gates::default()
                },
                &[],
            ),
            (
                "AllAlpha=true,AllBeta=false",
                Gates {
                    deployment_replica_set_terminating_replicas: false,
                    stale_controller_consistency_replica_set: false,
                    pod_deletion_cost: false,
                    release_leader_election_lock_on_exit: true,
                },
                &[],
            ),
        ];
        for (flag, want, unused) in cases {
            let (got, rest) = resolve(Some(flag)).expect(flag);
            assert_eq!(got, *want, "{flag}");
            assert_eq!(rest, *unused, "{flag}");
        }
        let rs = resolve(Some("DeploymentReplicaSetTerminatingReplicas=false"))
            .expect("parse")
            .0
            .replica_set();
        assert!(!rs.terminating_replicas());
        assert!(resolve(Some("PodDeletionCost=maybe")).is_err());
    }
}
