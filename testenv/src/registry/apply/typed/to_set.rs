//! The fields an object sets (structured-merge-diff's `typed/tofieldset.go`): every scalar,
//! every atomic list or map as one field, every item of an associative list, every map
//! entry that is null, empty, or a key of a map type (not a struct's named field). A
//! non-empty struct field is only the parent of its fields, and an item that appears twice
//! in a list is one field whose contents nobody can own.
//!
//! [`ensure_named_fields`] adds the named fields of structs that have members below them,
//! which pruning needs so that removing a field's last part removes the field.

use serde_json::Value;

use super::items::item_element;
use super::{Part, TypeErrors, key_type, part, resolve};
use crate::registry::apply::path::{Path, PathElement};
use crate::registry::apply::schema::{ListType, MapType, TypeRef, TypedSchema};
use crate::registry::apply::set::Set;

/// The set of fields `value` sets.
pub fn to_set(schema: &TypedSchema, value: &Value) -> Result<Set, TypeErrors> {
    let mut w = Walker {
        schema,
        set: Set::new(),
        path: Path::default(),
    };
    let errs = w.node(schema.root(), value);
    errs.into_result().map(|()| w.set)
}

struct Walker<'a> {
    schema: &'a TypedSchema,
    set: Set,
    path: Path,
}

impl Walker<'_> {
    fn node(&mut self, tr: &TypeRef, v: &Value) -> TypeErrors {
        let atom = match resolve(self.schema, tr, &self.path) {
            Ok(a) => a.deduce(Some(v)),
            Err(e) => return e,
        };
        match part(&atom, tr, &self.path) {
            Ok(Part::Map(m)) => self.map(m, v),
            Ok(Part::Scalar(_)) => {
                self.set.insert(&self.path.0);
                TypeErrors::default()
            }
            Ok(Part::List(l)) => self.list(l, v),
            Err(e) => e,
        }
    }

    fn list(&mut self, t: &ListType, v: &Value) -> TypeErrors {
        if t.atomic {
            self.set.insert(&self.path.0);
            return TypeErrors::default();
        }
        let Value::Array(items) = v else {
            return TypeErrors::default();
        };
        let elements: Vec<Option<PathElement>> = items
            .iter()
            .map(|x| item_element(self.schema, t, x).ok())
            .collect();
        // an item that appears more than once is a field of its own, not descended into
        let mut duplicates: Vec<&PathElement> = Vec::new();
        for (i, pe) in elements.iter().enumerate() {
            let Some(pe) = pe else { continue };
            if !duplicates.contains(&pe) && elements[..i].iter().flatten().any(|q| q == pe) {
                duplicates.push(pe);
                let mut p = self.path.0.clone();
                p.push(pe.clone());
                self.set.insert(&p);
            }
        }
        let mut errs = TypeErrors::default();
        for (pe, child) in elements.iter().zip(items) {
            let Some(pe) = pe else { continue };
            if duplicates.contains(&pe) {
                continue;
            }
            self.path.0.push(pe.clone());
            errs.extend(self.node(&t.element, child));
            self.set.insert(&self.path.0);
            self.path.0.pop();
        }
        errs
    }

    fn map(&mut self, t: &MapType, v: &Value) -> TypeErrors {
        if t.atomic {
            self.set.insert(&self.path.0);
            return TypeErrors::default();
        }
        let Value::Object(m) = v else {
            return TypeErrors::default();
        };
        let mut errs = TypeErrors::default();
        for (key, child) in m {
            self.path.0.push(PathElement::field(key.as_str()));
            if let Some(tr) = key_type(t, key) {
                errs.extend(self.node(&tr, child));
            }
            let empty = match child {
                Value::Null => true,
                Value::Object(c) => c.is_empty(),
                _ => false,
            };
            if empty || !t.fields.contains_key(key) {
                self.set.insert(&self.path.0);
            }
            self.path.0.pop();
        }
        errs
    }
}

/// `set` with the named fields of structs added as members wherever the set has members
/// below them (upstream's `EnsureNamedFieldsAreMembers`).
pub fn ensure_named_fields(set: &Set, schema: &TypedSchema, tr: Option<&TypeRef>) -> Set {
    let atom = tr.and_then(|tr| schema.resolve(tr));
    let map = atom.as_ref().and_then(|a| a.map.clone());
    let list = atom.as_ref().and_then(|a| a.list.clone());
    let mut members: Vec<PathElement> = set.members().to_vec();
    let mut children = Vec::with_capacity(set.children().len());
    for (pe, child) in set.children() {
        let child_type = match pe {
            PathElement::Field(name) => map.as_ref().and_then(|m| key_type(m, name)),
            PathElement::Key(_) => list.as_ref().map(|l| l.element.clone()),
            _ => None,
        };
        if let (PathElement::Field(name), Some(m)) = (pe, &map)
            && m.fields.contains_key(name)
        {
            members.push(pe.clone());
        }
        children.push((
            pe.clone(),
            ensure_named_fields(child, schema, child_type.as_ref()),
        ));
    }
    members.sort();
    members.dedup();
    Set::from_parts(members, children)
}

#[cfg(test)]
#[path = "to_set_tests.rs"]
mod tests;
