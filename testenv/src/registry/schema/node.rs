//! [`Node`]: a place in a type's schema, with `$ref`s followed, and what a value there looks like
//! ([`Shape`]). Navigation goes down by property, list item or map value.

use serde_json::Value;

use super::catalog::Catalog;
use super::go_field::{GoField, go_field};
use super::model::{ListType, MapType, Schema, Type};

/// Where navigation starts: the catalog's definitions as [`Node`]s (here, beside [`Node`], so
/// that the catalog itself knows nothing of navigation).
impl Catalog {
    /// A definition as a [`Node`] to navigate from.
    pub fn definition(&self, name: &str) -> Option<Node<'_>> {
        let (name, schema) = self.entry(name)?;
        Some(Node::new_named(self, schema, name))
    }

    /// The definition of a kind (`("apps", "v1", "Deployment")`), by its
    /// `x-kubernetes-group-version-kind`.
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<Node<'_>> {
        let name = self.kind_definition(group, version, kind)?;
        self.definition(name)
    }
}

/// The definition name of upstream's `resource.Quantity`.
pub const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// What a value at a [`Node`] is, as upstream's Go type would decode it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A struct: named properties, anything else unknown.
    Struct,
    /// A map: string keys, values of one schema ([`Node::values`]).
    Map,
    /// A list of items of one schema ([`Node::items`]).
    List,
    /// `IntOrString`: an integer or a string.
    IntOrString,
    /// `Quantity`: a string, or a number (read as its decimal text).
    Quantity,
    /// A scalar of this type (`String`, `Integer`, `Number`, `Boolean`).
    Scalar(Type),
    /// Anything, kept as it is (`RawExtension`, `FieldsV1`, `JSON`, a schema without type).
    Free,
}

/// A place in the schema of a type: the use-site schema (a property, `items` or
/// `additionalProperties` node, which carries `default`, list, map and patch strategies) and the
/// definition it names, if any.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    catalog: &'a Catalog,
    site: &'a Schema,
    schema: &'a Schema,
    definition: Option<&'a str>,
}

