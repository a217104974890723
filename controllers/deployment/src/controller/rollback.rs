//! The I/O half of upstream `rollback.go`: the legacy `deprecated.deployment.rollback.to`
//! annotation, decided by [`crate::rollback`].

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use super::SyncError;
use super::context::Context;
use super::sync::get_all_replica_sets_and_sync_revision;
use super::writes;

/// `rollback`: the annotation is always cleared with a full Update of the Deployment; the
/// `DeploymentRollback` event is recorded only after that Update succeeded.
pub(crate) async fn rollback(
    ctx: &Context,
    d: &mut Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<(), SyncError> {
    let rss = get_all_replica_sets_and_sync_revision(ctx, d, rs_list, true).await?;
    let all = rss.all();
    let Some(outcome) = crate::rollback::rollback(d, &all) else {
        return Ok(());
    };
    if !outcome.performed {
        ctx.emit(d, &outcome.event);
    }
    writes::update_deployment_for_rollback(ctx, d, &outcome).await?;
    if outcome.performed {
        ctx.emit(d, &outcome.event);
    }
    Ok(())
}
