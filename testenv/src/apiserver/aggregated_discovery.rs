//! Aggregated discovery: `/api` and `/apis` as one `apidiscovery.k8s.io/v2`
//! `APIGroupDiscoveryList` each, for clients that ask for it in `Accept` (kubectl, client-go,
//! kube-rs' `Discovery::run_aggregated`).
//!
//! Behaviour of `staging/src/k8s.io/apiserver/pkg/endpoints/discovery/aggregated/`
//! (`handler.go`: groups by priority, versions by priority then kube-aware order; `etag.go`:
//! the SHA-512 `ETag`, `Vary: Accept`, `Cache-Control: public` and 304 on `If-None-Match`), the
//! conversion of a version's resources in `staging/src/k8s.io/apiserver/pkg/endpoints/installer.go`
//! (`ConvertGroupVersionIntoToDiscovery`: subresources nested under their resource) and the
//! custom resources' entries of
//! `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_discovery_controller.go`.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha512};

use super::http::{Body, json_response};
use crate::registry::{ResourceInfo, ServedResources};

/// The `Content-Type` of an aggregated discovery answer (upstream puts the kind in it).
pub const CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn response_kind(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

/// One resource of a group version, its subresources nested (`APIResourceDiscovery`). A
/// built-in resource's `responseKind` names only the kind (its group and version are empty
/// unless they differ from the resource's, as the `scale` subresource's `autoscaling/v1`), its
/// subresources by name; a custom resource's names its group and version, status first.
pub fn resource_entry(r: &ResourceInfo) -> Value {
    let (group, version) = if r.is_custom() {
        (r.group, r.version)
    } else {
        ("", "")
    };
    let scope = if r.namespaced {
        "Namespaced"
    } else {
        "Cluster"
    };
    let mut e = json!({
        "resource": r.plural,
        "responseKind": response_kind(group, version, r.kind),
        "scope": scope,
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        e["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        e["categories"] = json!(r.categories);
    }
    let mut subresources: Vec<_> = r.subresources.iter().collect();
    if !r.is_custom() {
        subresources.sort_by_key(|s| s.name);
    }
    let subs: Vec<Value> = subresources
        .into_iter()
        .map(|s| {
            let kind = if s.kind.is_empty() { r.kind } else { s.kind };
            json!({
                "subresource": s.name,
                "responseKind": response_kind(
                    s.group.unwrap_or(group),
                    s.version.unwrap_or(version),
                    kind,
                ),
                "verbs": s.verbs,
            })
        })
        .collect();
    if !subs.is_empty() {
        e["subresources"] = Value::Array(subs);
    }
    e
}

/// The resources of a group version in discovery's order: built-in ones by name (as the
/// installer lists them), custom ones by name too (as the CRD discovery controller sorts them).
fn version_entry(served: &ServedResources, group: &str, version: &str) -> Value {
    let mut resources = served.resources(group, version);
    resources.sort_by_key(|r| (r.is_custom(), r.plural));
    let entries: Vec<Value> = resources.into_iter().map(resource_entry).collect();
    let mut v = json!({"version": version, "freshness": "Current"});
    if !entries.is_empty() {
        v["resources"] = Value::Array(entries);
    }
    v
}

/// `/api` (`core`) or `/apis` as an `APIGroupDiscoveryList`: the groups in `/apis` order, each
/// group's versions preferred first.
pub fn document(served: &ServedResources, core: bool) -> Value {
    let items: Vec<Value> = if core {
        vec![json!({
            "metadata": {},
            "versions": [version_entry(served, "", "v1")],
        })]
    } else {
        served
            .groups()
            .iter()
            .map(|g| {
                let versions: Vec<Value> = g
                    .versions
                    .iter()
                    .map(|v| version_entry(served, &g.name, v))
                    .collect();
                json!({
                    "metadata": {"name": g.name},
                    "versions": versions,
                })
            })
            .collect()
    };
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// The `ETag` of a document: the upper-case hex SHA-512 of its bytes, quoted.
pub fn etag(body: &[u8]) -> String {
    let digest = Sha512::digest(body);
    let mut hex = String::with_capacity(130);
    hex.push('"');
    for b in digest {
        hex.push_str(&format!("{b:02X}"));
    }
    hex.push('"');
    hex
}

/// The answer: 200 with the document, or 304 without a body when `if_none_match` is its
/// `ETag`; both with the caching headers upstream sends.
pub fn respond(doc: &Value, if_none_match: &str) -> Response<Body> {
    let body = crate::registry::go_json::to_vec(doc).unwrap_or_default();
    let tag = etag(&body);
    let mut r = if if_none_match == tag {
        let mut r = json_response(304, Bytes::new());
        r.headers_mut().remove(header::CONTENT_TYPE);
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = json_response(200, body);
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
        r
    };
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_deployments_entry() {
        let served = ServedResources::default();
        let doc = document(&served, false);
        assert_eq!(doc["kind"], "APIGroupDiscoveryList");
        let apps = doc["items"]
            .as_array()
            .and_then(|a| a.iter().find(|g| g["metadata"]["name"] == "apps"))
            .expect("apps");
        let v1 = &apps["versions"][0];
        assert_eq!(
            (&v1["version"], &v1["freshness"]),
            (&json!("v1"), &json!("Current"))
        );
        let d = v1["resources"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["resource"] == "deployments"))
            .expect("deployments");
        assert_eq!(
            d["responseKind"],
            json!({"group": "", "version": "", "kind": "Deployment"})
        );
        let subs: Vec<&str> = d["subresources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["subresource"].as_str())
            .collect();
        assert_eq!(subs, ["scale", "status"]);
        assert_eq!(
            (&d["scope"], &d["singularResource"], &d["shortNames"]),
            (
                &json!("Namespaced"),
                &json!("deployment"),
                &json!(["deploy"])
            )
        );
        let scale = d["subresources"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["subresource"] == "scale"))
            .expect("scale");
        assert_eq!(
            scale["responseKind"],
            json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
        );
        let status = d["subresources"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["subresource"] == "status"))
            .expect("status");
        assert_eq!(status["responseKind"]["kind"], "Deployment");
        // nothing of a subresource is listed as a resource of its own
        assert!(v1["resources"].as_array().is_some_and(|a| {
            a.iter()
                .all(|r| !r["resource"].as_str().unwrap_or("/").contains('/'))
        }));
    }

    #[test]
    fn core_is_one_unnamed_group() {
        let doc = document(&ServedResources::default(), true);
        let items = doc["items"].as_array().expect("items");
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["metadata"], json!({}));
        let ns = items[0]["versions"][0]["resources"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["resource"] == "namespaces"))
            .expect("namespaces");
        assert_eq!(ns["scope"], "Cluster");
        assert_eq!(ns["responseKind"]["group"], "");
        let names: Vec<&str> = items[0]["versions"][0]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["resource"].as_str())
            .collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }

    #[test]
    fn etag_and_not_modified() {
        let doc = document(&ServedResources::default(), true);
        let r = respond(&doc, "");
        assert_eq!(r.status(), 200);
        let tag = r.headers()[header::ETAG]
            .to_str()
            .expect("etag")
            .to_string();
        assert_eq!(tag.len(), 130);
        assert!(
            tag[1..129]
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        );
        assert_eq!(r.headers()[header::VARY], "Accept");
        assert_eq!(r.headers()[header::CONTENT_TYPE], CONTENT_TYPE);
        let r = respond(&doc, &tag);
        assert_eq!(r.status(), 304);
        assert_eq!(r.headers()[header::ETAG], tag.as_str());
    }
}
