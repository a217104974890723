//! The I/O half of upstream `sync.go`, `rolling.go`, `recreate.go`, `rollback.go` and
//! `progress.go`: executes the plans of the pure modules against the API server.
//!
//! As upstream, `d` is the sync's private copy of the Deployment and is mutated in place
//! (revision annotation, conditions, status) as the pass goes; status writes send it whole to
//! `/status` and do not refresh its resourceVersion, so a second write in the same pass can
//! fail with a Conflict and the key is retried — exactly like kube-controller-manager.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet};
use kcm_controller::api_write::log_write;
use kube::api::{Api, DeleteParams, PostParams};

use crate::dispatch::sync_cleans_up;
use crate::progress::{
    RolloutStatusDecision, StuckRequeue, sync_rollout_status as decide_rollout_status,
};
use crate::recreate::{RecreateDecision, rollout_recreate as decide_recreate};
use crate::rolling::{RollingDecision, rollout_rolling as decide_rolling};
use crate::sync::{
    AlreadyExistsResolution, ExistingNewReplicaSetAction, ScaleStep, after_new_replica_set_created,
    classify_replica_sets, is_scaling_event as decide_is_scaling_event, new_replica_set,
    on_new_replica_set_already_exists, on_new_replica_set_create_failed, replica_sets_to_clean_up,
    scale, sync_existing_new_replica_set,
};
use crate::util::fields::name_of;
use crate::util::predicates::deployment_complete;

use super::SyncError;
use super::deployment_controller::Inner;
use super::sync_deployment::PodMap;

fn namespace_of(d: &Deployment) -> &str {
    d.metadata.namespace.as_deref().unwrap_or_default()
}

fn rs_api(inner: &Inner, d: &Deployment) -> Api<ReplicaSet> {
    Api::namespaced(inner.client.clone(), namespace_of(d))
}

/// `UpdateStatus(d)`: PUT of the whole Deployment to `/status`, logged with `why` and a
/// summary of the status written.
pub(crate) async fn update_status(
    inner: &Inner,
    d: &Deployment,
    why: &str,
) -> Result<Deployment, SyncError> {
    let api: Api<Deployment> = Api::namespaced(inner.client.clone(), namespace_of(d));
    let result = api
        .replace_status(name_of(&d.metadata), &PostParams::default(), d)
        .await
        .map_err(SyncError::from);
    if let Ok(written) = &result {
        inner.wrote(written);
    }
    let status = d.status.as_ref();
    let field = |f: fn(&DeploymentStatus) -> Option<i64>| status.and_then(f).unwrap_or(0);
    let progressing = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_.as_deref() == Some("Progressing")))
        .map_or("none", |c| c.reason.as_deref().unwrap_or_default());
    log_write(
        "update",
        "deployments/status",
        namespace_of(d),
        name_of(&d.metadata),
        format_args!(
            "{why} (replicas {}, updated {}, ready {}, available {}, observedGeneration {}, \
             Progressing {progressing})",
            field(|s| s.replicas.map(i64::from)),
            field(|s| s.updated_replicas.map(i64::from)),
            field(|s| s.ready_replicas.map(i64::from)),
            field(|s| s.available_replicas.map(i64::from)),
            field(|s| s.observed_generation),
        ),
        result.as_ref().map(|_| ()),
    );
    result
}

/// The old ReplicaSets and the new one (if any) after `getAllReplicaSetsAndSyncRevision`.
pub(crate) struct ReplicaSets<'a> {
    pub(crate) new_rs: Option<ReplicaSet>,
    pub(crate) old_rss: Vec<&'a ReplicaSet>,
}

impl<'a> ReplicaSets<'a> {
    /// `append(oldRSs, newRS)`.
    pub(crate) fn all(&self) -> Vec<&ReplicaSet> {
        self.old_rss
            .iter()
            .copied()
            .chain(self.new_rs.as_ref())
            .collect()
    }
}

