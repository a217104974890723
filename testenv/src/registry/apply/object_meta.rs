//! The types of `metadata` (ObjectMeta and the types it refers to), which every object has
//! and custom resources take from the built-in definitions, as upstream's CRD OpenAPI builder
//! refers to them. `object_meta.json` holds those five definitions as upstream's
//! `api/openapi-spec/v3/api__v1_openapi.json` has them, without descriptions; a test checks
//! it against the module cache.

use std::sync::{Arc, LazyLock};

use serde_json::Value;

use super::openapi_types::OpenApiTypes;
use super::schema::TypeResolver;

/// The name of ObjectMeta's definition.
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

static DEFINITIONS: &str = include_str!("object_meta.json");

static TYPES: LazyLock<Arc<OpenApiTypes>> = LazyLock::new(|| {
    let defs = match serde_json::from_str::<Value>(DEFINITIONS) {
        Ok(Value::Object(m)) => m,
        // the file is ours and parsed by a test; an empty table only loses metadata's types
        _ => Default::default(),
    };
    Arc::new(OpenApiTypes::new(defs))
});

/// A resolver that knows ObjectMeta and the types it refers to.
pub fn meta_types() -> Arc<dyn TypeResolver> {
    TYPES.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::apply::test_types::upstream_file;

    fn strip_descriptions(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| *k != "description")
                    .map(|(k, x)| (k.clone(), strip_descriptions(x)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip_descriptions).collect()),
            other => other.clone(),
        }
    }

    #[test]
    fn definitions_parse_and_resolve() {
        let ours: Value = serde_json::from_str(DEFINITIONS).expect("object_meta.json parses");
        assert_eq!(ours.as_object().map(|m| m.len()), Some(5));
        let meta = meta_types()
            .resolve_named(OBJECT_META)
            .expect("ObjectMeta resolves");
        let m = meta.map.expect("a map");
        assert!(!m.atomic && m.element.is_none());
        assert!(m.fields.contains_key("ownerReferences"));
    }

    #[test]
    fn definitions_are_upstreams() {
        let rel = "k8s.io/kubernetes@v1.37.2/api/openapi-spec/v3/api__v1_openapi.json";
        let Some(text) = upstream_file(rel).and_then(|p| std::fs::read_to_string(p).ok()) else {
            eprintln!(
                "skipped: {rel} is not in the Go module cache (run `cargo xtask upstream build`)"
            );
            return;
        };
        let doc: Value = serde_json::from_str(&text).expect("upstream's spec parses");
        let ours: Value = serde_json::from_str(DEFINITIONS).expect("object_meta.json parses");
        for (name, def) in ours.as_object().into_iter().flatten() {
            let theirs = doc
                .pointer(&format!("/components/schemas/{name}"))
                .map(strip_descriptions);
            assert_eq!(theirs.as_ref(), Some(def), "{name}");
        }
    }
}
