//! The I/O half of upstream `progress.go`: `syncRolloutStatus` writes the decision of
//! [`crate::progress`] and schedules the progress-deadline re-check.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::progress::{
    RolloutStatusDecision, StuckRequeue, sync_rollout_status as decide_rollout_status,
};

use super::SyncError;
use super::context::Context;
use super::writes;

/// `syncRolloutStatus`: writes the status with the Progressing/ReplicaFailure conditions when
/// it changed; otherwise re-enqueues the Deployment to catch a missed progress deadline.
pub(crate) async fn sync_rollout_status(
    ctx: &Context,
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    let now = ctx.clock.now();
    match decide_rollout_status(all_rss, new_rs, d, &ctx.features, now) {
        RolloutStatusDecision::Update(status) => {
            writes::write_status(ctx, d, status, "rollout status or conditions changed").await?;
        }
        RolloutStatusDecision::Unchanged(requeue) => match requeue {
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
