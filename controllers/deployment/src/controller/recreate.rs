//! The I/O half of upstream `recreate.go`: `rolloutRecreate` executes the decisions of
//! [`crate::recreate`].

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::recreate::{RecreateDecision, rollout_recreate as decide_recreate};

use super::SyncError;
use super::context::Context;
use super::pod_map::PodMap;
use super::progress::sync_rollout_status;
use super::sync::{
    cleanup_deployment, execute_scale_steps, get_all_replica_sets_and_sync_revision,
};

/// `rolloutRecreate`: old ReplicaSets to 0, wait until their pods are gone, create the new
/// ReplicaSet, scale it up, clean up, status.
pub(crate) async fn rollout_recreate(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
    pod_map: &PodMap,
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(ctx, d, rs_list, false).await?;
    let pods = || {
        pod_map.iter().flat_map(|(uid, pods)| {
            pods.iter()
                .map(move |p| (uid.as_str(), p.status.phase.as_deref().unwrap_or_default()))
        })
    };
    match decide_recreate(d, rss.new_rs.as_ref(), &rss.old_rss, pods()) {
        RecreateDecision::ScaleDownOldReplicaSets(steps) => {
            let all = rss.all();
            if execute_scale_steps(ctx, d, &all, &steps).await? {
                return sync_rollout_status(ctx, &all, rss.new_rs.as_ref(), d).await;
            }
        }
        RecreateDecision::WaitForOldPods => {
            let all = rss.all();
            return sync_rollout_status(ctx, &all, rss.new_rs.as_ref(), d).await;
        }
        RecreateDecision::CreateNewReplicaSet | RecreateDecision::ScaleUpNewReplicaSet { .. } => {}
    }
    let rss = if rss.new_rs.is_none() {
        get_all_replica_sets_and_sync_revision(ctx, d, rs_list, true).await?
    } else {
        rss
    };
    let all = rss.all();
    if let RecreateDecision::ScaleUpNewReplicaSet { step, cleanup } =
        decide_recreate(d, rss.new_rs.as_ref(), &rss.old_rss, pods())
    {
        if let Some(step) = step {
            execute_scale_steps(ctx, d, &all, &[step]).await?;
        }
        if cleanup {
            cleanup_deployment(ctx, &rss.old_rss, d).await?;
        }
    }
    sync_rollout_status(ctx, &all, rss.new_rs.as_ref(), d).await
}
