//! The flags of kcm's controllers, named, described and defaulted as kube-controller-manager's
//! (`cmd/kube-controller-manager/app/options/deploymentcontroller.go`,
//! `replicasetcontroller.go`), each in its `--help` section.

use kcm_manager::ControllerFlags;

/// The Deployment controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DeploymentFlags {
    /// The number of deployment objects that are allowed to sync concurrently. Larger number =
    /// more responsive deployments, but more CPU (and network) load
    #[arg(
        long,
        help_heading = "Deployment controller flags",
        value_name = "int32",
        default_value_t = 5
    )]
    pub(crate) concurrent_deployment_syncs: u32,
}

impl ControllerFlags for DeploymentFlags {
    fn validate(&self) -> Result<(), String> {
        positive(
            "concurrent-deployment-syncs",
            self.concurrent_deployment_syncs,
        )
    }
}

/// The ReplicaSet controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReplicaSetFlags {
    /// The number of replica sets that are allowed to sync concurrently. Larger number = more
    /// responsive replica management, but more CPU (and network) load
    #[arg(
        long,
        help_heading = "Replicaset controller flags",
        value_name = "int32",
        default_value_t = 5
    )]
    pub(crate) concurrent_replicaset_syncs: u32,
}

impl ControllerFlags for ReplicaSetFlags {
    fn validate(&self) -> Result<(), String> {
        positive(
            "concurrent-replicaset-syncs",
            self.concurrent_replicaset_syncs,
        )
    }
}

/// A worker count of 0 refused, as kcm has always refused it.
fn positive(flag: &str, workers: u32) -> Result<(), String> {
    if workers == 0 {
        return Err(format!("--{flag} must be greater than 0"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_workers_are_refused() {
        let deployment = |n| DeploymentFlags {
            concurrent_deployment_syncs: n,
        };
        assert_eq!(deployment(5).validate(), Ok(()));
        assert_eq!(
            deployment(0).validate(),
            Err("--concurrent-deployment-syncs must be greater than 0".into())
        );
        let replica_set = ReplicaSetFlags {
            concurrent_replicaset_syncs: 0,
        };
        assert_eq!(
            replica_set.validate(),
            Err("--concurrent-replicaset-syncs must be greater than 0".into())
        );
    }
}
