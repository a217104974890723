//! Merge types of a custom resource, from its version's structural schema, as
//! apiextensions-apiserver builds them (`pkg/controller/openapi/builder/builder.go`, then
//! kube-openapi's `schemaconv`): the schema's properties plus `apiVersion` and `kind`
//! strings and `metadata` as the built-in ObjectMeta, at the root and in every
//! `x-kubernetes-embedded-resource`. Without a schema, everything is deduced.

use serde_json::Value;

use super::convert::{Additional, SchemaNode, atom_of};
use super::meta_types::{OBJECT_META, meta_types};
use super::schema::{TypeRef, TypedSchema};
use crate::registry::custom::schema::Schema;

/// A node of a structural schema, with the properties the CRD builder adds.
#[derive(Clone, Copy)]
enum CrdNode<'a> {
    /// A schema node; `native` when it is the root or an embedded resource.
    Schema(&'a Schema, bool),
    /// `metadata`: a reference to ObjectMeta.
    ObjectMeta,
    /// `apiVersion` and `kind`: strings.
    TypeMetaString,
}

impl<'a> SchemaNode<'a> for CrdNode<'a> {
    fn reference(&self) -> Option<&'a str> {
        matches!(self, CrdNode::ObjectMeta).then_some(OBJECT_META)
    }

    fn type_name(&self) -> &'a str {
        match self {
            CrdNode::Schema(s, _) => &s.type_,
            CrdNode::ObjectMeta => "object",
            CrdNode::TypeMetaString => "string",
        }
    }

    fn format(&self) -> &'a str {
        match self {
            CrdNode::Schema(s, _) => &s.format,
            _ => "",
        }
    }

    fn properties(&self) -> Vec<(&'a str, Self)> {
        let CrdNode::Schema(s, native) = *self else {
            return Vec::new();
        };
        let mut props: Vec<(&'a str, Self)> = s
            .properties
            .iter()
            .filter(|(k, _)| !native || !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
            .map(|(k, v)| (k.as_str(), CrdNode::Schema(v, v.embedded_resource)))
            .collect();
        if native {
            props.push(("apiVersion", CrdNode::TypeMetaString));
            props.push(("kind", CrdNode::TypeMetaString));
            props.push(("metadata", CrdNode::ObjectMeta));
        }
        props
    }

    fn items(&self) -> Option<Self> {
        match self {
            CrdNode::Schema(s, _) => s
                .items
                .as_deref()
                .map(|i| CrdNode::Schema(i, i.embedded_resource)),
            _ => None,
        }
    }

    fn additional(&self) -> Additional<Self> {
        let CrdNode::Schema(s, _) = self else {
            return Additional::Absent;
        };
        match &s.additional {
            None => Additional::Absent,
            Some(a) => match a.schema.as_deref() {
                Some(x) => Additional::Schema(CrdNode::Schema(x, x.embedded_resource)),
                None => Additional::Allows(a.allows),
            },
        }
    }

    fn default_value(&self) -> Option<&'a Value> {
        match self {
            CrdNode::Schema(s, _) => s.default.as_ref(),
            _ => None,
        }
    }

    fn preserve_unknown_fields(&self) -> bool {
        matches!(self, CrdNode::Schema(s, _) if s.preserve_unknown_fields)
    }

    fn list_type(&self) -> Option<&'a str> {
        match self {
            CrdNode::Schema(s, _) => s.list_type.as_deref(),
            _ => None,
        }
    }

    fn list_map_keys(&self) -> Vec<String> {
        match self {
            CrdNode::Schema(s, _) => s.list_map_keys.clone(),
            _ => Vec::new(),
        }
    }

    fn map_type(&self) -> Option<&'a str> {
        match self {
            CrdNode::Schema(s, _) => s.map_type.as_deref(),
            _ => None,
        }
    }

    fn patch_strategy(&self) -> Option<&'a str> {
        None
    }

    fn patch_merge_key(&self) -> Option<&'a str> {
        None
    }
}

/// The merge types of a custom resource version with this structural schema.
pub fn crd_schema(schema: Option<&Schema>) -> TypedSchema {
    let root = match schema {
        Some(s) => TypeRef::inline(atom_of(CrdNode::Schema(s, true), false)),
        None => return TypedSchema::deduced(),
    };
    TypedSchema::new(meta_types(), root)
}

#[cfg(test)]
#[path = "crd_types_tests.rs"]
mod tests;
