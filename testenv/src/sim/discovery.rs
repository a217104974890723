//! What the server serves, read from its discovery documents (`/api`, `/api/v1`, `/apis`,
//! `/apis/{group}/{version}`), as the garbage collector and the namespace controller read it:
//! client-go's `ServerPreferredResources` (`k8s.io/client-go/discovery/discovery_client.go`), its
//! `ErrGroupDiscoveryFailed`, and the REST mapping of an `apiVersion` and `kind` to a resource
//! (`k8s.io/apimachinery/pkg/api/meta/restmapper.go`).
//!
//! [`Discovery::fetch`] is the I/O; everything else is pure, over the documents.

use std::collections::{BTreeMap, HashMap};

use futures::future::join_all;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIResource, APIResourceList};
use kube::Api;
use kube::api::{ApiResource, DynamicObject};

/// One resource (never a subresource) as discovery lists it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Resource {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Resource name (`replicasets`).
    pub plural: String,
    /// Kind (`ReplicaSet`).
    pub kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Verbs the resource supports.
    pub verbs: Vec<String>,
}

impl Resource {
    /// `group/version`, or `version` for core.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `plural.group` (`plural.` for core), as upstream's `GroupResource` prints in messages.
    pub(crate) fn group_resource(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// Whether every one of `verbs` is supported (client-go `SupportsAllVerbs`).
    pub(crate) fn supports(&self, verbs: &[&str]) -> bool {
        verbs
            .iter()
            .all(|v| self.verbs.iter().any(|have| have == v))
    }

    /// The collection's path, in `namespace` when the resource is namespaced and one is given.
    pub(crate) fn collection_path(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) if self.namespaced => format!("{base}/namespaces/{ns}/{}", self.plural),
            _ => format!("{base}/{}", self.plural),
        }
    }

    /// A dynamic API of the resource, in `namespace` when it is namespaced and one is given.
    pub(crate) fn api(&self, client: &kube::Client, namespace: Option<&str>) -> Api<DynamicObject> {
        let ar = ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        };
        match namespace {
            Some(ns) if self.namespaced => Api::namespaced_with(client.clone(), ns, &ar),
            _ => Api::all_with(client.clone(), &ar),
        }
    }
}

/// An API group: its versions in the server's order and its preferred version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    /// Group name (`""` for core).
    pub name: String,
    /// Versions, the server's order.
    pub versions: Vec<String>,
    /// The preferred version.
    pub preferred: String,
}

/// The server's discovery documents.
#[derive(Debug, Clone, Default)]
pub(crate) struct Discovery {
    groups: Vec<Group>,
    /// Resources per `(group, version)` that answered.
    resources: HashMap<(String, String), Vec<Resource>>,
    /// `group/version` whose document could not be read, with the error.
    failed: BTreeMap<String, String>,
}

impl Discovery {
    /// Read every discovery document. Fails only when the group lists (`/api`, `/apis`) cannot
    /// be read; a group version that fails is recorded (see [`Discovery::failure`]).
    pub(crate) async fn fetch(client: &kube::Client) -> Result<Self, kube::Error> {
        let core = client.list_core_api_versions().await?;
        let apis = client.list_api_groups().await?;
        let mut groups = vec![Group {
            name: String::new(),
            preferred: core.versions.first().cloned().unwrap_or_default(),
            versions: core.versions,
        }];
        for g in apis.groups {
            groups.push(Group {
                preferred: g
                    .preferred_version
                    .map(|p| p.version)
                    .or_else(|| g.versions.first().map(|v| v.version.clone()))
                    .unwrap_or_default(),
                versions: g.versions.into_iter().map(|v| v.version).collect(),
                name: g.name,
            });
        }
        let fetches = groups.iter().flat_map(|g| {
            g.versions.iter().map(move |v| {
                let (group, version) = (g.name.clone(), v.clone());
                async move {
                    let doc = if group.is_empty() {
                        client.list_core_api_resources(&version).await
                    } else {
                        client
                            .list_api_group_resources(&format!("{group}/{version}"))
                            .await
                    };
                    (group, version, doc)
                }
            })
        });
        let mut lists = Vec::new();
        let mut failed = BTreeMap::new();
        for (group, version, doc) in join_all(fetches).await {
            match doc {
                Ok(list) => lists.push((group, version, list)),
                Err(e) => {
                    let gv = if group.is_empty() {
                        version
                    } else {
                        format!("{group}/{version}")
                    };
                    failed.insert(gv, e.to_string());
                }
            }
        }
        Ok(Self::from_documents(groups, lists, failed))
    }

