//! [`Catalog`]: definitions by name and by group-version-kind, built once from the generated
//! data ([`catalog`]) on first use.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::definitions::DEFINITIONS;
use super::model::Schema;

/// A set of named definitions: upstream's built-in types ([`catalog`]), or any OpenAPI v3
/// `components.schemas` map ([`Catalog::from_definitions`]).
#[derive(Debug, Default)]
pub struct Catalog {
    /// The definitions as JSON, by name (for serving OpenAPI documents).
    raw: Map<String, Value>,
    /// The parsed definitions, by name.
    schemas: HashMap<String, Schema>,
    /// Definition name by `(group, version, kind)`.
    by_gvk: HashMap<(String, String, String), String>,
}

/// Upstream's built-in types of Kubernetes v1.37 (every definition of its OpenAPI v3
/// documents, descriptions left out), parsed on first use.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let defs = match serde_json::from_str::<Value>(DEFINITIONS) {
            Ok(Value::Object(m)) => m,
            // the data is generated and checked by a test; an empty catalog is the fallback
            _ => {
                tracing::error!("the generated schema definitions are not a JSON object");
                Map::new()
            }
        };
        Catalog::from_definitions(defs)
    })
}

impl Catalog {
    /// A catalog of the definitions in `defs` (name → OpenAPI v3 schema).
    pub fn from_definitions(defs: Map<String, Value>) -> Catalog {
        let mut schemas = HashMap::with_capacity(defs.len());
        let mut by_gvk = HashMap::new();
        for (name, v) in &defs {
            let s = Schema::from_json(v);
            for g in &s.gvks {
                by_gvk
                    .entry((g.group.clone(), g.version.clone(), g.kind.clone()))
                    .or_insert_with(|| name.clone());
            }
            schemas.insert(name.clone(), s);
        }
        Catalog {
            raw: defs,
            schemas,
            by_gvk,
        }
    }

    /// The name and schema of a definition (the name borrowed from the catalog).
    pub(super) fn entry(&self, name: &str) -> Option<(&str, &Schema)> {
        self.schemas
            .get_key_value(name)
            .map(|(k, s)| (k.as_str(), s))
    }

    /// A definition's parsed schema.
    pub fn schema(&self, name: &str) -> Option<&Schema> {
        self.schemas.get(name)
    }

    /// The name of a kind's definition, by its `x-kubernetes-group-version-kind`
    /// (navigable as a [`Node`](super::node::Node) with `Catalog::kind`, in `node.rs`).
    pub fn kind_definition(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.by_gvk
            .get(&(group.to_string(), version.to_string(), kind.to_string()))
            .map(String::as_str)
    }

    /// A definition as upstream's OpenAPI v3 documents write it (without descriptions).
    pub fn raw(&self, name: &str) -> Option<&Value> {
        self.raw.get(name)
    }

    /// Every definition name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.raw.keys().map(String::as_str)
    }

    /// Number of definitions.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether the catalog has no definitions.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The definitions `roots` reference, directly or not, the roots included (the
    /// `components.schemas` an OpenAPI document for those types carries).
    pub fn closure<'a>(&'a self, roots: impl IntoIterator<Item = &'a str>) -> BTreeSet<&'a str> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = roots.into_iter().collect();
        while let Some(name) = todo.pop() {
            let Some((name, schema)) = self.entry(name) else {
                continue;
            };
            if !seen.insert(name) {
                continue;
            }
            references(schema, &mut |r| todo.push(r));
        }
        seen
    }
}

/// Every `$ref` under a schema node (not following them).
fn references<'a>(s: &'a Schema, f: &mut dyn FnMut(&'a str)) {
    if let Some(r) = s.reference.as_deref() {
        f(r);
    }
    for p in s.properties.values() {
        references(p, f);
    }
    for sub in s.items.iter().chain(s.additional_properties.iter()) {
        references(sub, f);
    }
    for o in &s.one_of {
        references(o, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_resolves() {
        let c = catalog();
        assert!(c.len() > 800, "{} definitions", c.len());
        let all = c.closure(c.names());
        assert_eq!(all.len(), c.len(), "a $ref names a missing definition");
    }

    #[test]
    fn kinds_by_group_version_kind() {
        let c = catalog();
        assert_eq!(
            c.kind_definition("", "v1", "ConfigMap"),
            Some("io.k8s.api.core.v1.ConfigMap")
        );
        assert_eq!(
            c.kind_definition("autoscaling", "v2", "HorizontalPodAutoscaler"),
            Some("io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler")
        );
        // the meta types list every group
        assert!(c.kind("apps", "v1", "DeleteOptions").is_some());
        assert!(c.kind("apps", "v1", "Nope").is_none());
        let closure = c.closure(["io.k8s.api.core.v1.ConfigMap"]);
        assert!(closure.contains("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
        assert!(closure.contains("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"));
        assert!(!closure.contains("io.k8s.api.core.v1.Pod"));
    }
}
