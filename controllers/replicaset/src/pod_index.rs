//! The pod cache index by controller UID (upstream `PodControllerUIDIndex` /
//! `FilterPodsByOwner`): a sync reads only the pods its ReplicaSet controls
//! plus the orphans of its namespace instead of every pod in the namespace.

use std::sync::Arc;

use kcm_controller::pod::PodView;
use kcm_controller::pod_util::controller_ref;
use kcm_informer::{Lister, Selector};
use kcm_store::IndexFn;

/// Name of the index on the pod informer.
pub const POD_CONTROLLER_UID_INDEX: &str = "podControllerUID";

/// The index value of an orphan pod in `namespace` (cannot collide with a UID).
pub fn orphan_index_key(namespace: &str) -> String {
    format!("\0orphan/{namespace}")
}

/// Indexes a pod under its controller's UID, or as an orphan of its namespace.
pub fn pod_controller_uid_index_fn() -> IndexFn<PodView> {
    Arc::new(|pod: &PodView| match controller_ref(&pod.metadata) {
        Some(r) => vec![r.uid.clone()],
        None => vec![orphan_index_key(
            pod.metadata.namespace.as_deref().unwrap_or_default(),
        )],
    })
}

/// Pods controlled by `owner_uid` in any namespace plus the orphans of
/// `namespace`, through the index when the store has it, else every pod of
/// the namespace (the claim step filters either way).
pub fn pods_for_owner(
    lister: &Lister<PodView>,
    namespace: &str,
    owner_uid: &str,
) -> Vec<Arc<PodView>> {
    let store = lister.store();
    if store.has_index(POD_CONTROLLER_UID_INDEX)
        && let Ok(mut owned) = store.by_index(POD_CONTROLLER_UID_INDEX, owner_uid)
        && let Ok(orphans) = store.by_index(POD_CONTROLLER_UID_INDEX, &orphan_index_key(namespace))
    {
        owned.retain(|p| p.metadata.namespace.as_deref().unwrap_or_default() == namespace);
        owned.extend(orphans);
        return owned;
    }
    lister.namespaced(namespace).list(&Selector::everything())
}