/// `getAllReplicaSetsAndSyncRevision` / `getNewReplicaSet`.
pub(crate) async fn get_all_replica_sets_and_sync_revision<'a>(
    inner: &Inner,
    d: &mut Deployment,
    rs_list: &[&'a ReplicaSet],
    create_if_not_existed: bool,
) -> Result<ReplicaSets<'a>, SyncError> {
    let classified = classify_replica_sets(d, rs_list);
    let old_rss = classified.old_rss.clone();
    let now = inner.clock.now();
    if let Some(existing) = classified.new_rs {
        let new_rs = match sync_existing_new_replica_set(d, existing, &classified.new_revision, now)
        {
            ExistingNewReplicaSetAction::UpdateReplicaSet(rs_copy) => {
                let result = rs_api(inner, d)
                    .replace(name_of(&rs_copy.metadata), &PostParams::default(), &rs_copy)
                    .await
                    .map_err(SyncError::from);
                log_write(
                    "update",
                    "replicasets",
                    namespace_of(d),
                    name_of(&rs_copy.metadata),
                    format_args!(
                        "sync revision and replica annotations of the new ReplicaSet of \
                         deployment {}/{} (revision {})",
                        namespace_of(d),
                        name_of(&d.metadata),
                        classified.new_revision
                    ),
                    result.as_ref().map(|_| ()),
                );
                result?
            }
            ExistingNewReplicaSetAction::UpdateDeploymentStatus(updated) => {
                *d = updated;
                update_status(inner, d, "record the found new ReplicaSet in Progressing").await?;
                existing.clone()
            }
            ExistingNewReplicaSetAction::Nothing => existing.clone(),
        };
        return Ok(ReplicaSets {
            new_rs: Some(new_rs),
            old_rss,
        });
    }
    if !create_if_not_existed {
        return Ok(ReplicaSets {
            new_rs: None,
            old_rss,
        });
    }
    let new_rs = create_new_replica_set(inner, d, &old_rss, &classified.new_revision).await?;
    Ok(ReplicaSets {
        new_rs: Some(new_rs),
        old_rss,
    })
}

/// The create branch of `getNewReplicaSet`, with AlreadyExists (ours vs. hash collision),
/// NamespaceTerminating and other create failures.
async fn create_new_replica_set(
    inner: &Inner,
    d: &mut Deployment,
    old_rss: &[&ReplicaSet],
    new_revision: &str,
) -> Result<ReplicaSet, SyncError> {
    let desired = new_replica_set(d, old_rss, new_revision)?;
    let rs_name = name_of(&desired.metadata).to_string();
    let result = rs_api(inner, d)
        .create(&PostParams::default(), &desired)
        .await;
    log_write(
        "create",
        "replicasets",
        namespace_of(d),
        &rs_name,
        format_args!(
            "new pod template of deployment {}/{} (revision {new_revision})",
            namespace_of(d),
            name_of(&d.metadata)
        ),
        result.as_ref().map(|_| ()),
    );
    let (created, really_created) = match result {
        Ok(created) => (created, true),
        Err(e) => {
            let err = SyncError::from(e);
            if err.is_already_exists() {
                let Some(existing) = inner.rs_lister.get(namespace_of(d), &rs_name) else {
                    return Err(SyncError::Control(kcm_controller::ControlError::not_found(
                        "replicaset.apps",
                        &rs_name,
                    )));
                };
                match on_new_replica_set_already_exists(d, &existing) {
                    AlreadyExistsResolution::Ours => ((*existing).clone(), false),
                    AlreadyExistsResolution::HashCollision(updated) => {
                        *d = *updated;
                        // Upstream ignores this write's error: the AlreadyExists error
                        // requeues the key and the next pass hashes with the new count.
                        let _ =
                            update_status(inner, d, "hash collision: bump collisionCount").await;
                        return Err(err);
                    }
                }
            } else if err.is_namespace_terminating() {
                return Err(err);
            } else {
                let failure = on_new_replica_set_create_failed(
                    d,
                    &rs_name,
                    &err.to_string(),
                    inner.clock.now(),
                );
                if let Some(updated) = failure.status_update {
                    *d = updated;
                    let _ = update_status(
                        inner,
                        d,
                        "creating the new ReplicaSet failed: ReplicaFailure",
                    )
                    .await;
                }
                inner.emit(d, &failure.event);
                return Err(err);
            }
        }
    };
    let after =
        after_new_replica_set_created(d, &created, new_revision, really_created, inner.clock.now());
    if let Some(event) = &after.event {
        inner.emit(d, event);
    }
    if let Some(updated) = after.status_update {
        *d = updated;
        update_status(inner, d, "record the created new ReplicaSet in Progressing").await?;
    }
    Ok(created)
}

