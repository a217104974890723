//! Scaling a ReplicaSet towards `spec.replicas` (upstream `replica_set.go`
//! `manageReplicas`): slow-start creates or ranked parallel deletes, at most
//! `burst_replicas` per sync, with expectations raised before any API call and
//! lowered for every call that did not happen or failed.

use std::sync::Arc;

use futures::future::join_all;
use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_controller::ControlError;
use kcm_controller::controller_ref_manager::ControllerRefOwner;
use kcm_controller::error::NAMESPACE_TERMINATING_CAUSE;
use kcm_controller::event_recorder::object_reference;
use kcm_controller::pod_util::pod_key;
use kcm_controller::pod_view::PodView;
use kcm_controller::ranking::get_pods_to_delete;
use kcm_controller::related_pods::indirectly_related_pods;
use kcm_controller::slow_start::{SLOW_START_INITIAL_BATCH_SIZE, slow_start_batch};
use kcm_informer::ObjectKey;

use crate::status::spec_replicas;

use super::context::Context;

/// Creates or deletes pods so that `active` (the claimed active pods)
/// approaches `spec.replicas`. Returns the first failure.
pub(crate) async fn manage_replicas(
    ctx: &Context,
    key: &ObjectKey,
    active: &[Arc<PodView>],
    rs: &ReplicaSet,
) -> Result<(), ControlError> {
    let diff = i64::try_from(active.len()).unwrap_or(i64::MAX) - i64::from(spec_replicas(rs));
    let burst = i64::try_from(ctx.burst_replicas).unwrap_or(i64::MAX);
    if diff < 0 {
        let n = (-diff).min(burst);
        scale_up(ctx, rs, key, usize::try_from(n).unwrap_or(0)).await
    } else if diff > 0 {
        let n = diff.min(burst);
        scale_down(ctx, rs, key, active, usize::try_from(n).unwrap_or(0)).await
    } else {
        Ok(())
    }
}

async fn scale_up(
    ctx: &Context,
    rs: &ReplicaSet,
    key: &ObjectKey,
    n: usize,
) -> Result<(), ControlError> {
    // Expect all creations before the first call: the informer may see a pod
    // before its create call returns.
    ctx.expectations
        .expect_creations(key, i64::try_from(n).unwrap_or(i64::MAX));
    tracing::debug!(
        replicaset = %key,
        need = spec_replicas(rs),
        creating = n,
        "Too few replicas"
    );
    let ns = rs.metadata.namespace.as_deref().unwrap_or_default();
    let template = rs.spec.template.clone().unwrap_or_default();
    let owner = object_reference(rs);
    let controller_ref = ControllerRefOwner::of(rs).controller_ref();
    let (successes, err) = slow_start_batch(n, SLOW_START_INITIAL_BATCH_SIZE, || async {
        match ctx
            .pod_control
            .create_pods(ns, &template, &owner, &controller_ref)
            .await
        {
            // The namespace is going away: nothing will be created; not an error.
            Err(e) if e.has_status_cause(NAMESPACE_TERMINATING_CAUSE) => Ok(()),
            r => r,
        }
    })
    .await;
    // Creations that failed or were never attempted will never be observed.
    let skipped = n.saturating_sub(successes);
    if skipped > 0 {
        tracing::debug!(
            replicaset = %key,
            skipped,
            "Slow-start failure: skipping creation of pods, decrementing expectations"
        );
        for _ in 0..skipped {
            ctx.expectations.creation_observed(key);
        }
    }
    err.map_or(Ok(()), Err)
}

async fn scale_down(
    ctx: &Context,
    rs: &ReplicaSet,
    key: &ObjectKey,
    active: &[Arc<PodView>],
    n: usize,
) -> Result<(), ControlError> {
    tracing::debug!(
        replicaset = %key,
        need = spec_replicas(rs),
        deleting = n,
        "Too many replicas"
    );
    let related = get_indirectly_related_pods(ctx, rs);
    let victims = get_pods_to_delete(active, &related, n, ctx.clock.now(), ctx.features.ranking);
    let keys: Vec<String> = victims.iter().map(|p| pod_key(&**p)).collect();
    // Expect the deletions (by pod key) before issuing any of them.
    ctx.expectations.expect_deletions(key, &keys);
    let ns = rs.metadata.namespace.as_deref().unwrap_or_default();
    let owner = object_reference(rs);
    let results = join_all(victims.iter().zip(&keys).map(|(pod, pkey)| {
        let owner = &owner;
        async move {
            let name = pod.metadata.name.as_deref().unwrap_or_default();
            match ctx.pod_control.delete_pod(ns, name, owner).await {
                Ok(()) => None,
                Err(e) => {
                    // The deletion will not be observed: stop waiting for it.
                    tracing::debug!(replicaset = %key, pod = %pkey, "Failed to delete pod, decrementing expectations");
                    ctx.expectations.deletion_observed(key, pkey);
                    (!e.is_not_found()).then_some(e)
                }
            }
        }
    }))
    .await;
    results.into_iter().flatten().next().map_or(Ok(()), Err)
}

/// Pods selected by any ReplicaSet with the same controller as `rs`
/// (including `rs`), for co-location ranking (upstream `getIndirectlyRelatedPods`),
/// through the cache indexes.
pub(crate) fn get_indirectly_related_pods(ctx: &Context, rs: &ReplicaSet) -> Vec<Arc<PodView>> {
    indirectly_related_pods(&ctx.rs_lister, &ctx.pod_lister, rs)
}

#[cfg(test)]
#[path = "manage_tests.rs"]
mod tests;
