//! One sync of a ReplicaSet key (upstream `replica_set.go` `syncReplicaSet`):
//! expectations check, claim pods, create/delete, status, availability requeue.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_controller::consistency::record_stale_sync_skip;
use kcm_controller::controller_ref_manager::{
    ControllerRefManager, ControllerRefOwner, live_can_adopt,
};
use kcm_controller::pod_util::{
    filter_active_pods, find_min_next_pod_availability_check, is_controlled_by, is_pod_terminating,
};
use kcm_controller::pod_view::PodView;
use kcm_informer::{ObjectKey, Selector};

use crate::config::METRICS_SUBSYSTEM;
use crate::error::SyncError;
use crate::status::{calculate_status, min_ready_seconds};
use kcm_controller::owner_index::{Owner, filter_by_owner};

use super::context::{Context, REPLICASETS};
use super::manage::manage_replicas;
use super::writes::{get_replica_set, update_replica_set_status};

fn selector_of(rs: &ReplicaSet) -> Result<Selector, String> {
    Selector::from_label_selector(&rs.spec.selector).map_err(|e| e.to_string())
}

/// Upstream `syncReplicaSet`.
pub(crate) async fn sync_replica_set(ctx: &Context, key: &ObjectKey) -> Result<(), SyncError> {
    let start = std::time::Instant::now();
    let result = sync_inner(ctx, key).await;
    tracing::trace!(replicaset = %key, elapsed = ?start.elapsed(), "Finished syncing");
    result
}

async fn sync_inner(ctx: &Context, key: &ObjectKey) -> Result<(), SyncError> {
    let (ns, name) = (key.namespace.as_str(), key.name.as_str());
    if let Some(store) = &ctx.consistency
        && let Err(stale) = store.ensure_ready(ns, name)
    {
        record_stale_sync_skip(METRICS_SUBSYSTEM, &stale);
        return Err(stale.into());
    }
    let Some(rs) = ctx.rs_lister.get(ns, name) else {
        tracing::debug!(replicaset = %key, "ReplicaSet has been deleted");
        if let Some(store) = &ctx.consistency {
            store.clear(ns, name, None);
        }
        ctx.expectations.delete_expectations(key);
        return Ok(());
    };
    // Checked before listing pods: a pod observed in between cannot cause a double create.
    let rs_needs_sync = ctx.expectations.satisfied_expectations(key);
    let selector = match selector_of(&rs) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(
                replicaset = %key,
                "error converting pod selector to selector for rs {key}: {e}"
            );
            return Ok(());
        }
    };
    let owner = ControllerRefOwner::of(&*rs);
    let rs_uid = owner.uid.clone();
    // Pods this ReplicaSet controls plus the namespace's orphans.
    let all_pods = filter_by_owner(
        &ctx.pod_lister,
        Owner {
            kind: &owner.kind,
            namespace: &owner.namespace,
            name: &owner.name,
            uid: &owner.uid,
        },
        true,
    );
    let active = filter_active_pods(&all_pods);
    let matches = |p: &PodView| selector.matches_opt(p.metadata.labels.as_ref());
    // The adoption pre-check: a live GET of the ReplicaSet must return the same UID and no
    // deletionTimestamp.
    let client = ctx.client.clone();
    let (owner_ns, owner_name) = (owner.namespace.clone(), owner.name.clone());
    let get_owner = async move {
        get_replica_set(&client, &owner_ns, &owner_name)
            .await
            .map(|fresh| fresh.metadata)
    };
    let mut manager = ControllerRefManager::new(owner.clone(), live_can_adopt(owner, get_owner));
    let claimed: Vec<Arc<PodView>> = manager
        .claim_pods(&*ctx.pod_control, &active, matches)
        .await
        .into_result()
        .map_err(SyncError::Claim)?;
    let terminating = ctx.features.terminating_replicas().then(|| {
        all_pods
            .iter()
            .filter(|p| {
                is_pod_terminating(&***p) && is_controlled_by(&p.metadata, &rs_uid) && matches(p)
            })
            .count()
    });

    let manage_err = if rs_needs_sync && rs.metadata.deletion_timestamp.is_none() {
        manage_replicas(ctx, key, &claimed, &rs).await.err()
    } else {
        None
    };

    let now = ctx.clock.now();
    let new_status = calculate_status(
        &rs,
        &claimed,
        terminating,
        manage_err.as_ref().map(ToString::to_string).as_deref(),
        now,
    );
    let updated = update_replica_set_status(&ctx.client, &rs, new_status)
        .await
        .map_err(|source| SyncError::Status {
            key: key.clone(),
            source,
        })?;
    if let Some(store) = &ctx.consistency {
        store.wrote_at(
            ns,
            name,
            &rs_uid,
            REPLICASETS,
            updated
                .metadata
                .resource_version
                .as_deref()
                .unwrap_or_default(),
        );
    }
    if let Some(e) = manage_err {
        return Err(SyncError::Manage(e));
    }
    let min_ready = min_ready_seconds(&updated);
    let status = updated.status.clone().unwrap_or_default();
    if min_ready > 0 && status.ready_replicas.unwrap_or(0) != status.available_replicas.unwrap_or(0)
    {
        let delay = find_min_next_pod_availability_check(&claimed, min_ready, now, &*ctx.clock)
            .unwrap_or_else(|| Duration::from_secs(u64::try_from(min_ready).unwrap_or(0)));
        ctx.queue.add_after(key.clone(), delay);
    }
    Ok(())
}

#[cfg(test)]
#[path = "sync_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "sync_claim_tests.rs"]
mod claim_tests;

#[cfg(test)]
#[path = "sync_consistency_tests.rs"]
mod consistency_tests;

#[cfg(test)]
#[path = "sync_gate_tests.rs"]
mod gate_tests;
