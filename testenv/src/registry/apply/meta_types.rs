//! The few built-in types the engine needs on its own: `metadata` (ObjectMeta and the types
//! it refers to), which every object has and custom resources take from the built-in
//! definitions, as upstream's CRD OpenAPI builder refers to them; and autoscaling/v1 Scale,
//! the type of every `scale` subresource. `meta_types.json` holds those definitions as
//! upstream's `api/openapi-spec/v3/` documents have them, without descriptions; a test
//! checks it against the module cache.

use std::sync::{Arc, LazyLock};

use serde_json::Value;

use super::openapi_types::OpenApiTypes;
use super::schema::{TypeRef, TypeResolver, TypedSchema};

/// The name of ObjectMeta's definition.
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// The name of autoscaling/v1 Scale's definition.
pub const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

static DEFINITIONS: &str = include_str!("meta_types.json");

static TYPES: LazyLock<Arc<OpenApiTypes>> = LazyLock::new(|| {
    let defs = match serde_json::from_str::<Value>(DEFINITIONS) {
        Ok(Value::Object(m)) => m,
        // the file is ours and parsed by a test; an empty table only loses metadata's types
        _ => Default::default(),
    };
    Arc::new(OpenApiTypes::new(defs))
});

/// A resolver that knows ObjectMeta, Scale and the types they refer to.
pub fn meta_types() -> Arc<dyn TypeResolver> {
    TYPES.clone()
}

/// The merge types of autoscaling/v1 Scale.
pub fn scale_schema() -> TypedSchema {
    TypedSchema::new(meta_types(), TypeRef::named(SCALE))
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
        let ours: Value = serde_json::from_str(DEFINITIONS).expect("meta_types.json parses");
        assert_eq!(ours.as_object().map(|m| m.len()), Some(8));
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
        let ours: Value = serde_json::from_str(DEFINITIONS).expect("meta_types.json parses");
        for (name, def) in ours.as_object().into_iter().flatten() {
            let theirs = doc
                .pointer(&format!("/components/schemas/{name}"))
                .map(strip_descriptions);
            assert_eq!(theirs.as_ref(), Some(def), "{name}");
        }
    }
}
