//! Informer event handlers of the Deployment controller (upstream `addDeployment`,
//! `updateDeployment`, `deleteDeployment`, `addReplicaSet`, `updateReplicaSet`,
//! `deleteReplicaSet`, `deletePod`, `resolveControllerRef`, `getDeploymentForPod`,
//! `getDeploymentsForReplicaSet`).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kcm_controller::PodView;
use kcm_informer::{DeletedObject, Lister, ObjectKey, ResourceEventHandler, Selector};
use kube::api::{Api, ListParams};

use crate::util::fields::{name_of, uid_of};
use crate::util::replica_sets::get_controller_of;
use crate::util::strategy::{RECREATE_STRATEGY, strategy_type};

use super::context::Context;
use super::pod_map::pod_map_for_deployment;

/// The Deployment informer's handler: every add, update and delete enqueues the Deployment.
#[derive(Debug)]
pub(crate) struct DeploymentHandler(pub(crate) Arc<Context>);

impl ResourceEventHandler<Deployment> for DeploymentHandler {
    fn on_add(&self, d: &Arc<Deployment>, _is_initial_list: bool) {
        tracing::trace!(deployment = name_of(&d.metadata), "Adding deployment");
        self.0.enqueue(d);
    }
    fn on_update(&self, _old: &Arc<Deployment>, cur: &Arc<Deployment>) {
        tracing::trace!(deployment = name_of(&cur.metadata), "Updating deployment");
        self.0.enqueue(cur);
    }
    fn on_delete(&self, obj: DeletedObject<Deployment>) {
        let d = obj.object();
        tracing::trace!(deployment = name_of(&d.metadata), "Deleting deployment");
        self.0.enqueue(d);
    }
}

/// The ReplicaSet informer's handler.
#[derive(Debug)]
pub(crate) struct ReplicaSetHandler(pub(crate) Arc<Context>);

impl ResourceEventHandler<ReplicaSet> for ReplicaSetHandler {
    fn on_add(&self, rs: &Arc<ReplicaSet>, _is_initial_list: bool) {
        add_replica_set(&self.0, rs);
    }
    fn on_update(&self, old: &Arc<ReplicaSet>, cur: &Arc<ReplicaSet>) {
        update_replica_set(&self.0, old, cur);
    }
    fn on_delete(&self, obj: DeletedObject<ReplicaSet>) {
        delete_replica_set(&self.0, obj.object());
    }
}

/// The pod informer's handler: deletes only.
#[derive(Debug)]
pub(crate) struct PodHandler(pub(crate) Arc<Context>);

impl ResourceEventHandler<PodView> for PodHandler {
    fn on_delete(&self, obj: DeletedObject<PodView>) {
        delete_pod(&self.0, obj.object());
    }
}

/// `addReplicaSet`.
pub(crate) fn add_replica_set(ctx: &Context, rs: &ReplicaSet) {
    if rs.metadata.deletion_timestamp.is_some() {
        // A restart can show a ReplicaSet already pending deletion: treat it as deleted.
        delete_replica_set(ctx, rs);
        return;
    }
    let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(r) = get_controller_of(&rs.metadata) {
        if let Some(key) = controller_key(&ctx.d_lister, namespace, r) {
            tracing::trace!(replica_set = name_of(&rs.metadata), "ReplicaSet added");
            ctx.queue.add(key);
        }
        return;
    }
    // Orphan: every matching Deployment races to adopt it.
    let ds = get_deployments_for_replica_set(&ctx.d_lister, rs);
    if !ds.is_empty() {
        tracing::trace!(
            replica_set = name_of(&rs.metadata),
            "Orphan ReplicaSet added"
        );
    }
    for d in ds {
        ctx.enqueue(&d);
    }
}

/// `updateReplicaSet`.
pub(crate) fn update_replica_set(ctx: &Context, old: &ReplicaSet, cur: &ReplicaSet) {
    if cur.metadata.resource_version == old.metadata.resource_version {
        // Periodic resync: nothing changed.
        return;
    }
    let namespace = cur.metadata.namespace.as_deref().unwrap_or_default();
    let cur_ref = get_controller_of(&cur.metadata);
    let old_ref = get_controller_of(&old.metadata);
    let controller_ref_changed = cur_ref != old_ref;
    if controller_ref_changed
        && let Some(old_ref) = old_ref
        && let Some(key) = controller_key(&ctx.d_lister, namespace, old_ref)
    {
        // The old owner must notice it lost this ReplicaSet.
        ctx.queue.add(key);
    }
    if let Some(cur_ref) = cur_ref {
        if let Some(key) = controller_key(&ctx.d_lister, namespace, cur_ref) {
            tracing::trace!(replica_set = name_of(&cur.metadata), "ReplicaSet updated");
            ctx.queue.add(key);
        }
        return;
    }
    let label_changed = cur.metadata.labels != old.metadata.labels;
    if label_changed || controller_ref_changed {
        let ds = get_deployments_for_replica_set(&ctx.d_lister, cur);
        if !ds.is_empty() {
            tracing::trace!(
                replica_set = name_of(&cur.metadata),
                "Orphan ReplicaSet updated"
            );
        }
        for d in ds {
            ctx.enqueue(&d);
        }
    }
}

/// `deleteReplicaSet` (tombstones carry the last known state).
pub(crate) fn delete_replica_set(ctx: &Context, rs: &ReplicaSet) {
    // No controller cares about orphans being deleted.
    let Some(r) = get_controller_of(&rs.metadata) else {
        return;
    };
    let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(key) = controller_key(&ctx.d_lister, namespace, r) {
        tracing::trace!(replica_set = name_of(&rs.metadata), "ReplicaSet deleted");
        ctx.queue.add(key);
    }
}

