//! The table of built-in resources: group, version, names, scope, verbs and subresources.
//!
//! Adding a kind means adding one [`ResourceInfo`] entry here, a storage slot
//! ([`StorageId`]) and, where needed, strategy rules in `strategy.rs`. Custom resources get
//! their entries at run time from their CustomResourceDefinitions ([`custom`](super::custom)).

use super::custom::CustomVersion;

/// Index of a storage bucket. Two API resources may share one bucket
/// (core/v1 and events.k8s.io/v1 events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StorageId {
    /// core/v1 namespaces
    Namespaces,
    /// core/v1 pods
    Pods,
    /// core/v1 events (also served as events.k8s.io/v1)
    Events,
    /// core/v1 nodes
    Nodes,
    /// apps/v1 deployments
    Deployments,
    /// apps/v1 replicasets
    ReplicaSets,
    /// coordination.k8s.io/v1 leases
    Leases,
    /// apiextensions.k8s.io/v1 customresourcedefinitions
    CustomResourceDefinitions,
    /// The objects of one custom resource (every served version of a CRD shares it), numbered
    /// by the server in the order the CRDs' names first appeared.
    Custom(u32),
}

/// Number of built-in storage buckets (custom resources' buckets follow them).
pub const STORAGE_COUNT: usize = 8;

impl StorageId {
    /// Position in storage vectors.
    pub fn index(self) -> usize {
        match self {
            StorageId::Namespaces => 0,
            StorageId::Pods => 1,
            StorageId::Events => 2,
            StorageId::Nodes => 3,
            StorageId::Deployments => 4,
            StorageId::ReplicaSets => 5,
            StorageId::Leases => 6,
            StorageId::CustomResourceDefinitions => 7,
            StorageId::Custom(n) => STORAGE_COUNT + n as usize,
        }
    }

    /// Whether the bucket holds custom resources.
    pub fn is_custom(self) -> bool {
        matches!(self, StorageId::Custom(_))
    }
}

/// A subresource entry as published in discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubresourceInfo {
    /// `status`, `scale`, `binding`, `finalize`
    pub name: &'static str,
    /// The kind of the subresource body.
    pub kind: &'static str,
    /// Group override in discovery (scale: `autoscaling`).
    pub group: Option<&'static str>,
    /// Version override in discovery (scale: `v1`).
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
    /// The definition of a custom resource version (`None` for built-in kinds).
    pub custom: Option<&'static CustomVersion>,
}

const ALL8: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const GPU: &[&str] = &["get", "patch", "update"];

const STATUS: SubresourceInfo = SubresourceInfo {
    name: "status",
    kind: "",
    group: None,
    version: None,
    verbs: GPU,
};
const SCALE: SubresourceInfo = SubresourceInfo {
    name: "scale",
    kind: "Scale",
    group: Some("autoscaling"),
    version: Some("v1"),
    verbs: GPU,
};

/// Every served resource.
pub static RESOURCES: &[ResourceInfo] = &[
    ResourceInfo {
        group: "",
        version: "v1",
        plural: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        namespaced: false,
        short_names: &["ns"],
        categories: &[],
        verbs: &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
        subresources: &[
            STATUS,
            SubresourceInfo {
                name: "finalize",
                kind: "",
                group: None,
                version: None,
                verbs: &["update"],
            },
        ],
        storage: StorageId::Namespaces,
        custom: None,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        plural: "pods",
        singular: "pod",
        kind: "Pod",
        namespaced: true,
        short_names: &["po"],
        categories: &["all"],
        verbs: ALL8,
        subresources: &[
            STATUS,
            SubresourceInfo {
                name: "binding",
                kind: "Binding",
                group: None,
                version: None,
                verbs: &["create"],
            },
        ],
        storage: StorageId::Pods,
        custom: None,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        plural: "events",
        singular: "event",
        kind: "Event",
        namespaced: true,
        short_names: &["ev"],
        categories: &[],
        verbs: ALL8,
        subresources: &[],
        storage: StorageId::Events,
        custom: None,
    },
    ResourceInfo {
        group: "",
        version: "v1",
        plural: "nodes",
        singular: "node",
        kind: "Node",
        namespaced: false,
        short_names: &["no"],
        categories: &[],
        verbs: ALL8,
        subresources: &[STATUS],
        storage: StorageId::Nodes,
        custom: None,
    },
    ResourceInfo {
        group: "apps",
        version: "v1",
        plural: "deployments",
        singular: "deployment",
        kind: "Deployment",
        namespaced: true,
        short_names: &["deploy"],
        categories: &["all"],
        verbs: ALL8,
        subresources: &[STATUS, SCALE],
        storage: StorageId::Deployments,
        custom: None,
    },
    ResourceInfo {
        group: "apps",
        version: "v1",
        plural: "replicasets",
        singular: "replicaset",
        kind: "ReplicaSet",
        namespaced: true,
        short_names: &["rs"],
        categories: &["all"],
        verbs: ALL8,
        subresources: &[STATUS, SCALE],
        storage: StorageId::ReplicaSets,
        custom: None,
    },
    ResourceInfo {
        group: "coordination.k8s.io",
        version: "v1",
        plural: "leases",
        singular: "lease",
        kind: "Lease",
        namespaced: true,
        short_names: &[],
        categories: &[],
        verbs: ALL8,
        subresources: &[],
        storage: StorageId::Leases,
        custom: None,
    },
    ResourceInfo {
        group: "events.k8s.io",
        version: "v1",
        plural: "events",
        singular: "event",
        kind: "Event",
        namespaced: true,
        short_names: &["ev"],
        categories: &[],
        verbs: ALL8,
        subresources: &[],
        storage: StorageId::Events,
        custom: None,
    },
    ResourceInfo {
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        singular: "customresourcedefinition",
        kind: "CustomResourceDefinition",
        namespaced: false,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        verbs: ALL8,
        subresources: &[STATUS],
        storage: StorageId::CustomResourceDefinitions,
        custom: None,
    },
];

/// The built-in API groups other than core, in kube-apiserver's `/apis` order (group priority:
/// apps, events.k8s.io, …, apiextensions.k8s.io, coordination.k8s.io). Custom resources' groups
/// follow them.
pub const GROUPS: &[&str] = &[
    "apps",
    "events.k8s.io",
    "apiextensions.k8s.io",
    "coordination.k8s.io",
];

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

/// The canonical (core or primary) resource of a built-in storage bucket.
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
        assert!(find("apps", "v1", "statefulsets").is_none());
        assert_eq!(for_storage(StorageId::Events).group, "");
    }
}
