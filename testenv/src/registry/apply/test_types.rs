//! Types shared by the engine's tests: a custom resource `Widget` with one field of every
//! kind the engine tells apart, and upstream's files in the Go module cache.

use std::path::PathBuf;

use serde_json::json;

use super::crd_types::crd_schema;
use super::schema::TypedSchema;
use crate::registry::custom::schema::Schema;

/// `spec`: `replicas` (integer), `note` (string), `tags` (a set), `ports` (a map list keyed
/// by `name`), `args` (an atomic list), `selector` (an atomic map), `labels` (a granular
/// map), `template` (a struct); `status.ready` (integer).
pub fn widget() -> TypedSchema {
    let s = Schema::from_json(&json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "note": {"type": "string"},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {
                              "name": {"type": "string"}, "port": {"type": "integer"}, "protocol": {"type": "string"}}}},
                "args": {"type": "array", "items": {"type": "string"}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "template": {"type": "object", "properties": {"image": {"type": "string"}}},
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "integer"}}},
        },
    }));
    crd_schema(Some(&s))
}

/// A file of the Go module cache (`$GOMODCACHE`, else `~/go/pkg/mod`), when it is there.
pub fn upstream_file(relative: &str) -> Option<PathBuf> {
    let root = std::env::var_os("GOMODCACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join("go/pkg/mod")))?;
    let p = root.join(relative);
    p.exists().then_some(p)
}
