//! Informer event handlers (upstream `addRS`/`updateRS`/`deleteRS`,
//! `addPod`/`updatePod`/`deletePod`, spec §4). They only enqueue keys and
//! record observed creations/deletions in the expectations.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcm_controller::pod::PodView;
use kcm_controller::pod_util::{controller_ref, is_pod_ready, pod_key};
use kcm_informer::{DeletedFinalStateUnknown, DeletedObject, ResourceEventHandler, Selector};

use crate::replica_set::Core;
use crate::status::{min_ready_seconds, spec_replicas};

/// `namespace/name` of an object (upstream `MetaNamespaceKeyFunc`).
pub fn object_key(meta: &ObjectMeta) -> String {
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", meta.name.as_deref().unwrap_or_default()),
        _ => meta.name.clone().unwrap_or_default(),
    }
}

fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or_default()
}

impl Core {
    pub(crate) fn enqueue_rs(&self, rs: &ReplicaSet) {
        self.queue.add(object_key(&rs.metadata));
    }

    fn enqueue_rs_after(&self, rs: &ReplicaSet, delay: Duration) {
        self.queue.add_after(object_key(&rs.metadata), delay);
    }

    /// The cached ReplicaSet `ref` points at in `namespace`, if it is the same
    /// incarnation (only the kind is compared, as upstream).
    pub(crate) fn resolve_controller_ref(
        &self,
        namespace: &str,
        r: &OwnerReference,
    ) -> Option<Arc<ReplicaSet>> {
        if r.kind != "ReplicaSet" {
            return None;
        }
        let rs = self.rs_lister.get(namespace, &r.name)?;
        (uid(&rs.metadata) == r.uid).then_some(rs)
    }

