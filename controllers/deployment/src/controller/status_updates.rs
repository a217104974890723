//! The Deployment status writes of a pass, I/O halves of upstream `sync.go`
//! (`syncDeploymentStatus`, `checkPausedConditions`) and `progress.go` (`syncRolloutStatus`,
//! with the progress-deadline re-check `requeueStuckDeployment` asks for). The statuses are
//! decided in [`crate::plan::status`], [`crate::plan::paused`] and [`crate::plan::progress`].

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::plan::paused::paused_condition_update;
use crate::plan::progress::{RolloutStatusPlan, StuckRequeue, plan_rollout_status};
use crate::plan::status::status_update;

use super::SyncError;
use super::context::Context;
use super::writes;

/// `syncDeploymentStatus`: writes `calculateStatus` when it differs from the stored status.
pub(crate) async fn update_deployment_status(
    ctx: &Context,
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    let now = ctx.clock.now();
    match status_update(all_rss, new_rs, d, &ctx.features, now) {
        Some(status) => writes::write_status(ctx, d, status, "status changed").await,
        None => Ok(()),
    }
}

/// `checkPausedConditions`: records pausing/resuming in the Progressing condition.
pub(crate) async fn check_paused_conditions(
    ctx: &Context,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    match paused_condition_update(d, ctx.clock.now()) {
        Some(status) => writes::write_status(ctx, d, status, "paused or resumed").await,
        None => Ok(()),
    }
}

/// `syncRolloutStatus`: writes the status with the Progressing/ReplicaFailure conditions when
/// it changed; otherwise re-enqueues the Deployment to catch a missed progress deadline.
pub(crate) async fn update_rollout_status(
    ctx: &Context,
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    let now = ctx.clock.now();
    match plan_rollout_status(all_rss, new_rs, d, &ctx.features, now) {
        RolloutStatusPlan::Update(status) => {
            writes::write_status(ctx, d, status, "rollout status or conditions changed").await?;
        }
        RolloutStatusPlan::Unchanged(requeue) => match requeue {
            StuckRequeue::NotNeeded => {}
            StuckRequeue::Now => ctx.enqueue_rate_limited(d),
            StuckRequeue::After(_) => {
                if let Some(after) = requeue.enqueue_after() {
                    let after = Duration::try_from(after).unwrap_or_default();
                    ctx.enqueue_after(d, after);
                }
            }
        },
    }
    Ok(())
}
