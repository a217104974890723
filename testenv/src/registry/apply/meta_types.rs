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
#[path = "meta_types_tests.rs"]
mod tests;
