//! Informer event handlers (upstream `replica_set.go`: `addRS`/`updateRS`/`deleteRS`,
//! `addPod`/`updatePod`/`deletePod`). They only enqueue keys and
//! record observed creations/deletions in the expectations.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcm_controller::pod_util::{controller_ref, is_pod_ready, pod_key};
use kcm_controller::pod_view::PodView;
use kcm_informer::{
    DeletedFinalStateUnknown, DeletedObject, ObjectKey, ResourceEventHandler, Selector,
};

use crate::status::{min_ready_seconds, spec_replicas};

use super::context::Context;

fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or_default()
}

/// Runs `f` on the cached ReplicaSet `ref` points at in `namespace`, if it is the same
/// incarnation (only the kind is compared, as upstream `resolveControllerRef`).
///
/// The handlers only read the ReplicaSet (its key, its minReadySeconds), so the cache lends
/// it: its reference count, in the object's own allocation, is not touched. `f` runs under
/// the ReplicaSet cache's read lock and must not call back into that cache.
pub(crate) fn with_controller_ref<R>(
    ctx: &Context,
    namespace: &str,
    r: &OwnerReference,
    f: impl FnOnce(&ReplicaSet) -> R,
) -> Option<R> {
    if r.kind != "ReplicaSet" {
        return None;
    }
    ctx.rs_lister
        .with(namespace, &r.name, |rs| {
            (uid(&rs.metadata) == r.uid).then(|| f(rs))
        })
        .flatten()
}

/// The key of the ReplicaSet `ref` points at (see [`with_controller_ref`]).
fn controller_key(ctx: &Context, namespace: &str, r: &OwnerReference) -> Option<ObjectKey> {
    with_controller_ref(ctx, namespace, r, |rs| ObjectKey::from_meta(&rs.metadata))
}

/// Every cached ReplicaSet in the pod's namespace whose (non-empty, valid)
/// selector matches the pod's labels (upstream `getPodReplicaSets`).
pub(crate) fn get_pod_replica_sets(ctx: &Context, pod: &PodView) -> Vec<Arc<ReplicaSet>> {
    // Upstream's lister answers an error for a pod without labels (absent or empty).
    let Some(labels) = pod.metadata.labels.as_ref().filter(|l| !l.is_empty()) else {
        return Vec::new();
    };
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let matching: Vec<Arc<ReplicaSet>> = ctx
        .rs_lister
        .namespaced(ns)
        .list(&Selector::everything())
        .into_iter()
        .filter(|rs| {
            let spec = &rs.spec;
            match Selector::from_label_selector(&spec.selector) {
                Ok(sel) => !sel.is_everything() && sel.matches(labels),
                Err(_) => false,
            }
        })
        .collect();
    if matching.len() > 1 {
        tracing::error!(
            labels = ?labels,
            "user error! more than one ReplicaSet is selecting pods with labels: {labels:?}"
        );
    }
    matching
}

/// A ReplicaSet was added.
pub(crate) fn add_rs(ctx: &Context, rs: &Arc<ReplicaSet>) {
    tracing::debug!(replicaset = %ObjectKey::from_meta(&rs.metadata), "Adding ReplicaSet");
    ctx.enqueue(rs);
}

/// A ReplicaSet was updated (or resynced).
pub(crate) fn update_rs(ctx: &Context, old: &Arc<ReplicaSet>, cur: &Arc<ReplicaSet>) {
    if uid(&old.metadata) != uid(&cur.metadata) {
        // Deleted and re-created under the same name: forget the old incarnation.
        delete_rs(
            ctx,
            DeletedObject::Unknown(DeletedFinalStateUnknown {
                key: ObjectKey::from_meta(&old.metadata),
                obj: old.clone(),
            }),
        );
    }
    let (was, now) = (spec_replicas(old), spec_replicas(cur));
    if was != now {
        tracing::debug!(
            replicaset = %ObjectKey::from_meta(&cur.metadata), old = was, new = now,
            "ReplicaSet updated: replicas {was} -> {now}"
        );
    }
    ctx.enqueue(cur);
}

/// A ReplicaSet was deleted.
pub(crate) fn delete_rs(ctx: &Context, obj: DeletedObject<ReplicaSet>) {
    let (key, rs) = match obj {
        DeletedObject::Object(rs) => (ObjectKey::from_meta(&rs.metadata), rs),
        DeletedObject::Unknown(t) => (t.key, t.obj),
    };
    tracing::debug!(replicaset = %key, "Deleting ReplicaSet");
    if let Some(store) = &ctx.consistency {
        let uid = rs.metadata.uid.as_deref().unwrap_or_default();
        store.clear(&key.namespace, &key.name, Some(uid));
    }
    ctx.expectations.delete_expectations(&key);
    ctx.queue.add(key);
}

