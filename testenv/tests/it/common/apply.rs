//! What the server-side apply checks share (`spec_apply.rs`, `spec_apply_subresources.rs`):
//! the apply request, managedFields without times, and a custom resource with every list and
//! map type.

use serde_json::{Value, json};

use super::crd::install;
use super::server::Server;
use super::{Resp, patch};

/// The media type of an apply patch.
pub const APPLY: &str = "application/apply-patch+yaml";
/// The media type of a JSON merge patch.
pub const MERGE: &str = "application/merge-patch+json";

/// A server-side apply of `body` at `path` with the query `query`.
pub async fn apply(env: &Server, path: &str, query: &str, body: &Value) -> Resp {
    patch(env, &format!("{path}?{query}"), APPLY, body).await
}

/// The entries of `metadata.managedFields`, without their times, by operation and
/// manager: the servers order them by time next, which depends on whether two writes fell
/// in the same second.
pub fn managed(obj: &Value) -> Vec<Value> {
    let mut entries: Vec<Value> = obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().map(|m| m.remove("time"));
            e
        })
        .collect();
    let key = |e: &Value| (e["operation"].to_string(), e["manager"].to_string());
    entries.sort_by_key(key);
    entries
}

/// A Lease: scalars only, so its managedFields do not depend on list or map types.
pub fn lease(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": spec})
}

/// A managedFields entry without its time.
pub fn entry(manager: &str, operation: &str, api_version: &str, fields: Value) -> Value {
    json!({"manager": manager, "operation": operation, "apiVersion": api_version,
           "fieldsType": "FieldsV1", "fieldsV1": fields})
}

/// A custom resource with a map list, a set, an atomic map and a status with a map list.
pub fn gadget_crd(group: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gadgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string"},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                  "items": {"type": "object", "required": ["name"], "properties": {
                                      "name": {"type": "string"}, "port": {"type": "integer"}}}},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                     "additionalProperties": {"type": "string"}},
                    }},
                    "status": {"type": "object", "properties": {
                        "ready": {"type": "integer"},
                        "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                                       "items": {"type": "object", "required": ["type"], "properties": {
                                           "type": {"type": "string"}, "status": {"type": "string"}}}},
                    }},
                }}},
            }],
        },
    })
}

/// A check's Gadget CRD in a group of its own and a namespace: `(group, namespace,
/// apiVersion, the path of the Gadget "g")`.
pub async fn gadgets(env: &Server) -> (String, String, String, String) {
    let group = env.group("g");
    let ns = env.ns("n").await;
    install(env, &gadget_crd(&group)).await;
    let gv = format!("{group}/v1");
    let path = format!("/apis/{group}/v1/namespaces/{ns}/gadgets/g");
    (group, ns, gv, path)
}

/// The Gadget `g` of `group` with `spec`.
pub fn gadget(group: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{group}/v1"), "kind": "Gadget", "metadata": {"name": "g"}, "spec": spec})
}
