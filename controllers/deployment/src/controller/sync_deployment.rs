//! `syncDeployment` (upstream `deployment_controller.go`): one sync of one Deployment key, a
//! `match` on [`sync_path`] whose short paths live here (a selector selecting everything,
//! `syncStatusOnly` and `sync` of upstream `sync.go`) and whose rollouts are in
//! [`rollouts`](super::rollouts); and `getReplicaSetsForDeployment` (ControllerRef adoption
//! and release).

use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_controller::ControlError;
use kcm_controller::consistency::record_stale_sync_skip;
use kcm_controller::controller_ref_manager::{
    ControllerRefManager, ControllerRefOwner, live_can_adopt,
};
use kcm_controller::owner_index::claim_candidates;
use kcm_informer::ObjectKey;
use kube::api::Api;

use crate::events::{DeploymentEvent, EventType, SELECTING_ALL, SELECTING_ALL_MESSAGE};
use crate::plan::dispatch::{Strategy, SyncPath, scaling_cleans_up, sync_path};
use crate::plan::scale::{is_scaling_event, scale};
use crate::util::fields::generation;

use super::SyncError;
use super::context::Context;
use super::pod_map::{deployment_selector, pod_map_for_deployment};
use super::replica_set_changes::{
    cleanup_deployment, execute_scale_steps, get_replica_sets_and_update_revision,
};
use super::rollouts::{rollback, rollout_recreate, rollout_rolling};
use super::status_updates::{check_paused_conditions, update_deployment_status};
use super::writes;

/// One sync of the Deployment `key`, in upstream's order.
pub(crate) async fn sync_deployment(ctx: &Context, key: &ObjectKey) -> Result<(), SyncError> {
    let start = Instant::now();
    tracing::trace!(deployment = %key, "Started syncing deployment");
    let result = sync_inner(ctx, key).await;
    tracing::trace!(
        deployment = %key,
        duration_ms = start.elapsed().as_millis() as u64,
        "Finished syncing deployment"
    );
    result
}

async fn sync_inner(ctx: &Context, key: &ObjectKey) -> Result<(), SyncError> {
    let (namespace, name) = (key.namespace.as_str(), key.name.as_str());
    let Some(cached) = ctx.d_lister.get(namespace, name) else {
        tracing::debug!(deployment = %key, "Deployment has been deleted");
        ctx.own_writes.clear(namespace, name, None);
        return Ok(());
    };
    if let Err(stale) = ctx.own_writes.ensure_ready(namespace, name) {
        record_stale_sync_skip("deployment_controller", &stale);
        return Err(stale.into());
    }
    // Never mutate the cache.
    let mut d: Deployment = (*cached).clone();

    let path = sync_path(&d);
    let rs_list = if path.claims_replica_sets() {
        get_replica_sets_for_deployment(ctx, &d).await?
    } else {
        Vec::new()
    };
    let rs_refs: Vec<&ReplicaSet> = rs_list.iter().map(Arc::as_ref).collect();
    if path.checks_paused_conditions() {
        check_paused_conditions(ctx, &mut d).await?;
    }
    match path {
        SyncPath::SelectingAll {
            bump_observed_generation,
        } => selecting_all(ctx, &mut d, bump_observed_generation).await,
        SyncPath::StatusOnly => update_status_only(ctx, &mut d, &rs_refs).await,
        SyncPath::Paused => reconcile_scaling(ctx, &mut d, &rs_refs).await,
        SyncPath::Rollback => rollback(ctx, &mut d, &rs_refs).await,
        SyncPath::Rollout(strategy) => {
            // `isScalingEvent`, after the revision update it starts with.
            let rss = get_replica_sets_and_update_revision(ctx, &mut d, &rs_refs, false).await?;
            if is_scaling_event(&d, rss.new_rs.as_ref(), &rss.old_rss) {
                return reconcile_scaling(ctx, &mut d, &rs_refs).await;
            }
            match strategy {
                Strategy::Recreate => {
                    // Upstream builds the pod map on every sync, but only Recreate reads it (are
                    // old pods still around?), so it is built here only. It reads the pod
                    // controller index, as upstream's does, and cannot fail.
                    let pod_map = pod_map_for_deployment(&ctx.pod_lister, &rs_refs);
                    rollout_recreate(ctx, &mut d, &rs_refs, &pod_map).await
                }
                Strategy::RollingUpdate => rollout_rolling(ctx, &mut d, &rs_refs).await,
                Strategy::Unexpected(other) => Err(SyncError::Other(format!(
                    "unexpected deployment strategy type: {other}"
                ))),
            }
        }
    }
}