/// Executes resize steps in order (`scaleReplicaSet` / `scaleReplicaSetAndRecordEvent`):
/// Update, then the `ScalingReplicaSet` event once the update succeeded. Stops at the first
/// failed update. Returns whether any ReplicaSet changed size.
pub(crate) async fn execute_scale_steps(
    inner: &Inner,
    d: &Deployment,
    rss: &[&ReplicaSet],
    steps: &[ScaleStep],
) -> Result<bool, SyncError> {
    let api = rs_api(inner, d);
    // Objects written earlier in this pass replace the cached ones.
    let mut written: Vec<ReplicaSet> = Vec::new();
    let mut scaled = false;
    for step in steps {
        let current = written
            .iter()
            .find(|rs| name_of(&rs.metadata) == step.rs_name)
            .or_else(|| {
                rss.iter()
                    .copied()
                    .find(|rs| name_of(&rs.metadata) == step.rs_name)
            });
        let Some(current) = current else {
            continue;
        };
        let outcome = step.outcome(current, d);
        let Some(update) = outcome.update else {
            continue;
        };
        let result = api
            .replace(&step.rs_name, &PostParams::default(), &update)
            .await
            .map_err(SyncError::from);
        let from = current.spec.replicas.unwrap_or(0);
        let to = update.spec.replicas.unwrap_or(0);
        let why = if from < to {
            "scale up"
        } else if from > to {
            "scale down"
        } else {
            "sync replica annotations"
        };
        log_write(
            "update",
            "replicasets",
            namespace_of(d),
            &step.rs_name,
            format_args!(
                "{why} from {from} to {to} for deployment {}/{}",
                namespace_of(d),
                name_of(&d.metadata)
            ),
            result.as_ref().map(|_| ()),
        );
        let updated = result?;
        if let Some(event) = &outcome.event {
            inner.emit(d, event);
            scaled = true;
        }
        written.retain(|rs| name_of(&rs.metadata) != step.rs_name);
        written.push(updated);
    }
    Ok(scaled)
}

/// `cleanupDeployment`: deletes old ReplicaSets beyond `revisionHistoryLimit` (NotFound is
/// fine; the first other error stops the pass).
pub(crate) async fn cleanup_deployment(
    inner: &Inner,
    old_rss: &[&ReplicaSet],
    d: &Deployment,
) -> Result<(), SyncError> {
    let api = rs_api(inner, d);
    for rs in replica_sets_to_clean_up(old_rss, d) {
        let result = api
            .delete(name_of(&rs.metadata), &DeleteParams::default())
            .await
            .map_err(SyncError::from);
        log_write(
            "delete",
            "replicasets",
            namespace_of(d),
            name_of(&rs.metadata),
            format_args!(
                "old ReplicaSet beyond revisionHistoryLimit {} of deployment {}/{}",
                d.spec.revision_history_limit.unwrap_or(10),
                namespace_of(d),
                name_of(&d.metadata)
            ),
            result.as_ref().map(|_| ()),
        );
        if let Err(err) = result
            && !err.is_not_found()
        {
            return Err(err);
        }
    }
    Ok(())
}

