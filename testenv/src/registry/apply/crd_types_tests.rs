//! Tests of [`super`] (`crd_types.rs`), apart from it so that the shared test types it uses
//! (`test_types.rs`) may import the engine without a module circle.

use super::*;
use crate::registry::apply::typed::to_set;
use serde_json::json;

#[test]
fn root_gets_type_meta_and_object_meta() {
    let s = Schema::from_json(&json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "when": {"type": "string", "format": "date-time"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "port": {"x-kubernetes-int-or-string": true},
                "sel": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
                "inner": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            }},
        },
    }));
    let ts = crd_schema(Some(&s));
    let set = to_set(
        &ts,
        &json!({
            "apiVersion": "x/v1", "kind": "W",
            "metadata": {"name": "a", "labels": {"k": "v"}, "ownerReferences": [{"uid": "u1", "name": "o", "kind": "K", "apiVersion": "v1"}]},
            "spec": {"when": "2024-01-01T00:00:00Z", "free": {"a": {"b": 1}}, "port": 80, "sel": {"a": "b"},
                     "inner": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": 1}},
        }),
    )
    .expect("valid");
    let texts: Vec<String> = set.paths().iter().map(|p| p.to_string()).collect();
    assert_eq!(
        texts,
        vec![
            ".apiVersion",
            ".kind",
            ".metadata.name",
            ".metadata.labels.k",
            // owner references are a map list keyed by uid, each item atomic
            ".metadata.ownerReferences[uid=\"u1\"]",
            ".spec.port",
            ".spec.sel",
            ".spec.when",
            // keys of a map (not named fields) are fields even when they hold a map
            ".spec.free.a",
            ".spec.free.a.b",
            ".spec.inner.apiVersion",
            ".spec.inner.kind",
            ".spec.inner.x",
            ".spec.inner.metadata.name",
        ]
    );
}
