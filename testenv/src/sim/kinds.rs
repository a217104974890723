//! The kinds the garbage collector and the namespace controller know, as dynamic API resources.

use kube::Api;
use kube::api::{ApiResource, DynamicObject};

/// One served kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KindInfo {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
}

/// Every kind the test server serves (events.k8s.io Events share storage with core Events).
pub(crate) const KINDS: &[KindInfo] = &[
    KindInfo {
        group: "",
        version: "v1",
        kind: "Pod",
        plural: "pods",
        namespaced: true,
    },
    KindInfo {
        group: "apps",
        version: "v1",
        kind: "ReplicaSet",
        plural: "replicasets",
        namespaced: true,
    },
    KindInfo {
        group: "apps",
        version: "v1",
        kind: "Deployment",
        plural: "deployments",
        namespaced: true,
    },
    KindInfo {
        group: "",
        version: "v1",
        kind: "Event",
        plural: "events",
        namespaced: true,
    },
    KindInfo {
        group: "coordination.k8s.io",
        version: "v1",
        kind: "Lease",
        plural: "leases",
        namespaced: true,
    },
    KindInfo {
        group: "",
        version: "v1",
        kind: "Node",
        plural: "nodes",
        namespaced: false,
    },
    KindInfo {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        namespaced: false,
    },
];

impl KindInfo {
    pub(crate) fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.to_string(),
            version: self.version.to_string(),
            api_version: if self.group.is_empty() {
                self.version.to_string()
            } else {
                format!("{}/{}", self.group, self.version)
            },
            kind: self.kind.to_string(),
            plural: self.plural.to_string(),
        }
    }

    /// A dynamic API for this kind, in `namespace` when the kind is namespaced.
    pub(crate) fn api(&self, client: &kube::Client, namespace: Option<&str>) -> Api<DynamicObject> {
        let ar = self.api_resource();
        match (self.namespaced, namespace) {
            (true, Some(ns)) => Api::namespaced_with(client.clone(), ns, &ar),
            _ => Api::all_with(client.clone(), &ar),
        }
    }
}

/// The namespaced custom resources the server serves, from its Established CRDs, each in its
/// storage version: `(<plural>.<group>, resource)`.
pub(crate) async fn custom_kinds(
    client: &kube::Client,
) -> Result<Vec<(String, ApiResource)>, kube::Error> {
    let crds = ApiResource {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        plural: "customresourcedefinitions".into(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &crds);
    let list = match api.list(&kube::api::ListParams::default()).await {
        Ok(l) => l.items,
        // a server without CRDs
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for crd in list {
        let spec = &crd.data["spec"];
        let established = crd.data["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        if !established || spec["scope"] != "Namespaced" {
            continue;
        }
        let versions = spec["versions"].as_array().cloned().unwrap_or_default();
        let version = versions
            .iter()
            .find(|v| v["storage"] == true && v["served"] == true)
            .or_else(|| versions.iter().find(|v| v["served"] == true));
        let Some(version) = version.and_then(|v| v["name"].as_str()) else {
            continue;
        };
        let group = spec["group"].as_str().unwrap_or("");
        let plural = spec["names"]["plural"].as_str().unwrap_or("");
        out.push((
            format!("{plural}.{group}"),
            ApiResource {
                group: group.to_string(),
                version: version.to_string(),
                api_version: format!("{group}/{version}"),
                kind: spec["names"]["kind"].as_str().unwrap_or("").to_string(),
                plural: plural.to_string(),
            },
        ));
    }
    Ok(out)
}

/// The kind named by an owner reference's `apiVersion` and `kind` (the version is ignored, as the
/// GC resolves group and kind through the REST mapper).
pub(crate) fn resolve(api_version: &str, kind: &str) -> Option<&'static KindInfo> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    KINDS.iter().find(|k| k.kind == kind && k.group == group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution() {
        assert_eq!(
            resolve("apps/v1", "ReplicaSet").map(|k| k.plural),
            Some("replicasets")
        );
        assert_eq!(
            resolve("apps/v1beta2", "Deployment").map(|k| k.plural),
            Some("deployments")
        );
        assert_eq!(resolve("v1", "Pod").map(|k| k.plural), Some("pods"));
        assert_eq!(resolve("v1", "Node").map(|k| k.namespaced), Some(false));
        assert!(resolve("extensions/v1beta1", "ReplicaSet").is_none());
        assert!(resolve("example.com/v1", "Widget").is_none());
        assert_eq!(KINDS[1].api_resource().api_version, "apps/v1");
    }
}
