//! The rollouts, I/O halves of upstream `rolling.go` (`rolloutRolling`), `recreate.go`
//! (`rolloutRecreate`) and `rollback.go` (`rollback`, the legacy annotation): each executes
//! the plan of [`crate::plan::rolling`], [`crate::plan::recreate`] or
//! [`crate::plan::rollback`], then reports the rollout status.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::plan::recreate::{RecreatePlan, plan_recreate};
use crate::plan::rollback::plan_rollback;
use crate::plan::rolling::{RollingPlan, plan_rolling};
use crate::util::fields::name_of;
use crate::util::predicates::deployment_complete;

use super::SyncError;
use super::context::Context;
use super::pod_map::PodMap;
use super::replica_set_changes::{
    cleanup_deployment, execute_scale_steps, get_replica_sets_and_update_revision,
};
use super::status_updates::update_rollout_status;
use super::writes;

/// `rolloutRolling`: grow the new ReplicaSet within `maxSurge`, else shrink old ones within
/// `maxUnavailable`, else clean up; then the rollout status.
pub(crate) async fn rollout_rolling(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_replica_sets_and_update_revision(ctx, d, rs_list, true).await?;
    let Some(new_rs) = rss.new_rs.as_ref() else {
        return Err(SyncError::Other(format!(
            "deployment {}: no new replica set after creation",
            name_of(&d.metadata)
        )));
    };
    let all = rss.all();
    let mut swallowed = None;
    match plan_rolling(d, new_rs, &rss.old_rss)? {
        RollingPlan::ScaleNewReplicaSet(step) => {
            if execute_scale_steps(ctx, d, &all, &[step]).await? {
                return update_rollout_status(ctx, &all, Some(new_rs), d).await;
            }
        }
        RollingPlan::ScaleDownOldReplicaSets(plan) => {
            // Upstream swallows failures of this phase (`return false, nil`): the pass
            // continues as if nothing was scaled down. The failure is kept to retry the key
            // once the pass is over (nothing else was written for it, so no event may follow).
            let scaled = match execute_scale_steps(ctx, d, &all, &plan.steps).await {
                Ok(scaled) => scaled && plan.aborted.is_none(),
                Err(e) => {
                    tracing::debug!(deployment = name_of(&d.metadata), error = %e, "scaling down old replica sets failed");
                    swallowed = Some(e);
                    false
                }
            };
            if scaled {
                return update_rollout_status(ctx, &all, Some(new_rs), d).await;
            }
        }
        RollingPlan::Idle { .. } => {}
    }
    let stored = d.status.clone().unwrap_or_default();
    if deployment_complete(d, &stored) {
        cleanup_deployment(ctx, &rss.old_rss, d).await?;
    }
    update_rollout_status(ctx, &all, Some(new_rs), d).await?;
    match swallowed {
        Some(e) => Err(SyncError::swallowed("scaling down old replica sets", e)),
        None => Ok(()),
    }
}

/// `rolloutRecreate`: old ReplicaSets to 0, wait until their pods are gone, create the new
/// ReplicaSet, scale it up, clean up, status.
pub(crate) async fn rollout_recreate(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
    pod_map: &PodMap,
) -> Result<(), SyncError> {
    let rss = get_replica_sets_and_update_revision(ctx, d, rs_list, false).await?;
    let pods = || {
        pod_map.iter().flat_map(|(uid, pods)| {
            pods.iter()
                .map(move |p| (uid.as_str(), p.status.phase.as_deref().unwrap_or_default()))
        })
    };
    match plan_recreate(d, rss.new_rs.as_ref(), &rss.old_rss, pods()) {
        RecreatePlan::ScaleDownOldReplicaSets(steps) => {
            let all = rss.all();
            if execute_scale_steps(ctx, d, &all, &steps).await? {
                return update_rollout_status(ctx, &all, rss.new_rs.as_ref(), d).await;
            }
        }
        RecreatePlan::WaitForOldPods => {
            let all = rss.all();
            return update_rollout_status(ctx, &all, rss.new_rs.as_ref(), d).await;
        }
        RecreatePlan::CreateNewReplicaSet | RecreatePlan::ScaleUpNewReplicaSet { .. } => {}
    }
    let rss = if rss.new_rs.is_none() {
        get_replica_sets_and_update_revision(ctx, d, rs_list, true).await?
    } else {
        rss
    };
    let all = rss.all();
    if let RecreatePlan::ScaleUpNewReplicaSet { step, cleanup } =
        plan_recreate(d, rss.new_rs.as_ref(), &rss.old_rss, pods())
    {
        if let Some(step) = step {
            execute_scale_steps(ctx, d, &all, &[step]).await?;
        }
        if cleanup {
            cleanup_deployment(ctx, &rss.old_rss, d).await?;
        }
    }
    update_rollout_status(ctx, &all, rss.new_rs.as_ref(), d).await
}

/// `rollback` (the legacy `deprecated.deployment.rollback.to` annotation): the annotation is
/// always cleared with a full Update of the Deployment; the `DeploymentRollback` event is
/// recorded only after that Update succeeded.
pub(crate) async fn rollback(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_replica_sets_and_update_revision(ctx, d, rs_list, true).await?;
    let all = rss.all();
    let Some(plan) = plan_rollback(d, &all) else {
        return Ok(());
    };
    if !plan.performed {
        ctx.emit(d, &plan.event);
    }
    writes::update_deployment_for_rollback(ctx, d, &plan).await?;
    if plan.performed {
        ctx.emit(d, &plan.event);
    }
    Ok(())
}
