//! The I/O half of upstream `sync.go`: finding or creating the new ReplicaSet
//! (`getAllReplicaSetsAndSyncRevision`, `getNewReplicaSet`), executing resize steps
//! (`scaleReplicaSet`), `cleanupDeployment`, `syncDeploymentStatus`, `checkPausedConditions`,
//! `syncStatusOnly`, `isScalingEvent` and `sync`. The decisions are [`crate::sync`]'s.
//!
//! As upstream, `d` is the sync's private copy of the Deployment and is mutated in place
//! (revision annotation, conditions, status) as the pass goes; status writes send it whole to
//! `/status` and do not refresh its resourceVersion, so a second write in the same pass can
//! fail with a Conflict and the key is retried — exactly like kube-controller-manager.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::dispatch::sync_cleans_up;
use crate::sync::{
    AlreadyExistsResolution, ExistingNewReplicaSetAction, ScaleStep, after_new_replica_set_created,
    classify_replica_sets, is_scaling_event as decide_is_scaling_event, new_replica_set,
    on_new_replica_set_already_exists, on_new_replica_set_create_failed, replica_sets_to_clean_up,
    scale, sync_existing_new_replica_set,
};
use crate::util::fields::name_of;

use super::SyncError;
use super::context::Context;
use super::writes;

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
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&'a ReplicaSet],
    create_if_not_existed: bool,
) -> Result<ReplicaSets<'a>, SyncError> {
    let classified = classify_replica_sets(d, rs_list);
    let old_rss = classified.old_rss.clone();
    let now = ctx.clock.now();
    if let Some(existing) = classified.new_rs {
        let new_rs = match sync_existing_new_replica_set(d, existing, &classified.new_revision, now)
        {
            ExistingNewReplicaSetAction::UpdateReplicaSet(rs_copy) => {
                writes::update_new_replica_set_annotations(
                    ctx,
                    d,
                    &rs_copy,
                    &classified.new_revision,
                )
                .await?
            }
            ExistingNewReplicaSetAction::UpdateDeploymentStatus(updated) => {
                *d = updated;
                writes::update_status(ctx, d, "record the found new ReplicaSet in Progressing")
                    .await?;
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
    let new_rs = create_new_replica_set(ctx, d, &old_rss, &classified.new_revision).await?;
    Ok(ReplicaSets {
        new_rs: Some(new_rs),
        old_rss,
    })
}

/// The create branch of `getNewReplicaSet`, with AlreadyExists (ours vs. hash collision),
/// NamespaceTerminating and other create failures.
async fn create_new_replica_set(
    ctx: &Context,
    d: &mut Deployment,
    old_rss: &[&ReplicaSet],
    new_revision: &str,
) -> Result<ReplicaSet, SyncError> {
    let desired = new_replica_set(d, old_rss, new_revision)?;
    let rs_name = name_of(&desired.metadata).to_string();
    let (created, really_created) = match writes::create_replica_set(ctx, d, &desired, new_revision)
        .await
    {
        Ok(created) => (created, true),
        Err(e) => {
            let err = SyncError::from(e);
            if err.is_already_exists() {
                let Some(existing) = ctx.rs_lister.get(namespace_of(d), &rs_name) else {
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
                            writes::update_status(ctx, d, "hash collision: bump collisionCount")
                                .await;
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
                    ctx.clock.now(),
                );
                if let Some(updated) = failure.status_update {
                    *d = updated;
                    let _ = writes::update_status(
                        ctx,
                        d,
                        "creating the new ReplicaSet failed: ReplicaFailure",
                    )
                    .await;
                }
                ctx.emit(d, &failure.event);
                return Err(err);
            }
        }
    };
    let after =
        after_new_replica_set_created(d, &created, new_revision, really_created, ctx.clock.now());
    if let Some(event) = &after.event {
        ctx.emit(d, event);
    }
    if let Some(updated) = after.status_update {
        *d = updated;
        writes::update_status(ctx, d, "record the created new ReplicaSet in Progressing").await?;
    }
    Ok(created)
}

fn namespace_of(d: &Deployment) -> &str {
    d.metadata.namespace.as_deref().unwrap_or_default()
}

/// Executes resize steps in order (`scaleReplicaSet` / `scaleReplicaSetAndRecordEvent`):
/// Update, then the `ScalingReplicaSet` event once the update succeeded. Stops at the first
/// failed update. Returns whether any ReplicaSet changed size.
pub(crate) async fn execute_scale_steps(
    ctx: &Context,
    d: &Deployment,
    rss: &[&ReplicaSet],
    steps: &[ScaleStep],
) -> Result<bool, SyncError> {
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
        let updated = writes::scale_replica_set(ctx, d, current, &update).await?;
        if let Some(event) = &outcome.event {
            ctx.emit(d, event);
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
    ctx: &Context,
    old_rss: &[&ReplicaSet],
    d: &Deployment,
) -> Result<(), SyncError> {
    for rs in replica_sets_to_clean_up(old_rss, d) {
        if let Err(err) = writes::delete_replica_set(ctx, d, rs).await
            && !err.is_not_found()
        {
            return Err(err);
        }
    }
    Ok(())
}

/// `syncDeploymentStatus`: writes `calculateStatus` when it differs from the stored status.
pub(crate) async fn sync_deployment_status(
    ctx: &Context,
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    let now = ctx.clock.now();
    match crate::sync::sync_deployment_status(all_rss, new_rs, d, &ctx.features, now) {
        Some(status) => writes::write_status(ctx, d, status, "status changed").await,
        None => Ok(()),
    }
}

/// `checkPausedConditions`: records pausing/resuming in the Progressing condition.
pub(crate) async fn check_paused_conditions(
    ctx: &Context,
    d: &mut Deployment,
) -> Result<(), SyncError> {
    match crate::sync::check_paused_conditions(d, ctx.clock.now()) {
        Some(status) => writes::write_status(ctx, d, status, "paused or resumed").await,
        None => Ok(()),
    }
}

/// `syncStatusOnly`: a Deployment being deleted only gets its status refreshed.
pub(crate) async fn sync_status_only(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(ctx, d, rs_list, false).await?;
    let all = rss.all();
    sync_deployment_status(ctx, &all, rss.new_rs.as_ref(), d).await
}

/// `isScalingEvent`.
pub(crate) async fn is_scaling_event(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<bool, SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(ctx, d, rs_list, false).await?;
    Ok(decide_is_scaling_event(
        d,
        rss.new_rs.as_ref(),
        &rss.old_rss,
    ))
}

/// `sync`: proportional scaling (scaling events and paused Deployments), cleanup when paused,
/// then the plain status.
pub(crate) async fn sync(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(ctx, d, rs_list, false).await?;
    let all = rss.all();
    let steps = scale(d, rss.new_rs.as_ref(), &rss.old_rss);
    execute_scale_steps(ctx, d, &all, &steps).await?;
    if sync_cleans_up(d) {
        cleanup_deployment(ctx, &rss.old_rss, d).await?;
    }
    sync_deployment_status(ctx, &all, rss.new_rs.as_ref(), d).await
}