/// `syncDeploymentStatus`: writes `calculateStatus` when it differs from the stored status.
pub(crate) async fn sync_deployment_status(
    inner: &Inner,
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    let now = inner.clock.now();
    if let Some(status) =
        crate::sync::sync_deployment_status(all_rss, new_rs, d, &inner.features, now)
    {
        d.status = Some(status);
        update_status(inner, d, "status changed").await?;
    }
    Ok(())
}

/// `syncRolloutStatus`: writes the status with the Progressing/ReplicaFailure conditions when
/// it changed; otherwise re-enqueues the Deployment to catch a missed progress deadline.
pub(crate) async fn sync_rollout_status(
    inner: &Inner,
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    let now = inner.clock.now();
    match decide_rollout_status(all_rss, new_rs, d, &inner.features, now) {
        RolloutStatusDecision::Update(status) => {
            d.status = Some(status);
            update_status(inner, d, "rollout status or conditions changed").await?;
        }
        RolloutStatusDecision::Unchanged(requeue) => match requeue {
            StuckRequeue::NotNeeded => {}
            StuckRequeue::Now => inner.enqueue_rate_limited(d),
            StuckRequeue::After(_) => {
                if let Some(after) = requeue.enqueue_after() {
                    let after = Duration::try_from(after).unwrap_or_default();
                    inner.enqueue_after(d, after);
                }
            }
        },
    }
    Ok(())
}

/// `checkPausedConditions`: records pausing/resuming in the Progressing condition.
pub(crate) async fn check_paused_conditions(
    inner: &Inner,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    if let Some(status) = crate::sync::check_paused_conditions(d, inner.clock.now()) {
        d.status = Some(status);
        update_status(inner, d, "paused or resumed").await?;
    }
    Ok(())
}

/// `syncStatusOnly`: a Deployment being deleted only gets its status refreshed.
pub(crate) async fn sync_status_only(
    inner: &Inner,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(inner, d, rs_list, false).await?;
    let all = rss.all();
    sync_deployment_status(inner, &all, rss.new_rs.as_ref(), d).await
}

/// `isScalingEvent`.
pub(crate) async fn is_scaling_event(
    inner: &Inner,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<bool, SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(inner, d, rs_list, false).await?;
    Ok(decide_is_scaling_event(
        d,
        rss.new_rs.as_ref(),
        &rss.old_rss,
    ))
}

/// `sync`: proportional scaling (scaling events and paused Deployments), cleanup when paused,
/// then the plain status.
pub(crate) async fn sync(
    inner: &Inner,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(inner, d, rs_list, false).await?;
    let all = rss.all();
    let steps = scale(d, rss.new_rs.as_ref(), &rss.old_rss);
    execute_scale_steps(inner, d, &all, &steps).await?;
    if sync_cleans_up(d) {
        cleanup_deployment(inner, &rss.old_rss, d).await?;
    }
    sync_deployment_status(inner, &all, rss.new_rs.as_ref(), d).await
}

/// `rolloutRolling`.
pub(crate) async fn rollout_rolling(
    inner: &Inner,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(inner, d, rs_list, true).await?;
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
            if execute_scale_steps(inner, d, &all, &[step]).await? {
                return sync_rollout_status(inner, &all, Some(new_rs), d).await;
            }
        }
        RollingDecision::ScaleDownOldReplicaSets(plan) => {
            // Upstream swallows failures of this phase (`return false, nil`): the pass
            // continues as if nothing was scaled down. The failure is kept to retry the key
            // once the pass is over (nothing else was written for it, so no event may follow).
            let scaled = match execute_scale_steps(inner, d, &all, &plan.steps).await {
                Ok(scaled) => scaled && plan.aborted.is_none(),
                Err(e) => {
                    tracing::debug!(deployment = name_of(&d.metadata), error = %e, "scaling down old replica sets failed");
                    swallowed = Some(e);
                    false
                }
            };
            if scaled {
                return sync_rollout_status(inner, &all, Some(new_rs), d).await;
            }
        }
        RollingDecision::Idle { .. } => {}
    }
    let stored = d.status.clone().unwrap_or_default();
    if deployment_complete(d, &stored) {
        cleanup_deployment(inner, &rss.old_rss, d).await?;
    }
    sync_rollout_status(inner, &all, Some(new_rs), d).await?;
    match swallowed {
        Some(e) => Err(SyncError::swallowed("scaling down old replica sets", e)),
        None => Ok(()),
    }
}

