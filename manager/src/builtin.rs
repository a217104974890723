//! kcm's own controllers, ready to register: kube-controller-manager's Deployment and
//! ReplicaSet controllers (`kcm-deployment`, `kcm-replicaset`), built from the flags
//! (`--concurrent-*-syncs`, `--feature-gates`) and sharing the process's informers.

use k8s_openapi::Metadata;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_informer::InformerFactory;
use kcm_informer::informer::InformerObject;

use crate::app::{Controller, ControllerContext, RunFuture};
use crate::feature_gates::Gates;
use crate::options::Options;

/// `deployment-controller` and `replicaset-controller`, in that order.
pub fn controllers() -> Vec<Controller> {
    vec![deployment_controller(), replicaset_controller()]
}

/// The Deployment controller, under its canonical name `deployment-controller`.
pub fn deployment_controller() -> Controller {
    Controller {
        name: "deployment-controller",
        build: Box::new(|ctx: &ControllerContext| {
            let factory = &ctx.factory;
            strip_managed_fields::<Deployment>(factory)?;
            strip_managed_fields::<ReplicaSet>(factory)?;
            let config = kcm_deployment::DeploymentControllerConfig {
                workers: ctx.options.concurrent_deployment_syncs as usize,
                features: gates(&ctx.options).deployment(),
                namespace_gate: ctx.namespace_gate.clone(),
                ..Default::default()
            };
            let controller =
                kcm_deployment::DeploymentController::new(ctx.client.clone(), factory, config)?;
            Ok(Box::new(move |cancel| {
                Box::pin(controller.run(cancel)) as RunFuture
            }))
        }),
    }
}

/// The ReplicaSet controller, under its canonical name `replicaset-controller`.
pub fn replicaset_controller() -> Controller {
    Controller {
        name: "replicaset-controller",
        build: Box::new(|ctx: &ControllerContext| {
            let factory = &ctx.factory;
            strip_managed_fields::<ReplicaSet>(factory)?;
            let config = kcm_replicaset::ReplicaSetControllerConfig {
                workers: ctx.options.concurrent_replicaset_syncs as usize,
                features: gates(&ctx.options).replica_set(),
                namespace_gate: ctx.namespace_gate.clone(),
                ..Default::default()
            };
            let controller =
                kcm_replicaset::ReplicaSetController::new(ctx.client.clone(), factory, config)?;
            Ok(Box::new(move |cancel| {
                Box::pin(controller.run(cancel)) as RunFuture
            }))
        }),
    }
}

/// The feature gates of `--feature-gates` (validated at start, so defaults on a parse error).
fn gates(options: &Options) -> Gates {
    crate::feature_gates::resolve(options.feature_gates.as_deref())
        .map(|(g, _)| g)
        .unwrap_or_default()
}

/// Caches never hold managedFields: the controllers do not read them, and they are often the
/// largest part of an object. (Pods are cached as `PodView`, which never parses them.)
fn strip_managed_fields<K>(factory: &InformerFactory) -> anyhow::Result<()>
where
    K: InformerObject + Metadata<Ty = ObjectMeta>,
{
    let informer = factory.informer::<K>();
    if informer.is_started() {
        return Ok(());
    }
    // A second controller asking for the same informer sets the same transform again.
    informer.set_transform(|mut obj: K| {
        obj.metadata_mut().managed_fields = None;
        obj
    })?;
    Ok(())
}
