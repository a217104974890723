//! The I/O half of upstream `rolling.go`: `rolloutRolling` executes the decision of
//! [`crate::rolling`].

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::rolling::{RollingDecision, rollout_rolling as decide_rolling};
use crate::util::fields::name_of;
use crate::util::predicates::deployment_complete;

use super::SyncError;
use super::context::Context;
use super::progress::sync_rollout_status;
use super::sync::{
    cleanup_deployment, execute_scale_steps, get_all_replica_sets_and_sync_revision,
};

/// `rolloutRolling`.
pub(crate) async fn rollout_rolling(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(ctx, d, rs_list, true).await?;
    let Some(new_rs) = rss.new_rs.as_ref() else {
        return Err(SyncError::Other(format!(
            "deployment {}: no new replica set after creation",
            name_of(&d.metadata)
        )));
    };
    let all = rss.all();
    let mut swallowed = None;
    match decide_rolling(d, new_rs, &rss.old_rss)? {
        RollingDecision::ScaleNewReplicaSet(step) => {
            if execute_scale_steps(ctx, d, &all, &[step]).await? {
                return sync_rollout_status(ctx, &all, Some(new_rs), d).await;
            }
        }
        RollingDecision::ScaleDownOldReplicaSets(plan) => {
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
                return sync_rollout_status(ctx, &all, Some(new_rs), d).await;
            }
        }
        RollingDecision::Idle { .. } => {}
    }
    let stored = d.status.clone().unwrap_or_default();
    if deployment_complete(d, &stored) {
        cleanup_deployment(ctx, &rss.old_rss, d).await?;
    }
    sync_rollout_status(ctx, &all, Some(new_rs), d).await?;
    match swallowed {
        Some(e) => Err(SyncError::swallowed("scaling down old replica sets", e)),
        None => Ok(()),
    }
}
