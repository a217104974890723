//! One reconciliation of a ReplicaSet (upstream `syncReplicaSet`, spec §6):
//! expectations check, claim pods, create/delete, status, availability requeue.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_controller::controller_ref_manager::{
    CanAdopt, ControllerRefManager, ControllerRefOwner, recheck_deletion_timestamp,
};
use kcm_controller::pod::PodView;
use kcm_controller::pod_util::{
    filter_active_pods, find_min_next_pod_availability_check, is_controlled_by, is_pod_terminating,
};
use kcm_informer::Selector;

use kcm_controller::consistency::record_stale_sync_skip;

use crate::client::ReplicaSetClient;
use crate::config::METRICS_SUBSYSTEM;
use crate::error::SyncError;
use crate::pod_index::pods_for_owner;
use crate::replica_set::{Core, REPLICASETS};
use crate::status::{calculate_status, min_ready_seconds, update_replica_set_status};

/// Splits a `namespace/name` queue key.
pub fn split_key(key: &str) -> Result<(&str, &str), SyncError> {
    match key.split_once('/') {
        Some((ns, name)) if !name.is_empty() && !name.contains('/') => Ok((ns, name)),
        None if !key.is_empty() => Ok(("", key)),
        _ => Err(SyncError::InvalidKey(key.to_string())),
    }
}

/// The adoption pre-check: a live GET of the ReplicaSet must return the same
/// UID and no deletionTimestamp.
fn live_can_adopt(
    client: Arc<dyn ReplicaSetClient>,
    owner: ControllerRefOwner,
) -> CanAdopt<'static> {
    Box::new(move || {
        Box::pin(async move {
            let fresh = client
                .get(&owner.namespace, &owner.name)
                .await
                .map(|rs| rs.metadata);
            recheck_deletion_timestamp(&owner, fresh)
        })
    })
}

fn selector_of(rs: &ReplicaSet) -> Result<Selector, String> {
    Selector::from_label_selector(&rs.spec.selector).map_err(|e| e.to_string())
}

impl Core {
    /// Upstream `syncReplicaSet`.
    pub(crate) async fn sync_replica_set(&self, key: &str) -> Result<(), SyncError> {
        let start = std::time::Instant::now();
        let result = self.sync_inner(key).await;
        tracing::trace!(replicaset = key, elapsed = ?start.elapsed(), "Finished syncing");
        result
    }

    async fn sync_inner(&self, key: &str) -> Result<(), SyncError> {
        let (ns, name) = split_key(key)?;
        if let Some(store) = &self.consistency
            && let Err(stale) = store.ensure_ready(ns, name)
        {
            record_stale_sync_skip(METRICS_SUBSYSTEM, &stale);
            return Err(stale.into());
        }
        let Some(rs) = self.rs_lister.get(ns, name) else {
            tracing::debug!(replicaset = key, "ReplicaSet has been deleted");
            if let Some(store) = &self.consistency {
                store.clear(ns, name, None);
            }
            self.expectations.delete_expectations(key);
            return Ok(());
        };
        // Checked before listing pods: a pod observed in between cannot cause a double create.
        let rs_needs_sync = self.expectations.satisfied_expectations(key);
        let selector = match selector_of(&rs) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(
                    replicaset = key,
                    "error converting pod selector to selector for rs {key}: {e}"
                );
                return Ok(());
            }
        };
        let owner = ControllerRefOwner::of(&*rs);
        let rs_uid = owner.uid.clone();
        // Pods this ReplicaSet controls plus the namespace's orphans.
        let all_pods = pods_for_owner(&self.pod_lister, ns, &rs_uid);
        let active = filter_active_pods(&all_pods);
        let matches = |p: &PodView| selector.matches_opt(p.metadata.labels.as_ref());
        let mut manager =
            ControllerRefManager::new(owner.clone(), live_can_adopt(self.rs_client.clone(), owner));
        let claimed: Vec<Arc<PodView>> = manager
            .claim_pods(&*self.pod_control, &active, matches)
            .await
            .into_result()
            .map_err(SyncError::Claim)?;
        let terminating = self.features.terminating_replicas().then(|| {
            all_pods
                .iter()
                .filter(|p| {
                    is_pod_terminating(&***p)
                        && is_controlled_by(&p.metadata, &rs_uid)
                        && matches(p)
                })
                .count()
        });

        let manage_err = if rs_needs_sync && rs.metadata.deletion_timestamp.is_none() {
            self.manage_replicas(&claimed, &rs).await.err()
        } else {
            None
        };

        let now = self.clock.now();
        let new_status = calculate_status(
            &rs,
            &claimed,
            terminating,
            manage_err.as_ref().map(ToString::to_string).as_deref(),
            now,
        );
        let updated = update_replica_set_status(&*self.rs_client, &rs, new_status)
            .await
            .map_err(|source| SyncError::Status {
                key: key.to_string(),
                source,
            })?;
        if let Some(store) = &self.consistency {
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
        if min_ready > 0
            && status.ready_replicas.unwrap_or(0) != status.available_replicas.unwrap_or(0)
        {
            let delay =
                find_min_next_pod_availability_check(&claimed, min_ready, now, &*self.clock)
                    .unwrap_or_else(|| Duration::from_secs(u64::try_from(min_ready).unwrap_or(0)));
            self.queue.add_after(key.to_string(), delay);
        }
        Ok(())
    }
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
