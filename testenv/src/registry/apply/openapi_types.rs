//! Merge types from OpenAPI definitions (v2 `definitions` or v3 `components.schemas`, as in
//! upstream's `api/openapi-spec`): a [`TypeResolver`] that converts a definition the first
//! time it is asked for and keeps the result. Upstream's special cases hold:
//! `resource.Quantity` is an untyped scalar and `runtime.RawExtension` untyped with atomic
//! parts.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Map, Value};

use super::convert::{Additional, SchemaNode, atom_of};
use super::schema::{Atom, ListType, MapType, Scalar, TypeRef, TypeResolver, UNTYPED_ATOMIC};

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";

/// An OpenAPI schema in JSON.
#[derive(Debug, Clone, Copy)]
pub struct JsonNode<'a>(pub &'a Value);

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn last_segment(r: &str) -> Option<&str> {
    r.rsplit('/').next().filter(|n| !n.is_empty())
}

impl<'a> SchemaNode<'a> for JsonNode<'a> {
    fn reference(&self) -> Option<&'a str> {
        if let Some(r) = str_of(self.0, "$ref") {
            return last_segment(r);
        }
        match self.0.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => str_of(&all[0], "$ref").and_then(last_segment),
            _ => None,
        }
    }

    fn type_name(&self) -> &'a str {
        match self.0.get("type") {
            Some(Value::String(s)) => s,
            Some(Value::Array(a)) => a.first().and_then(Value::as_str).unwrap_or(""),
            _ => "",
        }
    }

    fn format(&self) -> &'a str {
        str_of(self.0, "format").unwrap_or("")
    }

    fn properties(&self) -> Vec<(&'a str, Self)> {
        self.0
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.as_str(), JsonNode(v))).collect())
            .unwrap_or_default()
    }

    fn items(&self) -> Option<Self> {
        self.0.get("items").filter(|i| i.is_object()).map(JsonNode)
    }

    fn additional(&self) -> Additional<Self> {
        match self.0.get("additionalProperties") {
            None => Additional::Absent,
            Some(Value::Bool(b)) => Additional::Allows(*b),
            Some(s) => Additional::Schema(JsonNode(s)),
        }
    }

    fn default_value(&self) -> Option<&'a Value> {
        self.0.get("default")
    }

    fn preserve_unknown_fields(&self) -> bool {
        self.0
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    fn list_type(&self) -> Option<&'a str> {
        str_of(self.0, "x-kubernetes-list-type")
    }

    fn list_map_keys(&self) -> Vec<String> {
        self.0
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn map_type(&self) -> Option<&'a str> {
        str_of(self.0, "x-kubernetes-map-type")
    }

    fn patch_strategy(&self) -> Option<&'a str> {
        str_of(self.0, "x-kubernetes-patch-strategy")
    }

    fn patch_merge_key(&self) -> Option<&'a str> {
        str_of(self.0, "x-kubernetes-patch-merge-key")
    }
}

/// Where definitions come from: a map of our own, or a lookup into a table that lives as
/// long as the process (the built-in schema catalog's `raw`).
enum Source {
    Map(Map<String, Value>),
    Lookup(fn(&str) -> Option<&'static Value>),
}

/// Types from OpenAPI definitions by name.
pub struct OpenApiTypes {
    definitions: Source,
    converted: Mutex<HashMap<String, Atom>>,
}

impl OpenApiTypes {
    /// Types from definitions keyed by their full names
    /// (`io.k8s.api.apps.v1.Deployment`).
    pub fn new(definitions: Map<String, Value>) -> Self {
        OpenApiTypes {
            definitions: Source::Map(definitions),
            converted: Mutex::new(HashMap::new()),
        }
    }

    /// Types from a lookup of definitions by full name, each converted when first asked for
    /// (`OpenApiTypes::from_lookup(|name| catalog().raw(name))`).
    pub fn from_lookup(lookup: fn(&str) -> Option<&'static Value>) -> Self {
        OpenApiTypes {
            definitions: Source::Lookup(lookup),
            converted: Mutex::new(HashMap::new()),
        }
    }

    fn definition(&self, name: &str) -> Option<&Value> {
        match &self.definitions {
            Source::Map(m) => m.get(name),
            Source::Lookup(f) => f(name),
        }
    }

    /// Types from an OpenAPI document (v3 `components.schemas`, or v2 `definitions`).
    pub fn from_document(doc: &Value) -> Self {
        let defs = doc
            .pointer("/components/schemas")
            .or_else(|| doc.get("definitions"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        OpenApiTypes::new(defs)
    }

    /// The name of the definition with this `x-kubernetes-group-version-kind` (among a map's
    /// definitions; a lookup's table has its own index).
    pub fn name_of_kind(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        let Source::Map(defs) = &self.definitions else {
            return None;
        };
        defs.iter().find_map(|(name, def)| {
            let gvks = def.get("x-kubernetes-group-version-kind")?.as_array()?;
            gvks.iter()
                .any(|g| g["group"] == group && g["version"] == version && g["kind"] == kind)
                .then_some(name.as_str())
        })
    }
}

impl std::fmt::Debug for OpenApiTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = match &self.definitions {
            Source::Map(m) => m.len(),
            Source::Lookup(_) => 0,
        };
        f.debug_struct("OpenApiTypes")
            .field("definitions", &n)
            .finish_non_exhaustive()
    }
}

impl TypeResolver for OpenApiTypes {
    fn resolve_named(&self, name: &str) -> Option<Atom> {
        if let Some(a) = self.converted.lock().get(name) {
            return Some(a.clone());
        }
        let atom = match name {
            QUANTITY => Atom::scalar(Scalar::Untyped),
            RAW_EXTENSION => raw_extension(),
            _ => {
                let def = self.definition(name)?;
                if def.get("$ref").is_some() {
                    return None;
                }
                atom_of(JsonNode(def), false)
            }
        };
        self.converted.lock().insert(name.to_string(), atom.clone());
        Some(atom)
    }
}

/// Untyped, with atomic lists and maps.
fn raw_extension() -> Atom {
    let atomic = TypeRef::named(UNTYPED_ATOMIC);
    Atom {
        scalar: Some(Scalar::Untyped),
        list: Some(Arc::new(ListType {
            element: atomic.clone(),
            atomic: true,
            keys: Vec::new(),
        })),
        map: Some(Arc::new(MapType {
            fields: Default::default(),
            element: Some(atomic),
            atomic: true,
        })),
    }
}

#[cfg(test)]
#[path = "openapi_types_tests.rs"]
mod tests;
