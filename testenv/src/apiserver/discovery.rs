//! `/version` and legacy discovery (`/api`, `/apis`, `/api/v1`, `/apis/G/V`), as
//! `staging/src/k8s.io/apiserver/pkg/endpoints/discovery/` serves them.

use std::net::SocketAddr;

use serde_json::{Value, json};

use crate::registry::{GroupVersions, ServedResources};

/// The emulated kube-apiserver version: the one `upstream/go.mod` pins, which the real control
/// plane (`cargo xtask e2e --cluster upstream`) reports too, with the same empty commit.
pub const GIT_VERSION: &str = "v1.37.2";

/// The `/version` body: every field present and a string, the emulation and
/// minimum-compatibility versions as kube-apiserver v1.37 reports them.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "37",
        "emulationMajor": "1",
        "emulationMinor": "37",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "36",
        "gitVersion": GIT_VERSION,
        "gitCommit": "",
        "gitTreeState": "archive",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "go1.26.8",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// `/api`.
pub fn api_versions(addr: &SocketAddr) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr.to_string()}],
    })
}

fn group_entry(g: &GroupVersions) -> Value {
    let versions: Vec<Value> = g
        .versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{}/{v}", g.name), "version": v}))
        .collect();
    let preferred = versions.first().cloned().unwrap_or(Value::Null);
    json!({"name": g.name, "versions": versions, "preferredVersion": preferred})
}

/// `/apis`.
pub fn api_group_list(served: &ServedResources) -> Value {
    json!({
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": served.groups().iter().map(group_entry).collect::<Vec<_>>(),
    })
}

/// `/apis/{g}` (the group is served; a custom group not yet in discovery has no versions).
pub fn api_group(served: &ServedResources, g: &str) -> Value {
    let group = served.group(g).unwrap_or_else(|| GroupVersions {
        name: g.to_string(),
        versions: Vec::new(),
    });
    let mut v = group_entry(&group);
    v["kind"] = json!("APIGroup");
    v["apiVersion"] = json!("v1");
    v
}

/// `/api/v1` or `/apis/{g}/{v}`: built-in resources and their subresources sorted by name, as
/// kube-apiserver's installer lists them; a custom resource's status and scale after it.
pub fn resource_list(served: &ServedResources, group: &str, version: &str) -> Value {
    let mut out = Vec::new();
    for r in served.resources(group, version) {
        let mut e = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
        });
        if !r.short_names.is_empty() {
            e["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            e["categories"] = json!(r.categories);
        }
        if let Some(cv) = r.custom {
            e["storageVersionHash"] = json!(cv.storage_version_hash);
        }
        out.push(e);
        for s in r.subresources {
            let mut e = json!({
                "name": format!("{}/{}", r.plural, s.name),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": if s.kind.is_empty() { r.kind } else { s.kind },
                "verbs": s.verbs,
            });
            if let Some(g) = s.group {
                e["group"] = json!(g);
            }
            if let Some(v) = s.version {
                e["version"] = json!(v);
            }
            out.push(e);
        }
    }
    if served
        .resources(group, version)
        .iter()
        .all(|r| !r.is_custom())
    {
        out.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_v1_entries() {
        let served = ServedResources::default();
        let l = resource_list(&served, "apps", "v1");
        let rs = l["resources"].as_array().expect("resources");
        let d = rs
            .iter()
            .find(|e| e["name"] == "deployments")
            .expect("deployments");
        assert_eq!(d["shortNames"], json!(["deploy"]));
        assert_eq!(d["categories"], json!(["all"]));
        assert_eq!(d["verbs"].as_array().map(Vec::len), Some(8));
        let s = rs
            .iter()
            .find(|e| e["name"] == "deployments/scale")
            .expect("scale");
        assert_eq!(
            (
                s["group"].as_str(),
                s["version"].as_str(),
                s["kind"].as_str()
            ),
            (Some("autoscaling"), Some("v1"), Some("Scale"))
        );
        let core = resource_list(&served, "", "v1");
        let ns = core["resources"]
            .as_array()
            .and_then(|a| a.iter().find(|e| e["name"] == "namespaces").cloned())
            .expect("ns");
        assert_eq!(ns["namespaced"], false);
        assert_eq!(core["groupVersion"], "v1");
    }

    #[test]
    fn version_all_strings() {
        let v = version();
        for k in [
            "major",
            "minor",
            "emulationMajor",
            "emulationMinor",
            "minCompatibilityMajor",
            "minCompatibilityMinor",
            "gitVersion",
            "gitTreeState",
            "buildDate",
            "goVersion",
            "compiler",
            "platform",
        ] {
            assert!(v[k].as_str().is_some_and(|s| !s.is_empty()), "{k}");
        }
        // a build from the Go modules (no ldflags) has no commit
        assert_eq!(v["gitCommit"], "");
    }
}
