//! The walks over an object and its type (structured-merge-diff's `typed` package), each a
//! pure function of a [`TypedSchema`] and JSON values:
//!
//! - [`validate()`]: the value fits the type (an applied configuration may not repeat a key);
//! - [`to_set()`]: the fields an object sets ([`to_set::ensure_named_fields`] adds a
//!   struct's named fields as members);
//! - [`merge()`]: a configuration merged into a live object;
//! - [`compare()`]: the fields added, modified and removed between two objects;
//! - [`remove()`]: an object without (or with only) a set of fields;
//! - [`reconcile()`]: ownership made to fit a schema that turned parts atomic.
//!
//! [`items`] turns list items into path elements for all of them.

pub mod compare;
pub mod items;
pub mod merge;
pub mod reconcile;
pub mod remove;
pub mod to_set;
pub mod validate;

use std::fmt;

use serde_json::{Map, Value};

pub use compare::{Comparison, compare};
pub use merge::merge;
pub use reconcile::reconcile;
pub use remove::{extract, remove};
pub use to_set::to_set;
pub use validate::validate;

use super::path::Path;
use super::schema::{Atom, MapType, TypeRef, TypedSchema};

/// One error of a walk, at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    /// Where (`.spec.containers`), empty at the root.
    pub path: String,
    /// What.
    pub message: String,
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The errors of a walk, printed as upstream's `ValidationErrors`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeErrors(pub Vec<TypeError>);

impl TypeErrors {
    fn at(path: &Path, message: impl Into<String>) -> Self {
        TypeErrors(vec![TypeError {
            path: path.to_string(),
            message: message.into(),
        }])
    }

    fn extend(&mut self, other: TypeErrors) {
        self.0.extend(other.0);
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn into_result(self) -> Result<(), TypeErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl fmt::Display for TypeErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.len() == 1 {
            return write!(f, "{}", self.0[0]);
        }
        write!(f, "errors:")?;
        for e in &self.0 {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TypeErrors {}

/// The items of a list value (`None` for anything else, null included).
fn as_list(v: Option<&Value>) -> Option<&Vec<Value>> {
    match v {
        Some(Value::Array(a)) => Some(a),
        _ => None,
    }
}

/// The entries of a map value (`None` for anything else, null included).
fn as_map(v: Option<&Value>) -> Option<&Map<String, Value>> {
    match v {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// The type of a map's key: its named field's, else the element type.
fn key_type(m: &MapType, key: &str) -> Option<TypeRef> {
    m.fields
        .get(key)
        .map(|f| f.ty.clone())
        .or_else(|| m.element.clone())
}

/// Resolve a reference, or the error upstream gives for an unknown type.
fn resolve(schema: &TypedSchema, tr: &TypeRef, path: &Path) -> Result<Atom, TypeErrors> {
    schema.resolve(tr).ok_or_else(|| {
        let name = match tr {
            TypeRef::Named(n, _) => n.to_string(),
            TypeRef::Inline(_) => "inlined type".to_string(),
        };
        TypeErrors::at(
            path,
            format!("schema error: no type found matching: {name}"),
        )
    })
}

/// Which part of an atom a walk handles: the map first, then the scalar, then the list.
enum Part<'a> {
    Map(&'a MapType),
    Scalar(super::schema::Scalar),
    List(&'a super::schema::ListType),
}

fn part<'a>(atom: &'a Atom, tr: &TypeRef, path: &Path) -> Result<Part<'a>, TypeErrors> {
    if let Some(m) = &atom.map {
        return Ok(Part::Map(m));
    }
    if let Some(s) = atom.scalar {
        return Ok(Part::Scalar(s));
    }
    if let Some(l) = &atom.list {
        return Ok(Part::List(l));
    }
    let name = match tr {
        TypeRef::Named(n, _) => format!("named type: {n}"),
        TypeRef::Inline(_) => "inlined".to_string(),
    };
    Err(TypeErrors::at(
        path,
        format!("schema error: invalid atom: {name}"),
    ))
}
