//! The fields that differ between two objects (structured-merge-diff's `typed/compare.go`):
//! added (only the right side has them), removed (only the left side), modified (a leaf whose
//! value changed). A field added or removed as a whole is listed with everything below it; an
//! item that repeats in a list is compared as a whole.

use std::collections::BTreeMap;

use serde_json::Value;

use super::items::item_element;
use super::validate::scalar_error;
use super::{Part, TypeErrors, as_list, as_map, key_type, part, resolve};
use crate::registry::apply::path::{Path, PathElement};
use crate::registry::apply::schema::{Atom, ListType, MapType, TypeRef, TypedSchema};
use crate::registry::apply::set::Set;
use crate::registry::apply::value::equals;

/// The difference between two objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Fields only the left side has.
    pub removed: Set,
    /// Leaves whose values differ.
    pub modified: Set,
    /// Fields only the right side has.
    pub added: Set,
}

impl Comparison {
    /// Whether the objects are the same.
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }

    /// The comparison without `fields` and everything below them.
    pub fn exclude(self, fields: &Set) -> Comparison {
        Comparison {
            removed: self.removed.recursive_difference(fields),
            modified: self.modified.recursive_difference(fields),
            added: self.added.recursive_difference(fields),
        }
    }
}

/// How `rhs` differs from `lhs`.
pub fn compare(schema: &TypedSchema, lhs: &Value, rhs: &Value) -> Result<Comparison, TypeErrors> {
    let mut w = Comparer {
        schema,
        cmp: Comparison::default(),
    };
    let errs = w.node(schema.root(), Some(lhs), Some(rhs), &mut Path::default());
    errs.into_result().map(|()| w.cmp)
}

struct Comparer<'a> {
    schema: &'a TypedSchema,
    cmp: Comparison,
}

