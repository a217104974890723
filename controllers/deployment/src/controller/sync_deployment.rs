//! `syncDeployment` (upstream `deployment_controller.go`): the decision order of one sync,
//! `getReplicaSetsForDeployment` (ControllerRef adoption/release) and
//! `getPodMapForDeployment`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_controller::PodView;
use kcm_controller::consistency::record_stale_sync_skip;
use kcm_controller::controller_ref_manager::{
    ControllerRefManager, ControllerRefOwner, live_can_adopt,
};
use kcm_informer::{Lister, Selector};
use kube::api::Api;

use crate::dispatch::selects_everything;
use crate::events::{DeploymentEvent, EventType, SELECTING_ALL, SELECTING_ALL_MESSAGE};
use crate::rollback::get_rollback_to;
use crate::util::fields::{generation, name_of, uid_of};
use crate::util::replica_sets::get_controller_of;
use crate::util::strategy::{RECREATE_STRATEGY, ROLLING_UPDATE_STRATEGY, strategy_type};

use super::SyncError;
use super::deployment_controller::Inner;
use super::rollout;

/// Pods of a Deployment grouped by the UID of their controlling ReplicaSet; every
/// ReplicaSet of the list has an entry (possibly empty). Terminating and finished pods are
/// kept (Recreate must see them).
pub type PodMap = HashMap<String, Vec<Arc<PodView>>>;

/// One sync of the Deployment `key` (`namespace/name`), in upstream's order.
pub(crate) async fn sync_deployment(inner: &Inner, key: &str) -> Result<(), SyncError> {
    let start = Instant::now();
    tracing::trace!(deployment = key, "Started syncing deployment");
    let result = sync_inner(inner, key).await;
    tracing::trace!(
        deployment = key,
        duration_ms = start.elapsed().as_millis() as u64,
        "Finished syncing deployment"
    );
    result
}

fn split_key(key: &str) -> Result<(&str, &str), SyncError> {
    let parts: Vec<&str> = key.split('/').collect();
    match parts.as_slice() {
        [name] if !name.is_empty() => Ok(("", name)),
        [ns, name] if !name.is_empty() => Ok((ns, name)),
        _ => Err(SyncError::Other(format!("unexpected key format: {key:?}"))),
    }
}

