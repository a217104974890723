//! The resources a server serves, looked up: the built-in table ([`RESOURCES`], [`GROUPS`], the
//! bucket constants), generated from kube-apiserver's discovery into `builtin.rs`, and the
//! description of each entry ([`ResourceInfo`], [`StorageId`], [`GroupInfo`]); custom resources
//! get their entries at run time from their CustomResourceDefinitions
//! ([`custom`](super::custom)).

pub use super::builtin::{GROUPS, RESOURCES, STORAGE_COUNT};
pub use super::resource_info::{GroupInfo, ResourceInfo, StorageId, SubresourceInfo};

/// The buckets of custom resources come after the generated table's (here, where its size is
/// known).
impl StorageId {
    /// The bucket of the `n`th custom resource (numbered by the server in the order the CRDs'
    /// names first appeared).
    pub fn custom(n: u32) -> StorageId {
        StorageId((STORAGE_COUNT as u32).saturating_add(n))
    }

    /// Whether the bucket holds custom resources.
    pub fn is_custom(self) -> bool {
        self.index() >= STORAGE_COUNT
    }

    /// The number of a custom resource's bucket (`None` for built-in buckets).
    pub fn custom_number(self) -> Option<u32> {
        self.0.checked_sub(STORAGE_COUNT as u32)
    }
}

/// Every built-in bucket of namespaced objects, once each.
pub fn namespaced_buckets() -> impl Iterator<Item = StorageId> {
    RESOURCES.iter().enumerate().filter_map(|(i, r)| {
        let first = RESOURCES[..i].iter().all(|o| o.storage != r.storage);
        (r.namespaced && r.storage != StorageId::NONE && first).then_some(r.storage)
    })
}

/// Whether `group` is a built-in group of `/apis`.
pub fn is_builtin_group(group: &str) -> bool {
    GROUPS.iter().any(|g| g.name == group)
}

/// Look up a built-in resource by group, version and plural (custom resources:
/// [`ServedResources::find`](super::custom::ServedResources::find)).
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static ResourceInfo> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The canonical resource of a built-in storage bucket: core before other groups, the
/// preferred version of its group (the version objects are stored in is upstream's choice; this
/// is the form kcm-testenv stores them in).
pub fn for_storage(id: StorageId) -> &'static ResourceInfo {
    RESOURCES
        .iter()
        .find(|r| r.storage == id)
        .unwrap_or(&RESOURCES[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_and_names() {
        let d = find("apps", "v1", "deployments").expect("deployments");
        assert_eq!(d.qualified_resource(), "deployments.apps");
        assert_eq!(d.qualified_kind(), "Deployment.apps");
        assert_eq!(d.api_version(), "apps/v1");
        let p = find("", "v1", "pods").expect("pods");
        assert_eq!(p.qualified_resource(), "pods");
        assert!(p.has_subresource("binding"));
        assert!(find("apps", "v1", "statefulsets").is_some());
        assert!(find("apps", "v1", "nope").is_none());
        assert_eq!(for_storage(StorageId::EVENTS).group, "");
        let hpa = find("autoscaling", "v1", "horizontalpodautoscalers").expect("hpa v1");
        assert_eq!(for_storage(hpa.storage).version, "v2");
        assert!(!StorageId::PODS.is_custom());
        assert_eq!(StorageId::custom(2).custom_number(), Some(2));
        assert!(StorageId::custom(0).is_custom());
    }

    #[test]
    fn groups_in_kube_apiservers_order() {
        // the order the hand-written table had, which kube-apiserver's group priorities give
        let names: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
        let pos = |g: &str| names.iter().position(|n| *n == g).expect(g);
        assert!(pos("apps") < pos("events.k8s.io"));
        assert!(pos("events.k8s.io") < pos("apiextensions.k8s.io"));
        assert!(pos("apiextensions.k8s.io") < pos("coordination.k8s.io"));
        let autoscaling = GROUPS
            .iter()
            .find(|g| g.name == "autoscaling")
            .expect("autoscaling");
        assert_eq!(autoscaling.preferred(), "v2");
        // every resource a table entry names a bucket of, every stored resource its own
        for r in RESOURCES {
            assert!(r.storage.index() < STORAGE_COUNT, "{}", r.plural);
            assert_eq!(
                r.storage == StorageId::NONE,
                r.storage_version_hash.is_empty()
            );
        }
    }
}
