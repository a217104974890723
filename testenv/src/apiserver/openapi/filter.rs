//! Upstream's documents cut to what this server serves, in the form kube-apiserver v1.37.2
//! serves them: only the paths of served resources and discovery documents (kube-apiserver
//! publishes the paths of its routes), only the schemas and parameters those paths reach
//! (`k8s.io/kube-openapi/pkg/builder` collects the definitions of its routes), no CBOR media
//! types (the files were generated with the `CBORServingAndStorage` gate on; it is off by
//! default) and the server's version in `info.version`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::apiserver::routes::{self, Route};
use crate::registry::ServedResources;

/// `info.version` of kube-apiserver v1.37's documents.
pub const INFO_VERSION: &str = "1.37";

/// Whether this server serves a documented path template (`/api/v1/namespaces/{namespace}/pods`).
/// The deprecated `/watch/` paths are not served by kcm-testenv.
pub fn serves_path(template: &str, served: &ServedResources) -> bool {
    let concrete = template
        .replace("{namespace}", "ns")
        .replace("{name}", "x")
        .replace("{path}", "p");
    if concrete.split('/').any(|s| s == "watch") {
        return false;
    }
    matches!(
        routes::parse(&concrete, served),
        Route::Resource(_)
            | Route::ResourceList(..)
            | Route::ApiGroup(_)
            | Route::Api
            | Route::Apis
            | Route::Version
    )
}

/// Drop every CBOR media type: keys (`content` maps) and array entries (`consumes`,
/// `produces`) naming one.
pub fn drop_cbor(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.contains("cbor"));
            m.values_mut().for_each(drop_cbor);
        }
        Value::Array(a) => {
            a.retain(|x| !x.as_str().is_some_and(|s| s.contains("cbor")));
            a.iter_mut().for_each(drop_cbor);
        }
        _ => {}
    }
}

/// Every `$ref` under `v` (`#/definitions/X`, `#/components/schemas/X`, `#/parameters/X`).
pub fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => {
                        out.insert(r.clone());
                    }
                    _ => refs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// Keep the entries of `table` (its entries' refs start with `prefix`) that `roots` reach,
/// directly or through other kept entries.
pub fn prune(table: &mut Map<String, Value>, prefix: &str, roots: &BTreeSet<String>) {
    let mut keep: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = roots
        .iter()
        .filter_map(|r| r.strip_prefix(prefix).map(str::to_string))
        .collect();
    while let Some(name) = todo.pop() {
        if !keep.insert(name.clone()) {
            continue;
        }
        if let Some(def) = table.get(&name) {
            let mut next = BTreeSet::new();
            refs(def, &mut next);
            todo.extend(
                next.iter()
                    .filter_map(|r| r.strip_prefix(prefix).map(str::to_string)),
            );
        }
    }
    table.retain(|k, _| keep.contains(k));
}

/// A v3 document of a group version cut to the served paths; `None` when none is served.
pub fn v3(doc: &Value, served: &ServedResources) -> Option<Value> {
    let mut doc = doc.clone();
    let paths = doc.get_mut("paths")?.as_object_mut()?;
    paths.retain(|p, _| serves_path(p, served));
    if paths.is_empty() {
        return None;
    }
    let mut roots = BTreeSet::new();
    refs(&doc["paths"], &mut roots);
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        prune(schemas, "#/components/schemas/", &roots);
    }
    drop_cbor(&mut doc);
    doc["info"]["version"] = Value::String(INFO_VERSION.to_string());
    Some(doc)
}

/// The swagger document cut to the served paths.
pub fn v2(doc: &Value, served: &ServedResources) -> Value {
    let mut doc = doc.clone();
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        paths.retain(|p, _| serves_path(p, served));
    }
    let mut roots = BTreeSet::new();
    refs(&doc["paths"], &mut roots);
    if let Some(params) = doc.get_mut("parameters").and_then(Value::as_object_mut) {
        prune(params, "#/parameters/", &roots);
    }
    refs(&doc["parameters"], &mut roots);
    if let Some(defs) = doc.get_mut("definitions").and_then(Value::as_object_mut) {
        prune(defs, "#/definitions/", &roots);
    }
    drop_cbor(&mut doc);
    doc["info"]["version"] = Value::String(INFO_VERSION.to_string());
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn served_paths() {
        let s = ServedResources::default();
        for (p, want) in [
            (
                "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
                true,
            ),
            ("/apis/apps/v1/deployments", true),
            ("/apis/apps/v1/", true),
            ("/apis/apps/", true),
            ("/api/", true),
            ("/version/", true),
            (
                "/apis/apps/v1/watch/namespaces/{namespace}/deployments",
                false,
            ),
            (
                "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/rollback",
                false,
            ),
            ("/apis/nope/v1/things", false),
            ("/openid/v1/jwks/", false),
        ] {
            assert_eq!(serves_path(p, &s), want, "{p}");
        }
    }

    #[test]
    fn cut_to_what_is_reached() {
        let doc = json!({
            "info": {"title": "Kubernetes", "version": "unversioned"},
            "paths": {
                "/apis/apps/v1/deployments": {"get": {"responses": {"200": {"content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/D"}},
                    "application/cbor": {"schema": {"$ref": "#/components/schemas/D"}}}}}}},
                "/apis/apps/v1/nopes": {"get": {"responses": {"200": {"content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/S"}}}}}}},
            },
            "components": {"schemas": {
                "D": {"properties": {"spec": {"$ref": "#/components/schemas/DS"}}},
                "DS": {"type": "object"},
                "S": {"type": "object"},
            }},
        });
        let cut = v3(&doc, &ServedResources::default()).expect("served");
        assert_eq!(cut["info"]["version"], "1.37");
        let schemas: Vec<&String> = cut["components"]["schemas"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(schemas, ["D", "DS"]);
        let content =
            &cut["paths"]["/apis/apps/v1/deployments"]["get"]["responses"]["200"]["content"];
        assert!(content.get("application/cbor").is_none());
        assert!(cut["paths"].get("/apis/apps/v1/nopes").is_none());
        let mut consumes = json!({"consumes": ["application/json", "application/cbor"]});
        drop_cbor(&mut consumes);
        assert_eq!(consumes, json!({"consumes": ["application/json"]}));
    }
}