/// `deletePod`: wakes a Recreate Deployment once all of its pods are gone (RollingUpdate
/// Deployments ignore pod deletions). The Deployment's ReplicaSets are listed live (not from
/// the cache) as upstream, so this runs on a spawned task.
pub(crate) fn delete_pod(ctx: &Arc<Context>, pod: &PodView) {
    let Some(d) = get_deployment_for_pod(ctx, pod) else {
        return;
    };
    if strategy_type(&d) != RECREATE_STRATEGY {
        return;
    }
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let ctx = ctx.clone();
    handle.spawn(async move {
        let rs_list = match list_replica_sets_live(&ctx.client, &d).await {
            Ok(list) => list,
            Err(e) => {
                // Upstream drops the wake-up here, and a Recreate rollout waiting for this
                // deletion then waits for its progress deadline; a sync can decide from the
                // cache instead (docs/fidelity.md).
                tracing::debug!(deployment = name_of(&d.metadata), error = %e, "listing replica sets for a deleted pod failed");
                ctx.enqueue_rate_limited(&d);
                return;
            }
        };
        let rs_refs: Vec<&ReplicaSet> = rs_list.iter().collect();
        let pod_map = pod_map_for_deployment(&ctx.pod_lister, &rs_refs);
        if pod_map.values().all(Vec::is_empty) {
            ctx.enqueue(&d);
        }
    });
}

/// `util.ListReplicaSets` with a client-backed list: the ReplicaSets in the Deployment's
/// namespace matching its selector and controlled by it.
async fn list_replica_sets_live(
    client: &kube::Client,
    d: &Deployment,
) -> Result<Vec<ReplicaSet>, String> {
    let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
    let selector = Selector::from_label_selector(&d.spec.selector).map_err(|e| e.to_string())?;
    let api: Api<ReplicaSet> = Api::namespaced(client.clone(), namespace);
    let params = ListParams::default().labels(&selector.to_string());
    let list = api.list(&params).await.map_err(|e| e.to_string())?;
    let uid = uid_of(&d.metadata);
    Ok(list
        .items
        .into_iter()
        .filter(|rs| get_controller_of(&rs.metadata).is_some_and(|r| r.uid == uid))
        .collect())
}

/// `getDeploymentForPod`: pod → controlling ReplicaSet (same UID) → controlling Deployment.
///
/// The ReplicaSet is only read, so the cache lends it (its reference count is not touched);
/// the Deployment, which the caller may keep, is handed out as an `Arc`. Lock order: the
/// Deployment cache's read lock is taken inside the ReplicaSet cache's; nothing takes them
/// the other way round, and writers hold one cache's lock at a time.
fn get_deployment_for_pod(ctx: &Context, pod: &PodView) -> Option<Arc<Deployment>> {
    let r = get_controller_of(&pod.metadata)?;
    if r.kind != "ReplicaSet" {
        return None;
    }
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    ctx.rs_lister
        .with(namespace, &r.name, |rs| {
            if uid_of(&rs.metadata) != r.uid {
                return None;
            }
            let rs_ref = get_controller_of(&rs.metadata)?;
            resolve_controller_ref(&ctx.d_lister, namespace, rs_ref)
        })
        .flatten()
}

/// `resolveControllerRef`: the Deployment a controller reference points to, if it is a
/// Deployment that still exists with that UID.
fn resolve_controller_ref(
    d_lister: &Lister<Deployment>,
    namespace: &str,
    r: &OwnerReference,
) -> Option<Arc<Deployment>> {
    if r.kind != "Deployment" {
        return None;
    }
    let d = d_lister.get(namespace, &r.name)?;
    (uid_of(&d.metadata) == r.uid).then_some(d)
}

/// [`resolve_controller_ref`] for the handlers that only enqueue: the key of that
/// Deployment. The cached Deployment is lent, not cloned (its reference count is not
/// touched).
pub(crate) fn controller_key(
    d_lister: &Lister<Deployment>,
    namespace: &str,
    r: &OwnerReference,
) -> Option<ObjectKey> {
    if r.kind != "Deployment" {
        return None;
    }
    d_lister
        .with(namespace, &r.name, |d| {
            (uid_of(&d.metadata) == r.uid).then(|| ObjectKey::from_meta(&d.metadata))
        })
        .flatten()
}

/// `util.GetDeploymentsForReplicaSet` as the controller uses it: every Deployment in the
/// ReplicaSet's namespace whose (non-empty, valid) selector matches the ReplicaSet's labels;
/// empty when the ReplicaSet has no labels. More than one match is a user error, but all are
/// returned (ControllerRef adoption decides the winner).
pub(crate) fn get_deployments_for_replica_set(
    d_lister: &Lister<Deployment>,
    rs: &ReplicaSet,
) -> Vec<Arc<Deployment>> {
    let Some(labels) = rs.metadata.labels.as_ref().filter(|l| !l.is_empty()) else {
        return Vec::new();
    };
    let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
    let found: Vec<Arc<Deployment>> = d_lister
        .namespaced(namespace)
        .list(&Selector::everything())
        .into_iter()
        .filter(|d| {
            let spec = &d.spec;
            match Selector::from_label_selector(&spec.selector) {
                Ok(sel) => !sel.is_everything() && sel.matches(labels),
                Err(_) => false,
            }
        })
        .collect();
    if found.len() > 1 {
        tracing::debug!(
            replica_set = name_of(&rs.metadata),
            deployments = found.len(),
            "user error! more than one deployment is selecting replica set"
        );
    }
    found
}

#[cfg(test)]
#[path = "handlers_tests.rs"]
mod tests;
