//! The resources a server serves: [`ResourceInfo`] (group, version, names, scope, verbs,
//! subresources, storage bucket), [`StorageId`] and [`GroupInfo`]. The built-in table itself
//! ([`RESOURCES`], [`GROUPS`], the bucket constants) is generated from kube-apiserver's discovery
//! into `builtin.rs`; custom resources get their entries at run time from their
//! CustomResourceDefinitions ([`custom`](super::custom)).

pub use super::builtin::{GROUPS, RESOURCES, STORAGE_COUNT};
use super::custom::CustomVersion;

/// Index of a storage bucket: one per resource kube-apiserver stores (named by the constants
/// of the generated table, `StorageId::PODS`, `StorageId::CONFIGMAPS`, …), then one per custom
/// resource. Resources of one bucket share their objects: core/v1 and events.k8s.io/v1
/// `events`, and a resource served in several versions (autoscaling/v1 and v2
/// `horizontalpodautoscalers`). [`StorageId::NONE`] is the empty bucket of the resources
/// kube-apiserver does not store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StorageId(pub(crate) u32);

impl StorageId {
    /// The bucket of the `n`th custom resource (numbered by the server in the order the CRDs'
    /// names first appeared).
    pub fn custom(n: u32) -> StorageId {
        StorageId((STORAGE_COUNT as u32).saturating_add(n))
    }

    /// Position in storage vectors.
    pub fn index(self) -> usize {
        self.0 as usize
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

/// A subresource entry as published in discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubresourceInfo {
    /// `status`, `scale`, `binding`, `finalize`, `eviction`, …
    pub name: &'static str,
    /// The kind of the subresource body (`""`: the resource's own kind).
    pub kind: &'static str,
    /// The group discovery names for it (scale: `autoscaling`), when it names one.
    pub group: Option<&'static str>,
    /// The version discovery names for it (scale: `v1`), when it names one.
    pub version: Option<&'static str>,
    /// Allowed verbs.
    pub verbs: &'static [&'static str],
}

/// One served API resource.
#[derive(Debug, Clone, Copy)]
pub struct ResourceInfo {
    /// API group, `""` for core.
    pub group: &'static str,
    /// API version (`v1`).
    pub version: &'static str,
    /// Plural resource name used in URLs.
    pub plural: &'static str,
    /// Singular name.
    pub singular: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short_names: &'static [&'static str],
    /// Categories (`all`).
    pub categories: &'static [&'static str],
    /// Verbs on the main resource.
    pub verbs: &'static [&'static str],
    /// Subresources.
    pub subresources: &'static [SubresourceInfo],
    /// Where the objects are stored.
    pub storage: StorageId,
    /// Discovery's `storageVersionHash` of a built-in resource (`""` when not stored; custom
    /// resources: [`CustomVersion::storage_version_hash`]).
    pub storage_version_hash: &'static str,
    /// The definition of a custom resource version (`None` for built-in kinds).
    pub custom: Option<&'static CustomVersion>,
}

/// A built-in API group of `/apis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupInfo {
    /// The group name.
    pub name: &'static str,
    /// Its versions, by priority: the preferred one first.
    pub versions: &'static [&'static str],
}

impl GroupInfo {
    /// The preferred version.
    pub fn preferred(&self) -> &'static str {
        self.versions.first().copied().unwrap_or("v1")
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

impl ResourceInfo {
    /// `apps/v1` or `v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps` or `pods`: the form used in error messages.
    pub fn qualified_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Deployment.apps` or `Pod`: the form used in Invalid messages.
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.to_string()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// Whether this is the events.k8s.io/v1 view of core events.
    pub fn is_events_v1(&self) -> bool {
        self.group == "events.k8s.io"
    }

    /// Whether this is a custom resource (served from a CustomResourceDefinition).
    pub fn is_custom(&self) -> bool {
        self.custom.is_some()
    }

    /// Whether the subresource is served.
    pub fn has_subresource(&self, name: &str) -> bool {
        self.subresources.iter().any(|s| s.name == name)
    }
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