/// `rolloutRecreate`: old ReplicaSets to 0, wait until their pods are gone, create the new
/// ReplicaSet, scale it up, clean up, status.
pub(crate) async fn rollout_recreate(
    inner: &Inner,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
    pod_map: &PodMap,
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(inner, d, rs_list, false).await?;
    let pods = || {
        pod_map.iter().flat_map(|(uid, pods)| {
            pods.iter()
                .map(move |p| (uid.as_str(), p.status.phase.as_deref().unwrap_or_default()))
        })
    };
    match decide_recreate(d, rss.new_rs.as_ref(), &rss.old_rss, pods()) {
        RecreateDecision::ScaleDownOldReplicaSets(steps) => {
            let all = rss.all();
            if execute_scale_steps(inner, d, &all, &steps).await? {
                return sync_rollout_status(inner, &all, rss.new_rs.as_ref(), d).await;
            }
        }
        RecreateDecision::WaitForOldPods => {
            let all = rss.all();
            return sync_rollout_status(inner, &all, rss.new_rs.as_ref(), d).await;
        }
        RecreateDecision::CreateNewReplicaSet | RecreateDecision::ScaleUpNewReplicaSet { .. } => {}
    }
    let rss = if rss.new_rs.is_none() {
        get_all_replica_sets_and_sync_revision(inner, d, rs_list, true).await?
    } else {
        rss
    };
    let all = rss.all();
    if let RecreateDecision::ScaleUpNewReplicaSet { step, cleanup } =
        decide_recreate(d, rss.new_rs.as_ref(), &rss.old_rss, pods())
    {
        if let Some(step) = step {
            execute_scale_steps(inner, d, &all, &[step]).await?;
        }
        if cleanup {
            cleanup_deployment(inner, &rss.old_rss, d).await?;
        }
    }
    sync_rollout_status(inner, &all, rss.new_rs.as_ref(), d).await
}

/// `rollback`: the legacy `deprecated.deployment.rollback.to` annotation. The annotation is
/// always cleared with a full Update of the Deployment; the `DeploymentRollback` event is
/// recorded only after that Update succeeded.
pub(crate) async fn rollback(
    inner: &Inner,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(inner, d, rs_list, true).await?;
    let all = rss.all();
    let Some(outcome) = crate::rollback::rollback(d, &all) else {
        return Ok(());
    };
    if !outcome.performed {
        inner.emit(d, &outcome.event);
    }
    let api: Api<Deployment> = Api::namespaced(inner.client.clone(), namespace_of(d));
    let result = api
        .replace(
            name_of(&outcome.deployment.metadata),
            &PostParams::default(),
            &outcome.deployment,
        )
        .await
        .map_err(SyncError::from);
    if let Ok(written) = &result {
        inner.wrote(written);
    }
    log_write(
        "update",
        "deployments",
        namespace_of(d),
        name_of(&d.metadata),
        format_args!(
            "legacy rollback annotation handled ({}): {}",
            outcome.event.reason, outcome.event.message
        ),
        result.as_ref().map(|_| ()),
    );
    result?;
    if outcome.performed {
        inner.emit(d, &outcome.event);
    }
    Ok(())
}