impl<'a> Node<'a> {
    /// The node for a use-site schema, following its `$ref` (a missing definition reads as
    /// [`Shape::Free`]).
    pub fn new(catalog: &'a Catalog, site: &'a Schema) -> Node<'a> {
        let mut schema = site;
        let mut definition = None;
        // upstream's definitions never chain references; a few hops guard against a loop
        for _ in 0..4 {
            let Some(name) = schema.reference.as_deref() else {
                break;
            };
            match catalog.entry(name) {
                Some((n, s)) => {
                    definition = Some(n);
                    schema = s;
                }
                None => break,
            }
        }
        Node {
            catalog,
            site,
            schema,
            definition,
        }
    }

    /// The root node of the definition `name` (whose schema is `schema`).
    pub(super) fn new_named(catalog: &'a Catalog, schema: &'a Schema, name: &'a str) -> Node<'a> {
        Node {
            catalog,
            site: schema,
            schema,
            definition: Some(name),
        }
    }

    /// The catalog this node reads.
    pub fn catalog(&self) -> &'a Catalog {
        self.catalog
    }

    /// The schema with the reference followed (the definition's, or the use site's).
    pub fn schema(&self) -> &'a Schema {
        self.schema
    }

    /// The use-site schema (equal to [`schema`](Self::schema) when no `$ref` was followed).
    pub fn site(&self) -> &'a Schema {
        self.site
    }

    /// The definition this node names (`io.k8s.api.core.v1.Container`), if it names one.
    pub fn definition(&self) -> Option<&'a str> {
        self.definition
    }

    /// The Go type name of the definition (`Container` for `io.k8s.api.core.v1.Container`).
    pub fn type_name(&self) -> Option<&'a str> {
        self.definition.map(|d| d.rsplit('.').next().unwrap_or(d))
    }

    /// What a value here is.
    pub fn shape(&self) -> Shape {
        let s = self.schema;
        if self.definition == Some(QUANTITY) {
            return Shape::Quantity;
        }
        if s.int_or_string || self.site.int_or_string {
            return Shape::IntOrString;
        }
        if s.is_struct() {
            return Shape::Struct;
        }
        if s.is_map() {
            return Shape::Map;
        }
        match s.type_ {
            Type::Array if s.items.is_some() => Shape::List,
            Type::String | Type::Integer | Type::Number | Type::Boolean => Shape::Scalar(s.type_),
            _ => Shape::Free,
        }
    }

    /// The property `name` of a struct.
    pub fn property(&self, name: &str) -> Option<Node<'a>> {
        self.schema
            .properties
            .get(name)
            .map(|s| Node::new(self.catalog, s))
    }

    /// The Go field behind the property `name` of this struct (upstream's built-in types only).
    pub fn go_field(&self, name: &str) -> Option<&'static GoField> {
        go_field(self.definition?, name)
    }

    /// The items of a list.
    pub fn items(&self) -> Option<Node<'a>> {
        self.schema
            .items
            .as_deref()
            .map(|s| Node::new(self.catalog, s))
    }

    /// The values of a map.
    pub fn values(&self) -> Option<Node<'a>> {
        self.schema
            .additional_properties
            .as_deref()
            .map(|s| Node::new(self.catalog, s))
    }

    /// The child a value's key or index leads to: a struct's property, a map's values, a
    /// list's items.
    pub fn child(&self, key: &str) -> Option<Node<'a>> {
        match self.shape() {
            Shape::Struct => self.property(key),
            Shape::Map => self.values(),
            Shape::List => self.items(),
            _ => None,
        }
    }

    /// `default`, the use site's first.
    pub fn default(&self) -> Option<&'a Value> {
        self.site.default.as_ref().or(self.schema.default.as_ref())
    }

    /// `required` of a struct.
    pub fn required(&self) -> &'a [String] {
        &self.schema.required
    }

    /// `x-kubernetes-list-type` (use site first).
    pub fn list_type(&self) -> Option<ListType> {
        self.site.list_type.or(self.schema.list_type)
    }

    /// `x-kubernetes-list-map-keys` (use site first).
    pub fn list_map_keys(&self) -> &'a [String] {
        if self.site.list_map_keys.is_empty() {
            &self.schema.list_map_keys
        } else {
            &self.site.list_map_keys
        }
    }

    /// `x-kubernetes-map-type` (use site first; definitions such as `LabelSelector` carry it).
    pub fn map_type(&self) -> Option<MapType> {
        self.site.map_type.or(self.schema.map_type)
    }

    /// `x-kubernetes-patch-strategy` (use site first).
    pub fn patch_strategy(&self) -> &'a [String] {
        if self.site.patch_strategy.is_empty() {
            &self.schema.patch_strategy
        } else {
            &self.site.patch_strategy
        }
    }

    /// `x-kubernetes-patch-merge-key` (use site first).
    pub fn patch_merge_key(&self) -> Option<&'a str> {
        self.site
            .patch_merge_key
            .as_deref()
            .or(self.schema.patch_merge_key.as_deref())
    }

    /// The `format` of a scalar (`int32`, `int64`, `byte`, `date-time`, `double`).
    pub fn format(&self) -> Option<&'a str> {
        self.schema
            .format
            .as_deref()
            .or(self.site.format.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::schema::catalog;

    #[test]
    fn navigates_a_deployment() {
        let c = catalog();
        let d = c.kind("apps", "v1", "Deployment").expect("Deployment");
        assert_eq!(d.definition(), Some("io.k8s.api.apps.v1.Deployment"));
        assert_eq!(d.shape(), Shape::Struct);
        let spec = d.property("spec").expect("spec");
        assert_eq!(spec.type_name(), Some("DeploymentSpec"));
        assert_eq!(spec.default(), Some(&serde_json::json!({})));
        let strategy = spec.property("strategy").expect("strategy");
        assert_eq!(strategy.patch_strategy(), ["retainKeys"]);
        let selector = spec.property("selector").expect("selector");
        assert_eq!(selector.map_type(), Some(MapType::Atomic));
        let containers = spec
            .property("template")
            .and_then(|t| t.property("spec"))
            .and_then(|s| s.property("containers"))
            .expect("containers");
        assert_eq!(containers.shape(), Shape::List);
        assert_eq!(containers.list_type(), Some(ListType::Map));
        assert_eq!(containers.list_map_keys(), ["name"]);
        assert_eq!(containers.patch_merge_key(), Some("name"));
        let c0 = containers.items().expect("items");
        assert_eq!(c0.type_name(), Some("Container"));
        let port = c0
            .property("ports")
            .and_then(|p| p.items())
            .and_then(|p| p.property("containerPort"))
            .expect("containerPort");
        assert_eq!(port.shape(), Shape::Scalar(Type::Integer));
        assert_eq!(port.format(), Some("int32"));
        let limits = c0
            .property("resources")
            .and_then(|r| r.property("limits"))
            .expect("limits");
        assert_eq!(limits.shape(), Shape::Map);
        assert_eq!(limits.values().map(|v| v.shape()), Some(Shape::Quantity));
        let labels = d
            .property("metadata")
            .and_then(|m| m.child("labels"))
            .and_then(|l| l.child("app"))
            .expect("label values");
        assert_eq!(labels.shape(), Shape::Scalar(Type::String));
    }

    #[test]
    fn shapes_of_the_special_types() {
        let c = catalog();
        let svc_port = c
            .definition("io.k8s.api.core.v1.ServicePort")
            .expect("ServicePort");
        assert_eq!(
            svc_port.property("targetPort").map(|n| n.shape()),
            Some(Shape::IntOrString)
        );
        let raw = c
            .definition("io.k8s.apimachinery.pkg.runtime.RawExtension")
            .expect("RawExtension");
        assert_eq!(raw.shape(), Shape::Free);
        let time = c
            .definition("io.k8s.apimachinery.pkg.apis.meta.v1.Time")
            .expect("Time");
        assert_eq!(time.shape(), Shape::Scalar(Type::String));
        assert_eq!(time.format(), Some("date-time"));
    }
}