    /// Discovery from documents already read: the groups, one resource list per group version
    /// that answered, and the errors of those that did not.
    pub(crate) fn from_documents(
        groups: Vec<Group>,
        lists: Vec<(String, String, APIResourceList)>,
        failed: BTreeMap<String, String>,
    ) -> Self {
        let resources = lists
            .into_iter()
            .map(|(group, version, list)| {
                let resources = list
                    .resources
                    .iter()
                    .filter(|r| !r.name.contains('/'))
                    .map(|r| resource(&group, &version, r))
                    .collect();
                ((group, version), resources)
            })
            .collect();
        Discovery {
            groups,
            resources,
            failed,
        }
    }

    /// Every resource once, in its group's preferred version when it is served there, else in
    /// the first version of the group that serves it (client-go `ServerPreferredResources`).
    pub(crate) fn preferred(&self) -> Vec<Resource> {
        let mut chosen: BTreeMap<(String, String), Resource> = BTreeMap::new();
        for g in &self.groups {
            for v in &g.versions {
                let Some(list) = self.resources.get(&(g.name.clone(), v.clone())) else {
                    continue;
                };
                for r in list {
                    let key = (g.name.clone(), r.plural.clone());
                    if chosen.contains_key(&key) && *v != g.preferred {
                        continue;
                    }
                    chosen.insert(key, r.clone());
                }
            }
        }
        chosen.into_values().collect()
    }

    /// The group versions whose documents failed, as client-go's `ErrGroupDiscoveryFailed`
    /// prints them; `None` when every document was read.
    pub(crate) fn failure(&self) -> Option<String> {
        if self.failed.is_empty() {
            return None;
        }
        let groups: Vec<String> = self
            .failed
            .iter()
            .map(|(gv, e)| format!("{gv}: {e}"))
            .collect();
        Some(format!(
            "unable to retrieve the complete list of server APIs: {}",
            groups.join(", ")
        ))
    }

    /// How many group versions failed.
    pub(crate) fn failed_count(&self) -> usize {
        self.failed.len()
    }

    /// Whether the document of `group/version` failed.
    pub(crate) fn failed_group_version(&self, group: &str, version: &str) -> bool {
        let gv = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        self.failed.contains_key(&gv)
    }

    /// The resource of `kind` in the group and version of `api_version`, when that version
    /// serves it; an empty `api_version` maps to the core group's preferred version (upstream
    /// `RESTMapper.RESTMapping`: a named version that is not served is no match).
    pub(crate) fn mapping(&self, api_version: &str, kind: &str) -> Option<Resource> {
        let (group, version) = split_api_version(api_version);
        let version = if version.is_empty() {
            self.groups
                .iter()
                .find(|g| g.name == group)
                .map(|g| g.preferred.as_str())?
        } else {
            version
        };
        self.resources
            .get(&(group.to_string(), version.to_string()))?
            .iter()
            .find(|r| r.kind == kind)
            .cloned()
    }
}

/// `apps/v1` → (`apps`, `v1`); `v1` → (``, `v1`) (upstream `ParseGroupVersion`).
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

