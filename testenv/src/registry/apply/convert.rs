//! OpenAPI schemas as merge types (kube-openapi's `pkg/schemaconv`, which kube-apiserver runs
//! over its OpenAPI definitions and over every CRD's schema): `type: object` is a map whose
//! named fields are the properties (other keys allowed when `additionalProperties` says so or
//! unknown fields are preserved), `type: array` a list (atomic unless
//! `x-kubernetes-list-type` says `set` or `map`, or a legacy
//! `x-kubernetes-patch-strategy: merge` makes it a set or a map list keyed by
//! `x-kubernetes-patch-merge-key`), scalars by type and format, and a schema without a type
//! untyped. `x-kubernetes-map-type: atomic` makes a map atomic, also on a reference.
//!
//! The conversion reads any schema representation through [`SchemaNode`]:
//! [`openapi_types`](super::openapi_types) implements it for OpenAPI JSON and
//! [`crd_types`](super::crd_types) for a custom resource's structural schema.

use std::collections::BTreeMap;

use serde_json::Value;

use super::schema::{
    Atom, Field, ListType, MapType, Relationship, Scalar, TypeRef, UNTYPED_ATOMIC, UNTYPED_DEDUCED,
};

/// `additionalProperties` of a schema.
#[derive(Debug)]
pub enum Additional<N> {
    /// Not given.
    Absent,
    /// `true` or `false`.
    Allows(bool),
    /// A schema for the other keys.
    Schema(N),
}

/// One schema node, as the conversion reads it.
pub trait SchemaNode<'a>: Copy {
    /// The name of the type this node refers to (the last segment of its `$ref`, or of the
    /// only `allOf` entry's), if it is a reference.
    fn reference(&self) -> Option<&'a str>;
    /// `type` (`""` when unset).
    fn type_name(&self) -> &'a str;
    /// `format` (`""` when unset).
    fn format(&self) -> &'a str;
    /// `properties`, by name.
    fn properties(&self) -> Vec<(&'a str, Self)>;
    /// `items` when it is one schema.
    fn items(&self) -> Option<Self>;
    /// `additionalProperties`.
    fn additional(&self) -> Additional<Self>;
    /// `default`.
    fn default_value(&self) -> Option<&'a Value>;
    /// `x-kubernetes-preserve-unknown-fields: true`.
    fn preserve_unknown_fields(&self) -> bool;
    /// `x-kubernetes-list-type`.
    fn list_type(&self) -> Option<&'a str>;
    /// `x-kubernetes-list-map-keys`.
    fn list_map_keys(&self) -> Vec<String>;
    /// `x-kubernetes-map-type`.
    fn map_type(&self) -> Option<&'a str>;
    /// `x-kubernetes-patch-strategy`.
    fn patch_strategy(&self) -> Option<&'a str>;
    /// `x-kubernetes-patch-merge-key`.
    fn patch_merge_key(&self) -> Option<&'a str>;
}

/// The type a node describes, as a named type's definition (`preserve`: unknown fields are
/// kept at this level, from an enclosing `x-kubernetes-preserve-unknown-fields`).
pub fn atom_of<'a, N: SchemaNode<'a>>(n: N, preserve: bool) -> Atom {
    let preserve = preserve || n.preserve_unknown_fields();
    match n.type_name() {
        "" => Atom {
            scalar: Some(Scalar::Untyped),
            list: Some(std::sync::Arc::new(list_of(n, preserve))),
            map: Some(std::sync::Arc::new(map_of(n, preserve))),
        },
        "object" => Atom::map(map_of(n, preserve)),
        "array" => Atom::list(list_of(n, preserve)),
        "integer" | "number" => Atom::scalar(Scalar::Numeric),
        "boolean" => Atom::scalar(Scalar::Boolean),
        "string" => match n.format() {
            "" | "byte" => Atom::scalar(Scalar::String),
            _ => Atom::scalar(Scalar::Untyped),
        },
        _ => Atom::scalar(Scalar::Untyped),
    }
}

/// A reference to the type of a property, item or map value: the named type it refers to
/// (with its `x-kubernetes-map-type`), or the node's own type inline.
pub fn type_ref_of<'a, N: SchemaNode<'a>>(n: N, preserve: bool) -> TypeRef {
    if let Some(name) = n.reference() {
        let rel = map_relationship(n);
        return TypeRef::Named(std::sync::Arc::from(name), rel);
    }
    TypeRef::inline(atom_of(n, preserve))
}

fn map_relationship<'a, N: SchemaNode<'a>>(n: N) -> Option<Relationship> {
    match n.map_type()? {
        "atomic" => Some(Relationship::Atomic),
        "granular" => Some(Relationship::Granular),
        _ => None,
    }
}

fn map_of<'a, N: SchemaNode<'a>>(n: N, preserve: bool) -> MapType {
    let props = n.properties();
    let fields: BTreeMap<String, Field> = props
        .iter()
        .map(|(name, p)| {
            (
                name.to_string(),
                Field {
                    ty: type_ref_of(*p, preserve),
                    default: p.default_value().cloned(),
                },
            )
        })
        .collect();
    let element = match n.additional() {
        Additional::Absent if preserve || props.is_empty() => Some(TypeRef::named(UNTYPED_DEDUCED)),
        Additional::Absent | Additional::Allows(false) => None,
        Additional::Allows(true) => Some(TypeRef::named(UNTYPED_DEDUCED)),
        Additional::Schema(s) => Some(type_ref_of(s, preserve)),
    };
    MapType {
        fields,
        element,
        atomic: map_relationship(n) == Some(Relationship::Atomic),
    }
}

fn list_of<'a, N: SchemaNode<'a>>(n: N, preserve: bool) -> ListType {
    let (atomic, keys) = list_relationship(n);
    let element = match n.items() {
        Some(items) => type_ref_of(items, preserve),
        None => TypeRef::named(UNTYPED_ATOMIC),
    };
    ListType {
        element,
        atomic,
        keys,
    }
}

/// Whether a list is atomic, and its keys (`x-kubernetes-list-type` first, then the legacy
/// patch strategy).
fn list_relationship<'a, N: SchemaNode<'a>>(n: N) -> (bool, Vec<String>) {
    if let Some(t) = n.list_type() {
        return match t {
            "set" => (false, Vec::new()),
            "map" => (false, n.list_map_keys()),
            _ => (true, Vec::new()),
        };
    }
    match n.patch_strategy() {
        Some("merge" | "merge,retainKeys") => (
            false,
            n.patch_merge_key()
                .map(|k| vec![k.to_string()])
                .unwrap_or_default(),
        ),
        _ => (true, Vec::new()),
    }
}