/// `syncStatusOnly`: a Deployment being deleted only gets its status refreshed.
async fn update_status_only(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_replica_sets_and_update_revision(ctx, d, rs_list, false).await?;
    let all = rss.all();
    update_deployment_status(ctx, &all, rss.new_rs.as_ref(), d).await
}

/// Upstream's `sync`, for scaling events and paused Deployments: proportional scaling
/// ([`scale`]), old ReplicaSets cleaned up when paused ([`scaling_cleans_up`]), then the
/// plain status.
async fn reconcile_scaling(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_replica_sets_and_update_revision(ctx, d, rs_list, false).await?;
    let all = rss.all();
    let steps = scale(d, rss.new_rs.as_ref(), &rss.old_rss);
    execute_scale_steps(ctx, d, &all, &steps).await?;
    if scaling_cleans_up(d) {
        cleanup_deployment(ctx, &rss.old_rss, d).await?;
    }
    update_deployment_status(ctx, &all, rss.new_rs.as_ref(), d).await
}

/// A selector that selects everything: Warning `SelectingAll`, and `observedGeneration` bumped
/// when it lags.
async fn selecting_all(
    ctx: &Context,
    d: &mut Deployment,
    bump_observed_generation: bool,
) -> Result<(), SyncError> {
    ctx.emit(
        d,
        &DeploymentEvent {
            type_: EventType::Warning,
            reason: SELECTING_ALL,
            message: SELECTING_ALL_MESSAGE.to_string(),
        },
    );
    if bump_observed_generation {
        d.status
            .get_or_insert_with(Default::default)
            .observed_generation = Some(generation(d));
        // Upstream ignores this write's result and returns success; the pass does the
        // same, but a failure retries the key with backoff (no event may follow it).
        if let Err(e) = writes::update_status(
            ctx,
            d,
            "selector selects everything: only observedGeneration",
        )
        .await
        {
            return Err(SyncError::swallowed(
                "updating observedGeneration of a deployment selecting everything",
                e,
            ));
        }
    }
    Ok(())
}

/// `getReplicaSetsForDeployment`: the ReplicaSets the Deployment controls (also those that
/// stopped matching) and the namespace's orphans go through the ControllerRef claim: orphans
/// matching the selector are adopted (after an uncached re-read of the Deployment proving it is
/// not being deleted), owned ones that stopped matching are released. Upstream claims every
/// ReplicaSet of the namespace; the others have another controller, which the claim ignores, so
/// reading these through the controller index ([`claim_candidates`]) claims and writes the same.
/// Returns the claimed ReplicaSets in name order.
pub(crate) async fn get_replica_sets_for_deployment(
    ctx: &Context,
    d: &Deployment,
) -> Result<Vec<Arc<ReplicaSet>>, SyncError> {
    let selector = deployment_selector(d)?;
    let owner = ControllerRefOwner::of(d);
    let rs_list = claim_candidates(&ctx.rs_lister, &owner.namespace, &owner.uid);
    let namespace = owner.namespace.as_str();
    let api: Api<Deployment> = Api::namespaced(ctx.client.clone(), namespace);
    let name = owner.name.clone();
    let get_owner = async move {
        api.get(&name)
            .await
            .map(|fresh| fresh.metadata)
            .map_err(ControlError::from)
    };
    let mut manager = ControllerRefManager::new(owner.clone(), live_can_adopt(owner, get_owner));
    let claimed = manager
        .claim_replica_sets(ctx.rs_control.as_ref(), &rs_list, |rs: &ReplicaSet| {
            selector.matches_opt(rs.metadata.labels.as_ref())
        })
        .await
        .into_result()?;
    Ok(claimed)
}
