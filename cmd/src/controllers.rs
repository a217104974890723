//! kcm's two controllers as kcm-manager registers them, each with its `--controllers` name and
//! alias, its flags and its feature gates (upstream's `newDeploymentControllerDescriptor` and
//! `newReplicaSetControllerDescriptor`, `cmd/kube-controller-manager/app/apps.go`), sharing
//! the process's informers.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_deployment::{DeploymentController, DeploymentControllerConfig};
use kcm_manager::Controller;
use kcm_replicaset::{ReplicaSetController, ReplicaSetControllerConfig};

use crate::feature_gates::{self, DEPLOYMENT_GATES, REPLICA_SET_GATES};
use crate::flags::{DeploymentFlags, ReplicaSetFlags};
use crate::managed_fields::strip_managed_fields;

/// The Deployment controller, under its canonical name `deployment-controller` (alias
/// `deployment`).
pub fn deployment_controller() -> Controller {
    Controller::new("deployment-controller", |ctx| {
        let factory = &ctx.factory;
        strip_managed_fields::<Deployment>(factory)?;
        strip_managed_fields::<ReplicaSet>(factory)?;
        let flags = ctx.options.flags::<DeploymentFlags>()?;
        let config = DeploymentControllerConfig {
            workers: flags.concurrent_deployment_syncs as usize,
            features: feature_gates::deployment(&ctx.feature_gates),
            namespace_gate: ctx.namespace_gate.clone(),
            ..Default::default()
        };
        let controller = DeploymentController::new(ctx.client.clone(), factory, config)?;
        Ok(move |cancel| controller.run(cancel))
    })
    .alias("deployment")
    .flags::<DeploymentFlags>()
    .feature_gates(DEPLOYMENT_GATES)
}

/// The ReplicaSet controller, under its canonical name `replicaset-controller` (alias
/// `replicaset`).
pub fn replicaset_controller() -> Controller {
    Controller::new("replicaset-controller", |ctx| {
        let factory = &ctx.factory;
        strip_managed_fields::<ReplicaSet>(factory)?;
        let flags = ctx.options.flags::<ReplicaSetFlags>()?;
        let config = ReplicaSetControllerConfig {
            workers: flags.concurrent_replicaset_syncs as usize,
            features: feature_gates::replica_set(&ctx.feature_gates),
            namespace_gate: ctx.namespace_gate.clone(),
            ..Default::default()
        };
        let controller = ReplicaSetController::new(ctx.client.clone(), factory, config)?;
        Ok(move |cancel| controller.run(cancel))
    })
    .alias("replicaset")
    .flags::<ReplicaSetFlags>()
    .feature_gates(REPLICA_SET_GATES)
}
