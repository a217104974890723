//! Every API write of the Deployment controller, each with its `-v=2` log line
//! ([`log_write`]): the Deployment's `/status`, the Deployment itself (legacy rollback), and
//! ReplicaSet create, replace and delete. Adopt/release patches go through
//! [`ReplicaSetControl`](kcm_controller::rs_control::ReplicaSetControl) and log there.
//!
//! A successful Deployment write is recorded with [`Context::wrote`], so the next sync of that
//! Deployment waits for the cache to show it.

use std::fmt::Display;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet};
use kcm_controller::api_write::log_write;
use kube::api::{Api, DeleteParams, PostParams};

use crate::plan::rollback::RollbackPlan;
use crate::util::fields::name_of;

use super::SyncError;
use super::context::Context;

fn namespace_of(d: &Deployment) -> &str {
    d.metadata.namespace.as_deref().unwrap_or_default()
}

fn deployments(ctx: &Context, d: &Deployment) -> Api<Deployment> {
    Api::namespaced(ctx.client.clone(), namespace_of(d))
}

fn replica_sets(ctx: &Context, d: &Deployment) -> Api<ReplicaSet> {
    Api::namespaced(ctx.client.clone(), namespace_of(d))
}

/// Converts the result of a Deployment write and records a success ([`Context::wrote`]).
fn wrote_deployment(
    ctx: &Context,
    result: Result<Deployment, kube::Error>,
) -> Result<Deployment, SyncError> {
    let written = result?;
    ctx.wrote(&written);
    Ok(written)
}

/// Logs the finished write of `namespace/name` and hands its result back.
fn logged<T, E: Display>(
    result: Result<T, E>,
    verb: &str,
    resource: &str,
    namespace: &str,
    name: &str,
    reason: impl Display,
) -> Result<T, E> {
    log_write(
        verb,
        resource,
        namespace,
        name,
        reason,
        result.as_ref().map(|_| ()),
    );
    result
}

/// `UpdateStatus(d)`: PUT of the whole Deployment to `/status`, logged with `why` and a
/// summary of the status written.
pub(crate) async fn update_status(
    ctx: &Context,
    d: &Deployment,
    why: &str,
) -> Result<Deployment, SyncError> {
    let result = deployments(ctx, d)
        .replace_status(name_of(&d.metadata), &PostParams::default(), d)
        .await;
    let result = wrote_deployment(ctx, result);
    let status = d.status.as_ref();
    let field = |f: fn(&DeploymentStatus) -> Option<i64>| status.and_then(f).unwrap_or(0);
    let progressing = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_.as_deref() == Some("Progressing")))
        .map_or("none", |c| c.reason.as_deref().unwrap_or_default());
    logged(
        result,
        "update",
        "deployments/status",
        namespace_of(d),
        name_of(&d.metadata),
        format_args!(
            "{why} (replicas {}, updated {}, ready {}, available {}, observedGeneration {}, \
             Progressing {progressing})",
            field(|s| s.replicas.map(i64::from)),
            field(|s| s.updated_replicas.map(i64::from)),
            field(|s| s.ready_replicas.map(i64::from)),
            field(|s| s.available_replicas.map(i64::from)),
            field(|s| s.observed_generation),
        ),
    )
}

/// Stores `status` on the sync's copy `d` and writes it ([`update_status`]).
pub(crate) async fn write_status(
    ctx: &Context,
    d: &mut Deployment,
    status: DeploymentStatus,
    why: &str,
) -> Result<(), SyncError> {
    d.status = Some(status);
    update_status(ctx, d, why).await.map(|_| ())
}

/// The legacy rollback's full Update of the Deployment (clears the rollback annotation, and
/// after a performed rollback carries the restored template).
pub(crate) async fn update_deployment_for_rollback(
    ctx: &Context,
    d: &Deployment,
    plan: &RollbackPlan,
) -> Result<Deployment, SyncError> {
    let updated = &plan.deployment;
    let result = deployments(ctx, d)
        .replace(name_of(&updated.metadata), &PostParams::default(), updated)
        .await;
    logged(
        wrote_deployment(ctx, result),
        "update",
        "deployments",
        namespace_of(d),
        name_of(&d.metadata),
        format_args!(
            "legacy rollback annotation handled ({}): {}",
            plan.event.reason, plan.event.message
        ),
    )
}

/// Creates the new ReplicaSet `desired` of `d`. The error is the API's own (the caller tells
/// AlreadyExists apart before converting it).
pub(crate) async fn create_replica_set(
    ctx: &Context,
    d: &Deployment,
    desired: &ReplicaSet,
    new_revision: &str,
) -> Result<ReplicaSet, kube::Error> {
    let result = replica_sets(ctx, d)
        .create(&PostParams::default(), desired)
        .await;
    logged(
        result,
        "create",
        "replicasets",
        namespace_of(d),
        name_of(&desired.metadata),
        format_args!(
            "new pod template of deployment {}/{} (revision {new_revision})",
            namespace_of(d),
            name_of(&d.metadata)
        ),
    )
}

/// Updates the existing new ReplicaSet whose revision or replica annotations `d` changed.
pub(crate) async fn update_new_replica_set_annotations(
    ctx: &Context,
    d: &Deployment,
    rs: &ReplicaSet,
    new_revision: &str,
) -> Result<ReplicaSet, SyncError> {
    let result = replica_sets(ctx, d)
        .replace(name_of(&rs.metadata), &PostParams::default(), rs)
        .await
        .map_err(SyncError::from);
    logged(
        result,
        "update",
        "replicasets",
        namespace_of(d),
        name_of(&rs.metadata),
        format_args!(
            "sync revision and replica annotations of the new ReplicaSet of \
             deployment {}/{} (revision {new_revision})",
            namespace_of(d),
            name_of(&d.metadata),
        ),
    )
}

/// Updates `current` (a ReplicaSet of `d`) to `update`: a resize, or only its replica
/// annotations.
pub(crate) async fn scale_replica_set(
    ctx: &Context,
    d: &Deployment,
    current: &ReplicaSet,
    update: &ReplicaSet,
) -> Result<ReplicaSet, SyncError> {
    let name = name_of(&current.metadata);
    let result = replica_sets(ctx, d)
        .replace(name, &PostParams::default(), update)
        .await
        .map_err(SyncError::from);
    let from = current.spec.replicas.unwrap_or(0);
    let to = update.spec.replicas.unwrap_or(0);
    let why = if from < to {
        "scale up"
    } else if from > to {
        "scale down"
    } else {
        "sync replica annotations"
    };
    logged(
        result,
        "update",
        "replicasets",
        namespace_of(d),
        name,
        format_args!(
            "{why} from {from} to {to} for deployment {}/{}",
            namespace_of(d),
            name_of(&d.metadata)
        ),
    )
}

/// Deletes `rs`, an old ReplicaSet of `d` beyond its `revisionHistoryLimit`.
pub(crate) async fn delete_replica_set(
    ctx: &Context,
    d: &Deployment,
    rs: &ReplicaSet,
) -> Result<(), SyncError> {
    let result = replica_sets(ctx, d)
        .delete(name_of(&rs.metadata), &DeleteParams::default())
        .await
        .map(|_| ())
        .map_err(SyncError::from);
    logged(
        result,
        "delete",
        "replicasets",
        namespace_of(d),
        name_of(&rs.metadata),
        format_args!(
            "old ReplicaSet beyond revisionHistoryLimit {} of deployment {}/{}",
            d.spec.revision_history_limit.unwrap_or(10),
            namespace_of(d),
            name_of(&d.metadata)
        ),
    )
}