impl Comparer<'_> {
    fn node(
        &mut self,
        tr: &TypeRef,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        path: &mut Path,
    ) -> TypeErrors {
        if lhs.is_none() && rhs.is_none() {
            return TypeErrors::at(path, "at least one of lhs and rhs must be provided");
        }
        let atom = match resolve(self.schema, tr, path) {
            Ok(a) => a,
            Err(e) => return e,
        };
        let (alhs, arhs) = (atom.deduce(lhs), atom.deduce(rhs));
        let mut in_leaf = false;
        let mut errs = TypeErrors::default();
        if rhs.is_none() {
            errs.extend(self.handle(&alhs, tr, lhs, rhs, &mut in_leaf, path));
        } else if lhs.is_none() || alhs.same_shape(&arhs) {
            errs.extend(self.handle(&arhs, tr, lhs, rhs, &mut in_leaf, path));
        } else {
            let mut other_leaf = in_leaf;
            errs.extend(self.handle(&alhs, tr, lhs, rhs, &mut other_leaf, path));
            errs.extend(self.handle(&arhs, tr, lhs, rhs, &mut in_leaf, path));
        }
        if !in_leaf {
            if lhs.is_none() {
                self.cmp.added.insert(&path.0);
            } else if rhs.is_none() {
                self.cmp.removed.insert(&path.0);
            }
        }
        errs
    }

    fn leaf(&mut self, lhs: Option<&Value>, rhs: Option<&Value>, in_leaf: &mut bool, path: &Path) {
        if *in_leaf {
            return;
        }
        *in_leaf = true;
        match (lhs, rhs) {
            (None, _) => self.cmp.added.insert(&path.0),
            (_, None) => self.cmp.removed.insert(&path.0),
            (Some(l), Some(r)) if !equals(l, r) => self.cmp.modified.insert(&path.0),
            _ => {}
        }
    }

    fn handle(
        &mut self,
        atom: &Atom,
        tr: &TypeRef,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        in_leaf: &mut bool,
        path: &mut Path,
    ) -> TypeErrors {
        match part(atom, tr, path) {
            Ok(Part::Map(m)) => self.map(m, lhs, rhs, in_leaf, path),
            Ok(Part::List(l)) => self.list(l, lhs, rhs, in_leaf, path),
            Ok(Part::Scalar(s)) => {
                let l = scalar_error(s, lhs, "lhs: ");
                let r = scalar_error(s, rhs, "rhs: ");
                if let (Some(l), Some(r)) = (l, r) {
                    let mut errs = TypeErrors::at(path, l);
                    errs.extend(TypeErrors::at(path, r));
                    return errs;
                }
                self.leaf(lhs, rhs, in_leaf, path);
                TypeErrors::default()
            }
            Err(e) => e,
        }
    }

    fn list(
        &mut self,
        t: &ListType,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        in_leaf: &mut bool,
        path: &mut Path,
    ) -> TypeErrors {
        let (l, r) = (as_list(lhs), as_list(rhs));
        let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
        if t.atomic || empty {
            self.leaf(lhs, rhs, in_leaf, path);
            return TypeErrors::default();
        }
        let none = Vec::new();
        self.list_items(t, l.unwrap_or(&none), r.unwrap_or(&none), path)
    }

    fn list_items(
        &mut self,
        t: &ListType,
        lhs: &[Value],
        rhs: &[Value],
        path: &mut Path,
    ) -> TypeErrors {
        let mut errs = TypeErrors::default();
        // every element once, the left side's first, with the items each side has for it
        let mut order: Vec<PathElement> = Vec::new();
        let mut values: BTreeMap<PathElement, (Vec<&Value>, Vec<&Value>)> = BTreeMap::new();
        for (side, items) in [(0, lhs), (1, rhs)] {
            for (i, child) in items.iter().enumerate() {
                let pe = match item_element(self.schema, t, child) {
                    Ok(pe) => pe,
                    Err(e) => {
                        errs.extend(TypeErrors::at(path, format!("element {i}: {e}")));
                        continue;
                    }
                };
                let entry = values.entry(pe.clone()).or_insert_with(|| {
                    order.push(pe);
                    (Vec::new(), Vec::new())
                });
                if side == 0 {
                    entry.0.push(child);
                } else {
                    entry.1.push(child);
                }
            }
        }
        for pe in order {
            let (l, r) = &values[&pe];
            let item_path = path.child(pe.clone());
            match (l.len(), r.len()) {
                (0, 0) => return errs,
                (0..=1, 0..=1) => {
                    errs.extend(self.item(t, &pe, l.first().copied(), r.first().copied(), path))
                }
                (2.., 2..) => {
                    let same = l.len() == r.len() && l.iter().zip(r).all(|(a, b)| equals(a, b));
                    if !same {
                        self.cmp.modified.insert(&item_path.0);
                    }
                }
                (2.., _) => {
                    if let Some(r0) = r.first() {
                        errs.extend(self.item(t, &pe, None, Some(r0), path));
                    }
                    self.cmp.removed.insert(&item_path.0);
                }
                (_, _) => {
                    if let Some(l0) = l.first() {
                        errs.extend(self.item(t, &pe, Some(l0), None, path));
                    }
                    self.cmp.added.insert(&item_path.0);
                }
            }
        }
        errs
    }

    fn item(
        &mut self,
        t: &ListType,
        pe: &PathElement,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        path: &mut Path,
    ) -> TypeErrors {
        path.0.push(pe.clone());
        let errs = self.node(&t.element, lhs, rhs, path);
        path.0.pop();
        errs
    }

    fn map(
        &mut self,
        t: &MapType,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        in_leaf: &mut bool,
        path: &mut Path,
    ) -> TypeErrors {
        let (l, r) = (as_map(lhs), as_map(rhs));
        let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
        if t.atomic || empty {
            self.leaf(lhs, rhs, in_leaf, path);
            return TypeErrors::default();
        }
        let mut keys: Vec<&String> = l.into_iter().flat_map(|m| m.keys()).collect();
        keys.extend(r.into_iter().flat_map(|m| m.keys()));
        keys.sort();
        keys.dedup();
        let mut errs = TypeErrors::default();
        for key in keys {
            path.0.push(PathElement::field(key.as_str()));
            let lv = l.and_then(|m| m.get(key));
            let rv = r.and_then(|m| m.get(key));
            match key_type(t, key) {
                Some(tr) => errs.extend(self.node(&tr, lv, rv, path)),
                None => errs.extend(TypeErrors::at(path, "schema error: invalid atom: inlined")),
            }
            path.0.pop();
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::apply::test_types::widget;
    use serde_json::json;

    fn texts(s: &Set) -> Vec<String> {
        s.paths().iter().map(Path::to_string).collect()
    }

    #[test]
    fn added_modified_removed() {
        let old = json!({"spec": {"replicas": 1, "note": "x", "labels": {"a": "1"}, "ports": [{"name": "a", "port": 1}]}});
        let new = json!({"spec": {"replicas": 2, "labels": {"a": "1", "b": "2"}, "ports": [{"name": "a", "port": 1}, {"name": "b"}], "args": ["z"]}});
        let c = compare(&widget(), &old, &new).expect("compares");
        assert_eq!(texts(&c.modified), vec![".spec.replicas"]);
        assert_eq!(texts(&c.removed), vec![".spec.note"]);
        assert_eq!(
            texts(&c.added),
            vec![
                ".spec.args",
                ".spec.labels.b",
                ".spec.ports[name=\"b\"]",
                ".spec.ports[name=\"b\"].name"
            ]
        );
        assert!(compare(&widget(), &old, &old).expect("compares").is_same());
        // a whole struct added lists itself and its fields
        let c =
            compare(&widget(), &json!({}), &json!({"spec": {"replicas": 1}})).expect("compares");
        assert_eq!(texts(&c.added), vec![".spec", ".spec.replicas"]);
        // 1 and 1.0 are the same value
        let c = compare(
            &widget(),
            &json!({"spec": {"replicas": 1}}),
            &json!({"spec": {"replicas": 1.0}}),
        );
        assert!(c.expect("compares").is_same());
    }

    #[test]
    fn repeated_items_compare_as_a_whole() {
        let two = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}});
        let one = json!({"spec": {"ports": [{"name": "a", "port": 3}]}});
        let c = compare(&widget(), &two, &one).expect("compares");
        assert_eq!(texts(&c.removed), vec![".spec.ports[name=\"a\"]"]);
        assert_eq!(
            texts(&c.added),
            vec![
                ".spec.ports[name=\"a\"]",
                ".spec.ports[name=\"a\"].name",
                ".spec.ports[name=\"a\"].port"
            ]
        );
        let c = compare(&widget(), &two, &two).expect("compares");
        assert!(c.is_same());
    }
}