async fn sync_inner(inner: &Inner, key: &str) -> Result<(), SyncError> {
    let (namespace, name) = split_key(key)?;
    let Some(cached) = inner.d_lister.get(namespace, name) else {
        tracing::debug!(deployment = key, "Deployment has been deleted");
        inner.own_writes.clear(namespace, name, None);
        return Ok(());
    };
    if let Err(stale) = inner.own_writes.ensure_ready(namespace, name) {
        record_stale_sync_skip("deployment_controller", &stale);
        return Err(stale.into());
    }
    // Never mutate the cache.
    let mut d: Deployment = (*cached).clone();

    if selects_everything(&d) {
        inner.emit(
            &d,
            &DeploymentEvent {
                type_: EventType::Warning,
                reason: SELECTING_ALL,
                message: SELECTING_ALL_MESSAGE.to_string(),
            },
        );
        let observed = d
            .status
            .as_ref()
            .and_then(|s| s.observed_generation)
            .unwrap_or(0);
        if observed < generation(&d) {
            d.status
                .get_or_insert_with(Default::default)
                .observed_generation = Some(generation(&d));
            // Upstream ignores this write's result and returns success; the pass does the
            // same, but a failure retries the key with backoff (no event may follow it).
            if let Err(e) = rollout::update_status(
                inner,
                &d,
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
        return Ok(());
    }

    let rs_list = get_replica_sets_for_deployment(inner, &d).await?;
    let rs_refs: Vec<&ReplicaSet> = rs_list.iter().map(Arc::as_ref).collect();

    if d.metadata.deletion_timestamp.is_some() {
        return rollout::sync_status_only(inner, &mut d, &rs_refs).await;
    }

    // Pausing/resuming is reflected in the Progressing condition before anything else, so a
    // paused rollout does not time out.
    rollout::check_paused_conditions(inner, &mut d).await?;

    if d.spec.paused.unwrap_or(false) {
        return rollout::sync(inner, &mut d, &rs_refs).await;
    }

    if get_rollback_to(&d).is_some() {
        return rollout::rollback(inner, &mut d, &rs_refs).await;
    }

    if rollout::is_scaling_event(inner, &mut d, &rs_refs).await? {
        return rollout::sync(inner, &mut d, &rs_refs).await;
    }

    match strategy_type(&d) {
        RECREATE_STRATEGY => {
            // Upstream builds the pod map on every sync, but only Recreate reads it (are old
            // pods still around?). Scanning the namespace's pods costs O(pods) per sync, so it
            // is built here only; it cannot fail where upstream's would not (the selector was
            // already parsed to list the ReplicaSets).
            let pod_map = pod_map_for_deployment(&inner.pod_lister, &d, &rs_refs)?;
            rollout::rollout_recreate(inner, &mut d, &rs_refs, &pod_map).await
        }
        ROLLING_UPDATE_STRATEGY => rollout::rollout_rolling(inner, &mut d, &rs_refs).await,
        other => Err(SyncError::Other(format!(
            "unexpected deployment strategy type: {other}"
        ))),
    }
}

fn deployment_selector(d: &Deployment) -> Result<Selector, SyncError> {
    let parsed = Selector::from_label_selector(&d.spec.selector).map_err(|e| e.to_string());
    parsed.map_err(|e| {
        SyncError::Other(format!(
            "deployment {}/{} has invalid label selector: {e}",
            d.metadata.namespace.as_deref().unwrap_or_default(),
            name_of(&d.metadata)
        ))
    })
}

/// `getReplicaSetsForDeployment`: every ReplicaSet of the namespace (also those that stopped
/// matching) goes through the ControllerRef claim: orphans matching the selector are adopted
/// (after an uncached re-read of the Deployment proving it is not being deleted), owned ones
/// that stopped matching are released. Returns the claimed ReplicaSets in cache order.
pub(crate) async fn get_replica_sets_for_deployment(
    inner: &Inner,
    d: &Deployment,
) -> Result<Vec<Arc<ReplicaSet>>, SyncError> {
    let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
    let rs_list = inner
        .rs_lister
        .namespaced(namespace)
        .list(&Selector::everything());
    let selector = deployment_selector(d)?;
    let owner = ControllerRefOwner::of(d);
    let api: Api<Deployment> = Api::namespaced(inner.client.clone(), namespace);
    let mut manager = ControllerRefManager::new(owner.clone(), live_can_adopt(api, owner));
    let claimed = manager
        .claim_replica_sets(inner.rs_control.as_ref(), &rs_list, |rs: &ReplicaSet| {
            selector.matches_opt(rs.metadata.labels.as_ref())
        })
        .await
        .into_result()?;
    Ok(claimed)
}

/// `getPodMapForDeployment`: the pods of the Deployment's namespace matching its selector,
/// grouped by the UID of their controlling ReplicaSet (only ReplicaSets of `rs_list`).
pub fn pod_map_for_deployment(
    pod_lister: &Lister<PodView>,
    d: &Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<PodMap, SyncError> {
    let selector = deployment_selector(d)?;
    let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
    let mut map: PodMap = rs_list
        .iter()
        .map(|rs| (uid_of(&rs.metadata).to_string(), Vec::new()))
        .collect();
    for pod in pod_lister.namespaced(namespace).list(&selector) {
        let Some(r) = get_controller_of(&pod.metadata) else {
            continue;
        };
        if let Some(pods) = map.get_mut(&r.uid) {
            pods.push(pod);
        }
    }
    Ok(map)
}
