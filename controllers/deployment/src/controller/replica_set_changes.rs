//! The ReplicaSet changes of a pass, I/O halves of upstream `sync.go`:
//! `getAllReplicaSetsAndSyncRevision` / `getNewReplicaSet` (finding the new ReplicaSet,
//! updating its revision, or creating it), `scaleReplicaSet` (executing resize steps) and
//! `cleanupDeployment`. The decisions are [`crate::plan`]'s.
//!
//! As upstream, `d` is the sync's private copy of the Deployment and is mutated in place
//! (revision annotation, conditions, status) as the pass goes; status writes send it whole to
//! `/status` and do not refresh its resourceVersion, so a second write in the same pass can
//! fail with a Conflict and the key is retried — exactly like kube-controller-manager.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::plan::cleanup::replica_sets_to_clean_up;
use crate::plan::new_replica_set::{
    AlreadyExistsResolution, ExistingNewReplicaSetAction, after_new_replica_set_created,
    classify_replica_sets, new_replica_set, on_new_replica_set_already_exists,
    on_new_replica_set_create_failed, plan_existing_new_replica_set,
};
use crate::plan::scale::ScaleStep;
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

/// `getAllReplicaSetsAndSyncRevision` / `getNewReplicaSet`: the old ReplicaSets and the new
/// one, whose revision annotations (and the Deployment's revision) are brought up to date; the
/// new one is created when missing and `create_if_not_existed`.
pub(crate) async fn get_replica_sets_and_update_revision<'a>(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&'a ReplicaSet],
    create_if_not_existed: bool,
) -> Result<ReplicaSets<'a>, SyncError> {
    let classified = classify_replica_sets(d, rs_list);
    let old_rss = classified.old_rss.clone();
    let now = ctx.clock.now();
    if let Some(existing) = classified.new_rs {
        let new_rs = match plan_existing_new_replica_set(d, existing, &classified.new_revision, now)
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