    /// Every cached ReplicaSet in the pod's namespace whose (non-empty, valid)
    /// selector matches the pod's labels (upstream `getPodReplicaSets`).
    pub(crate) fn get_pod_replica_sets(&self, pod: &PodView) -> Vec<Arc<ReplicaSet>> {
        // Upstream's lister answers an error for a pod without labels (absent or empty).
        let Some(labels) = pod.metadata.labels.as_ref().filter(|l| !l.is_empty()) else {
            return Vec::new();
        };
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        let matching: Vec<Arc<ReplicaSet>> = self
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
    pub(crate) fn add_rs(&self, rs: &Arc<ReplicaSet>) {
        tracing::debug!(replicaset = %object_key(&rs.metadata), "Adding ReplicaSet");
        self.enqueue_rs(rs);
    }

    /// A ReplicaSet was updated (or resynced).
    pub(crate) fn update_rs(&self, old: &Arc<ReplicaSet>, cur: &Arc<ReplicaSet>) {
        if uid(&old.metadata) != uid(&cur.metadata) {
            // Deleted and re-created under the same name: forget the old incarnation.
            self.delete_rs(DeletedObject::Unknown(DeletedFinalStateUnknown {
                key: object_key(&old.metadata),
                obj: old.clone(),
            }));
        }
        let (was, now) = (spec_replicas(old), spec_replicas(cur));
        if was != now {
            tracing::debug!(
                replicaset = %object_key(&cur.metadata), old = was, new = now,
                "ReplicaSet updated: replicas {was} -> {now}"
            );
        }
        self.enqueue_rs(cur);
    }

    /// A ReplicaSet was deleted.
    pub(crate) fn delete_rs(&self, obj: DeletedObject<ReplicaSet>) {
        let key = match &obj {
            DeletedObject::Object(rs) => object_key(&rs.metadata),
            DeletedObject::Unknown(t) => t.key.clone(),
        };
        tracing::debug!(replicaset = %key, "Deleting ReplicaSet");
        if let Some(store) = &self.consistency {
            let (ns, name) = key.split_once('/').unwrap_or(("", key.as_str()));
            let uid = match &obj {
                DeletedObject::Object(rs) => rs.metadata.uid.as_deref(),
                DeletedObject::Unknown(t) => t.obj.metadata.uid.as_deref(),
            };
            store.clear(ns, name, Some(uid.unwrap_or_default()));
        }
        self.expectations.delete_expectations(&key);
        self.queue.add(key);
    }

    /// A pod was added (or first seen).
    pub(crate) fn add_pod(&self, pod: &Arc<PodView>) {
        if pod.metadata.deletion_timestamp.is_some() {
            // Seen for the first time already terminating (e.g. after a restart).
            self.delete_pod(DeletedObject::Object(pod.clone()));
            return;
        }
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        if let Some(r) = controller_ref(&pod.metadata) {
            let Some(rs) = self.resolve_controller_ref(ns, r) else {
                return;
            };
            let key = object_key(&rs.metadata);
            tracing::trace!(pod = %pod_key(&**pod), replicaset = %key, "Pod created");
            self.expectations.creation_observed(&key);
            self.queue.add(key);
            return;
        }
        // An orphan: wake every matching ReplicaSet so one may adopt it.
        for rs in self.get_pod_replica_sets(pod) {
            self.enqueue_rs(&rs);
        }
    }

    /// A pod was updated (resyncs, with an unchanged resourceVersion, are ignored).
    pub(crate) fn update_pod(&self, old: &Arc<PodView>, cur: &Arc<PodView>) {
        if cur.metadata.resource_version == old.metadata.resource_version {
            return;
        }
        let label_changed = cur.metadata.labels != old.metadata.labels;
        if cur.metadata.deletion_timestamp.is_some() {
            // Graceful deletion started: treat it as deleted now so a
            // replacement is created without waiting for the kubelet.
            self.delete_pod(DeletedObject::Object(cur.clone()));
            if label_changed {
                // The old labels may have matched another ReplicaSet.
                self.delete_pod(DeletedObject::Object(old.clone()));
            }
            return;
        }
        let cur_ref = controller_ref(&cur.metadata);
        let old_ref = controller_ref(&old.metadata);
        let ref_changed = cur_ref != old_ref;
        if ref_changed && let Some(r) = old_ref {
            let ns = old.metadata.namespace.as_deref().unwrap_or_default();
            if let Some(rs) = self.resolve_controller_ref(ns, r) {
                self.enqueue_rs(&rs);
            }
        }
        if let Some(r) = cur_ref {
            let ns = cur.metadata.namespace.as_deref().unwrap_or_default();
            let Some(rs) = self.resolve_controller_ref(ns, r) else {
                return;
            };
            self.enqueue_rs(&rs);
            let min_ready = min_ready_seconds(&rs);
            // Exactly minReadySeconds, as upstream's updatePod: the pod is available at
            // readyTime + minReadySeconds (inclusive), and a sync that still finds ready !=
            // available plans its own check at the end of syncReplicaSet.
            if !is_pod_ready(&**old) && is_pod_ready(&**cur) && min_ready > 0 {
                let delay = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
                tracing::debug!(
                    replicaset = %object_key(&rs.metadata), ?delay,
                    "ReplicaSet will be enqueued for an availability check"
                );
                self.enqueue_rs_after(&rs, delay);
            }
            return;
        }
        if label_changed || ref_changed {
            for rs in self.get_pod_replica_sets(cur) {
                self.enqueue_rs(&rs);
            }
        }
    }

    /// A pod was deleted (or is being deleted gracefully).
    pub(crate) fn delete_pod(&self, obj: DeletedObject<PodView>) {
        let pod = obj.object();
        let Some(r) = controller_ref(&pod.metadata) else {
            return;
        };
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        let Some(rs) = self.resolve_controller_ref(ns, r) else {
            return;
        };
        let key = object_key(&rs.metadata);
        tracing::trace!(pod = %pod_key(&**pod), replicaset = %key, "Pod deleted");
        self.expectations.deletion_observed(&key, &pod_key(&**pod));
        self.queue.add(key);
    }
}

/// The ReplicaSet informer's handler.
#[derive(Debug)]
pub(crate) struct ReplicaSetHandler(pub(crate) Arc<Core>);

impl ResourceEventHandler<ReplicaSet> for ReplicaSetHandler {
    fn on_add(&self, obj: &Arc<ReplicaSet>, _is_initial_list: bool) {
        self.0.add_rs(obj);
    }
    fn on_update(&self, old: &Arc<ReplicaSet>, new: &Arc<ReplicaSet>) {
        self.0.update_rs(old, new);
    }
    fn on_delete(&self, obj: DeletedObject<ReplicaSet>) {
        self.0.delete_rs(obj);
    }
}

/// The pod informer's handler.
#[derive(Debug)]
pub(crate) struct PodHandler(pub(crate) Arc<Core>);

impl ResourceEventHandler<PodView> for PodHandler {
    fn on_add(&self, obj: &Arc<PodView>, _is_initial_list: bool) {
        self.0.add_pod(obj);
    }
    fn on_update(&self, old: &Arc<PodView>, new: &Arc<PodView>) {
        self.0.update_pod(old, new);
    }
    fn on_delete(&self, obj: DeletedObject<PodView>) {
        self.0.delete_pod(obj);
    }
}

#[cfg(test)]
#[path = "handlers_tests.rs"]
mod tests;