fn resource(group: &str, version: &str, r: &APIResource) -> Resource {
    Resource {
        group: group.to_string(),
        version: version.to_string(),
        plural: r.name.clone(),
        kind: r.kind.clone(),
        namespaced: r.namespaced,
        verbs: r.verbs.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list(gv: &str, resources: serde_json::Value) -> APIResourceList {
        serde_json::from_value(json!({"groupVersion": gv, "resources": resources}))
            .expect("resource list")
    }

    fn r(name: &str, kind: &str, namespaced: bool, verbs: &[&str]) -> serde_json::Value {
        json!({"name": name, "singularName": "", "kind": kind, "namespaced": namespaced, "verbs": verbs})
    }

    fn sample() -> Discovery {
        let all = [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "watch",
        ];
        Discovery::from_documents(
            vec![
                Group {
                    name: String::new(),
                    versions: vec!["v1".into()],
                    preferred: "v1".into(),
                },
                Group {
                    name: "example.com".into(),
                    versions: vec!["v2".into(), "v1".into(), "v0".into()],
                    preferred: "v1".into(),
                },
                Group {
                    name: "broken.io".into(),
                    versions: vec!["v1".into()],
                    preferred: "v1".into(),
                },
            ],
            vec![
                (
                    String::new(),
                    "v1".into(),
                    list(
                        "v1",
                        json!([
                            r("pods", "Pod", true, &all),
                            r("pods/status", "Pod", true, &["get", "patch"]),
                            r("bindings", "Binding", true, &["create"]),
                            r("nodes", "Node", false, &all),
                        ]),
                    ),
                ),
                (
                    "example.com".into(),
                    "v2".into(),
                    list(
                        "example.com/v2",
                        json!([
                            r("widgets", "Widget", true, &all),
                            r("gadgets", "Gadget", true, &all)
                        ]),
                    ),
                ),
                (
                    "example.com".into(),
                    "v1".into(),
                    list(
                        "example.com/v1",
                        json!([r("widgets", "Widget", true, &all)]),
                    ),
                ),
                (
                    "example.com".into(),
                    "v0".into(),
                    list("example.com/v0", json!([r("oldies", "Oldie", false, &all)])),
                ),
            ],
            BTreeMap::from([("broken.io/v1".to_string(), "503 unavailable".to_string())]),
        )
    }

    #[test]
    fn preferred_resources_as_client_go_selects_them() {
        let got: Vec<String> = sample()
            .preferred()
            .iter()
            .map(|r| format!("{}/{}", r.api_version(), r.plural))
            .collect();
        // widgets: the preferred v1 wins over the earlier v2; gadgets and oldies are only served
        // in a non-preferred version; subresources are never listed.
        assert_eq!(
            got,
            [
                "v1/bindings",
                "v1/nodes",
                "v1/pods",
                "example.com/v2/gadgets",
                "example.com/v0/oldies",
                "example.com/v1/widgets",
            ]
        );
    }

    #[test]
    fn failures_print_as_err_group_discovery_failed() {
        let d = sample();
        assert_eq!(
            d.failure().as_deref(),
            Some(
                "unable to retrieve the complete list of server APIs: broken.io/v1: 503 unavailable"
            )
        );
        assert_eq!(d.failed_count(), 1);
        assert!(d.failed_group_version("broken.io", "v1"));
        assert!(!d.failed_group_version("", "v1"));
        assert_eq!(Discovery::default().failure(), None);
    }

    #[test]
    fn rest_mapping() {
        let d = sample();
        let m = |av: &str, k: &str| d.mapping(av, k).map(|r| (r.api_version(), r.plural));
        assert_eq!(m("v1", "Pod"), Some(("v1".into(), "pods".into())));
        assert_eq!(m("v1", "Node").map(|x| x.1), Some("nodes".into()));
        assert_eq!(
            m("example.com/v2", "Widget"),
            Some(("example.com/v2".into(), "widgets".into()))
        );
        // a version the server does not serve is no match, even if another version serves the kind
        assert_eq!(m("example.com/v3", "Widget"), None);
        assert_eq!(m("example.com/v1", "Gadget"), None);
        assert_eq!(m("v1", "Widget"), None);
        assert_eq!(m("apps/v1", "Deployment"), None);
        // a group alone is a core version (upstream ParseGroupVersion); no version: the preferred
        assert_eq!(m("example.com", "Widget"), None);
        assert_eq!(m("", "Pod"), Some(("v1".into(), "pods".into())));
    }

    #[test]
    fn resource_paths_and_verbs() {
        let d = sample();
        let pods = d.mapping("v1", "Pod").expect("pods");
        assert_eq!(pods.collection_path(None), "/api/v1/pods");
        assert_eq!(
            pods.collection_path(Some("ns")),
            "/api/v1/namespaces/ns/pods"
        );
        assert_eq!(pods.group_resource(), "pods.");
        let nodes = d.mapping("v1", "Node").expect("nodes");
        assert_eq!(nodes.collection_path(Some("ns")), "/api/v1/nodes");
        let widgets = d.mapping("example.com/v1", "Widget").expect("widgets");
        assert_eq!(
            widgets.collection_path(Some("ns")),
            "/apis/example.com/v1/namespaces/ns/widgets"
        );
        assert!(pods.supports(&["delete", "list", "watch"]));
        let bindings = d.mapping("v1", "Binding").expect("bindings");
        assert!(!bindings.supports(&["delete", "list", "watch"]));
        assert_eq!(split_api_version("apps/v1"), ("apps", "v1"));
        assert_eq!(split_api_version("v1"), ("", "v1"));
    }
}
