//! The description of one served resource: [`ResourceInfo`] (group, version, names, scope,
//! verbs, subresources, storage bucket), [`SubresourceInfo`], [`StorageId`] and [`GroupInfo`],
//! as kube-apiserver's discovery documents describe them
//! (`staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go`, `APIResource`). The built-in
//! entries are generated into `builtin.rs`; [`resources`](super::resources) looks them up.

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
    /// Position in storage vectors.
    pub fn index(self) -> usize {
        self.0 as usize
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
