//! Types shared by the engine's tests: a custom resource `Widget` with one field of every
//! kind the engine tells apart, and upstream's files in the Go module cache.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::crd_types::crd_schema;
use super::schema::{
    Atom, Field, ListType, MapType, Relationship, Scalar, TypeRef, TypeResolver, TypedSchema,
};
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

/// Types written in structured-merge-diff's own schema format (`types:` with `map`, `list`,
/// `scalar`, `namedType`, `elementType`, `elementRelationship`, `keys`), which its test
/// tables use; `root` names the objects' type.
pub fn smd_schema(yaml: &str, root: &str) -> TypedSchema {
    let doc: Value = serde_yaml::from_str(yaml).unwrap_or_else(|e| panic!("schema YAML: {e}"));
    let types: HashMap<String, Atom> = doc["types"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| (t["name"].as_str().unwrap_or("").to_string(), smd_atom(t)))
        .collect();
    TypedSchema::new(Arc::new(SmdTypes(types)), TypeRef::named(root))
}

struct SmdTypes(HashMap<String, Atom>);

impl TypeResolver for SmdTypes {
    fn resolve_named(&self, name: &str) -> Option<Atom> {
        self.0.get(name).cloned()
    }
}

fn smd_ref(v: &Value) -> TypeRef {
    match v.get("namedType").and_then(Value::as_str) {
        Some(n) => {
            let rel = match v.get("elementRelationship").and_then(Value::as_str) {
                Some("atomic") => Some(Relationship::Atomic),
                Some(_) => Some(Relationship::Granular),
                None => None,
            };
            TypeRef::Named(Arc::from(n), rel)
        }
        None => TypeRef::inline(smd_atom(v)),
    }
}

fn smd_atom(v: &Value) -> Atom {
    let scalar = v.get("scalar").and_then(Value::as_str).map(|s| match s {
        "numeric" => Scalar::Numeric,
        "string" => Scalar::String,
        "boolean" => Scalar::Boolean,
        _ => Scalar::Untyped,
    });
    let list = v.get("list").map(|l| {
        Arc::new(ListType {
            element: smd_ref(&l["elementType"]),
            atomic: l["elementRelationship"] != "associative",
            keys: l["keys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect(),
        })
    });
    let map = v.get("map").map(|m| {
        let fields: BTreeMap<String, Field> = m["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                (
                    f["name"].as_str().unwrap_or("").to_string(),
                    Field {
                        ty: smd_ref(&f["type"]),
                        default: f.get("default").cloned(),
                    },
                )
            })
            .collect();
        Arc::new(MapType {
            fields,
            element: m.get("elementType").map(smd_ref),
            atomic: m["elementRelationship"] == "atomic",
        })
    });
    Atom { scalar, list, map }
}
