//! The pod cache index by controller (upstream `PodControllerIndex`, `FilterPodsByOwner`): a
//! sync reads the pods one owner controls, plus the orphans of its namespace if it may adopt
//! them, instead of every pod of the namespace.
//!
//! Both controllers register the index on the shared pod informer (the second registration
//! finds it there) and read through [`filter_pods_by_owner`]. Upstream's index value is
//! `namespace/kind/name/uid` of the pod's controller reference, or the namespace for an orphan;
//! here it is the controller's UID (or an orphan key per namespace), and the lookup keeps the
//! pods whose controller reference also has the owner's kind, name and namespace, which selects
//! the same pods.

use std::sync::Arc;

use kcm_store::{IndexFn, Lister, Selector};

use crate::pod::PodView;
use crate::pod_util::controller_ref;

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

/// The owner whose pods [`filter_pods_by_owner`] reads.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// Kind of the owner (`ReplicaSet`).
    pub kind: &'a str,
    /// Namespace of the owner (its pods are in the same one).
    pub namespace: &'a str,
    /// Name of the owner.
    pub name: &'a str,
    /// UID of the owner.
    pub uid: &'a str,
}

/// `FilterPodsByOwner`: the pods whose controller reference is `owner` (its kind, name and UID,
/// in its namespace), then, with `include_orphans`, the pods of the namespace without a
/// controller. Through the index when the store has it, else from the namespace's pods.
pub fn filter_pods_by_owner(
    lister: &Lister<PodView>,
    owner: Owner<'_>,
    include_orphans: bool,
) -> Vec<Arc<PodView>> {
    let controlled = |pod: &PodView| {
        pod.metadata.namespace.as_deref().unwrap_or_default() == owner.namespace
            && controller_ref(&pod.metadata)
                .is_some_and(|r| r.uid == owner.uid && r.kind == owner.kind && r.name == owner.name)
    };
    let store = lister.store();
    if store.has_index(POD_CONTROLLER_UID_INDEX)
        && let Ok(mut pods) = store.by_index(POD_CONTROLLER_UID_INDEX, owner.uid)
    {
        pods.retain(|p| controlled(p));
        if include_orphans {
            match store.by_index(POD_CONTROLLER_UID_INDEX, &orphan_index_key(owner.namespace)) {
                Ok(orphans) => pods.extend(orphans),
                Err(_) => return from_namespace(lister, owner, include_orphans, controlled),
            }
        }
        return pods;
    }
    from_namespace(lister, owner, include_orphans, controlled)
}

/// [`filter_pods_by_owner`] without the index: the namespace's pods, filtered.
fn from_namespace(
    lister: &Lister<PodView>,
    owner: Owner<'_>,
    include_orphans: bool,
    controlled: impl Fn(&PodView) -> bool,
) -> Vec<Arc<PodView>> {
    let mut pods = lister
        .namespaced(owner.namespace)
        .list(&Selector::everything());
    pods.retain(|p| controlled(p) || (include_orphans && controller_ref(&p.metadata).is_none()));
    pods
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
    use kcm_store::Store;

    fn pod(ns: &str, name: &str, controller: Option<(&str, &str, &str)>) -> PodView {
        let owner_references = controller.map(|(kind, name, uid)| {
            vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: kind.into(),
                name: name.into(),
                uid: uid.into(),
                controller: Some(true),
                ..Default::default()
            }]
        });
        PodView {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                owner_references,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn names(pods: &[Arc<PodView>]) -> Vec<String> {
        let mut v: Vec<String> = pods
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect();
        v.sort();
        v
    }

    /// The same answers with and without the index (upstream's index selects by namespace,
    /// kind, name and UID of the controller reference).
    #[test]
    fn owned_pods_and_orphans_with_and_without_the_index() {
        let pods = [
            pod("a", "owned", Some(("ReplicaSet", "rs", "uid-1"))),
            pod("a", "owned-2", Some(("ReplicaSet", "rs", "uid-1"))),
            pod(
                "b",
                "same-uid-other-ns",
                Some(("ReplicaSet", "rs", "uid-1")),
            ),
            pod(
                "a",
                "same-uid-other-kind",
                Some(("StatefulSet", "rs", "uid-1")),
            ),
            pod(
                "a",
                "same-uid-other-name",
                Some(("ReplicaSet", "other", "uid-1")),
            ),
            pod("a", "other-owner", Some(("ReplicaSet", "rs2", "uid-2"))),
            pod("a", "orphan", None),
            pod("b", "orphan-other-ns", None),
        ];
        let owner = Owner {
            kind: "ReplicaSet",
            namespace: "a",
            name: "rs",
            uid: "uid-1",
        };
        for indexed in [true, false] {
            let store: Store<PodView> = Store::new();
            if indexed {
                store
                    .add_indexer(POD_CONTROLLER_UID_INDEX, pod_controller_uid_index_fn())
                    .expect("index");
            }
            for p in &pods {
                store.add(Arc::new(p.clone()));
            }
            let lister = Lister::new(store);
            assert_eq!(
                names(&filter_pods_by_owner(&lister, owner, false)),
                ["owned", "owned-2"],
                "indexed: {indexed}"
            );
            assert_eq!(
                names(&filter_pods_by_owner(&lister, owner, true)),
                ["orphan", "owned", "owned-2"],
                "indexed: {indexed}"
            );
        }
    }
}