/// A pod was added (or first seen).
pub(crate) fn add_pod(ctx: &Context, pod: &Arc<PodView>) {
    if pod.metadata.deletion_timestamp.is_some() {
        // Seen for the first time already terminating (e.g. after a restart).
        delete_pod(ctx, DeletedObject::Object(pod.clone()));
        return;
    }
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(r) = controller_ref(&pod.metadata) {
        let Some(key) = controller_key(ctx, ns, r) else {
            return;
        };
        tracing::trace!(pod = %pod_key(&**pod), replicaset = %key, "Pod created");
        ctx.expectations.creation_observed(&key);
        ctx.queue.add(key);
        return;
    }
    // An orphan: wake every matching ReplicaSet so one may adopt it.
    for rs in get_pod_replica_sets(ctx, pod) {
        ctx.enqueue(&rs);
    }
}

/// A pod was updated (resyncs, with an unchanged resourceVersion, are ignored).
pub(crate) fn update_pod(ctx: &Context, old: &Arc<PodView>, cur: &Arc<PodView>) {
    if cur.metadata.resource_version == old.metadata.resource_version {
        return;
    }
    let label_changed = cur.metadata.labels != old.metadata.labels;
    if cur.metadata.deletion_timestamp.is_some() {
        // Graceful deletion started: treat it as deleted now so a
        // replacement is created without waiting for the kubelet.
        delete_pod(ctx, DeletedObject::Object(cur.clone()));
        if label_changed {
            // The old labels may have matched another ReplicaSet.
            delete_pod(ctx, DeletedObject::Object(old.clone()));
        }
        return;
    }
    let cur_ref = controller_ref(&cur.metadata);
    let old_ref = controller_ref(&old.metadata);
    let ref_changed = cur_ref != old_ref;
    if ref_changed && let Some(r) = old_ref {
        let ns = old.metadata.namespace.as_deref().unwrap_or_default();
        if let Some(key) = controller_key(ctx, ns, r) {
            ctx.queue.add(key);
        }
    }
    if let Some(r) = cur_ref {
        let ns = cur.metadata.namespace.as_deref().unwrap_or_default();
        let Some((key, min_ready)) = with_controller_ref(ctx, ns, r, |rs| {
            (ObjectKey::from_meta(&rs.metadata), min_ready_seconds(rs))
        }) else {
            return;
        };
        ctx.queue.add(key.clone());
        // Exactly minReadySeconds, as upstream's updatePod: the pod is available at
        // readyTime + minReadySeconds (inclusive), and a sync that still finds ready !=
        // available plans its own check at the end of syncReplicaSet.
        if !is_pod_ready(&**old) && is_pod_ready(&**cur) && min_ready > 0 {
            let delay = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
            tracing::debug!(
                replicaset = %key, ?delay,
                "ReplicaSet will be enqueued for an availability check"
            );
            ctx.queue.add_after(key, delay);
        }
        return;
    }
    if label_changed || ref_changed {
        for rs in get_pod_replica_sets(ctx, cur) {
            ctx.enqueue(&rs);
        }
    }
}

/// A pod was deleted (or is being deleted gracefully).
pub(crate) fn delete_pod(ctx: &Context, obj: DeletedObject<PodView>) {
    let pod = obj.object();
    let Some(r) = controller_ref(&pod.metadata) else {
        return;
    };
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let Some(key) = controller_key(ctx, ns, r) else {
        return;
    };
    tracing::trace!(pod = %pod_key(&**pod), replicaset = %key, "Pod deleted");
    ctx.expectations.deletion_observed(&key, &pod_key(&**pod));
    ctx.queue.add(key);
}

/// The ReplicaSet informer's handler.
#[derive(Debug)]
pub(crate) struct ReplicaSetHandler(pub(crate) Arc<Context>);

impl ResourceEventHandler<ReplicaSet> for ReplicaSetHandler {
    fn on_add(&self, obj: &Arc<ReplicaSet>, _is_initial_list: bool) {
        add_rs(&self.0, obj);
    }
    fn on_update(&self, old: &Arc<ReplicaSet>, new: &Arc<ReplicaSet>) {
        update_rs(&self.0, old, new);
    }
    fn on_delete(&self, obj: DeletedObject<ReplicaSet>) {
        delete_rs(&self.0, obj);
    }
}

/// The pod informer's handler.
#[derive(Debug)]
pub(crate) struct PodHandler(pub(crate) Arc<Context>);

impl ResourceEventHandler<PodView> for PodHandler {
    fn on_add(&self, obj: &Arc<PodView>, _is_initial_list: bool) {
        add_pod(&self.0, obj);
    }
    fn on_update(&self, old: &Arc<PodView>, new: &Arc<PodView>) {
        update_pod(&self.0, old, new);
    }
    fn on_delete(&self, obj: DeletedObject<PodView>) {
        delete_pod(&self.0, obj);
    }
}

#[cfg(test)]
#[path = "handlers_tests.rs"]
mod tests;
