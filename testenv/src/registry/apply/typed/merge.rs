//! A configuration merged into a live object (structured-merge-diff's `typed/merge.go`):
//! the right side wins at every leaf (a scalar, an atomic list or map, an empty one); maps
//! merge key by key; associative lists merge item by item, in an order that keeps the right
//! side's items in its order and the left side's other items where they were.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::items::item_element;
use super::validate::scalar_error;
use super::{Part, TypeErrors, as_list, as_map, key_type, part, resolve};
use crate::registry::apply::path::{Path, PathElement};
use crate::registry::apply::schema::{ListType, MapType, TypeRef, TypedSchema};

static NULL: Value = Value::Null;

/// `rhs` merged into `lhs` (`null` when nothing remains).
pub fn merge(schema: &TypedSchema, lhs: &Value, rhs: &Value) -> Result<Value, TypeErrors> {
    let w = Merger { schema };
    let (out, errs) = w.node(schema.root(), Some(lhs), Some(rhs), &mut Path::default());
    errs.into_result().map(|()| out.unwrap_or(Value::Null))
}

struct Merger<'a> {
    schema: &'a TypedSchema,
}

/// The state of one node: whether it was merged as a leaf, and its result.
#[derive(Clone, Default)]
struct Node {
    in_leaf: bool,
    out: Option<Value>,
}

impl Node {
    fn leaf(&mut self, lhs: Option<&Value>, rhs: Option<&Value>) {
        if self.in_leaf {
            return;
        }
        self.in_leaf = true;
        self.out = rhs.or(lhs).cloned();
    }
}

impl Merger<'_> {
    fn node(
        &self,
        tr: &TypeRef,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        path: &mut Path,
    ) -> (Option<Value>, TypeErrors) {
        if lhs.is_none() && rhs.is_none() {
            return (
                None,
                TypeErrors::at(path, "at least one of lhs and rhs must be provided"),
            );
        }
        let atom = match resolve(self.schema, tr, path) {
            Ok(a) => a,
            Err(e) => return (None, e),
        };
        let (alhs, arhs) = (atom.deduce(lhs), atom.deduce(rhs));
        let mut node = Node::default();
        let mut errs = TypeErrors::default();
        if rhs.is_none() {
            errs.extend(self.handle(&alhs, tr, lhs, rhs, &mut node, path));
        } else if lhs.is_none() || alhs.same_shape(&arhs) {
            errs.extend(self.handle(&arhs, tr, lhs, rhs, &mut node, path));
        } else {
            // the two sides are of different kinds: the left side is walked for its errors
            // only, the right side makes the result
            let mut discarded = node.clone();
            errs.extend(self.handle(&alhs, tr, lhs, rhs, &mut discarded, path));
            errs.extend(self.handle(&arhs, tr, lhs, rhs, &mut node, path));
        }
        (node.out, errs)
    }

    fn handle(
        &self,
        atom: &crate::registry::apply::schema::Atom,
        tr: &TypeRef,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        node: &mut Node,
        path: &mut Path,
    ) -> TypeErrors {
        match part(atom, tr, path) {
            Ok(Part::Map(m)) => self.map(m, lhs, rhs, node, path),
            Ok(Part::List(l)) => self.list(l, lhs, rhs, node, path),
            Ok(Part::Scalar(s)) => {
                let l = scalar_error(s, lhs, "lhs: ");
                let r = scalar_error(s, rhs, "rhs: ");
                if let (Some(l), Some(r)) = (l, r) {
                    let mut errs = TypeErrors::at(path, l);
                    errs.extend(TypeErrors::at(path, r));
                    return errs;
                }
                node.leaf(lhs, rhs);
                TypeErrors::default()
            }
            Err(e) => e,
        }
    }

    fn list(
        &self,
        t: &ListType,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        node: &mut Node,
        path: &mut Path,
    ) -> TypeErrors {
        let (l, r) = (as_list(lhs), as_list(rhs));
        let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
        if t.atomic || empty {
            node.leaf(lhs, rhs);
            return TypeErrors::default();
        }
        let empty_list = Vec::new();
        let (l, r) = (l.unwrap_or(&empty_list), r.unwrap_or(&empty_list));
        match self.list_items(t, l, r, path) {
            Ok(out) => {
                if !out.is_empty() {
                    node.out = Some(Value::Array(out));
                }
                TypeErrors::default()
            }
            Err(e) => e,
        }
    }

    /// Item elements and, by element, the item (null for an element that repeats).
    #[allow(clippy::type_complexity)]
    fn index<'v>(
        &self,
        t: &ListType,
        items: &'v [Value],
        allow_duplicates: bool,
        path: &Path,
        errs: &mut TypeErrors,
    ) -> (Vec<PathElement>, BTreeMap<PathElement, &'v Value>) {
        let mut pes = Vec::with_capacity(items.len());
        let mut observed: BTreeMap<PathElement, &'v Value> = BTreeMap::new();
        for (i, child) in items.iter().enumerate() {
            let pe = match item_element(self.schema, t, child) {
                Ok(pe) => pe,
                Err(e) => {
                    errs.extend(TypeErrors::at(path, format!("element {i}: {e}")));
                    continue;
                }
            };
            if observed.contains_key(&pe) {
                if !allow_duplicates {
                    errs.extend(TypeErrors::at(
                        path,
                        format!("duplicate entries for key {pe}"),
                    ));
                    continue;
                }
                observed.insert(pe.clone(), &NULL);
            } else {
                observed.insert(pe.clone(), child);
            }
            pes.push(pe);
        }
        (pes, observed)
    }

    fn list_items(
        &self,
        t: &ListType,
        lhs: &[Value],
        rhs: &[Value],
        path: &mut Path,
    ) -> Result<Vec<Value>, TypeErrors> {
        let mut errs = TypeErrors::default();
        let (rhs_pes, observed_rhs) = self.index(t, rhs, false, path, &mut errs);
        let (lhs_pes, observed_lhs) = self.index(t, lhs, true, path, &mut errs);
        if !errs.is_empty() {
            return Err(errs);
        }
        // the items both sides have, in the right side's order
        let mut shared = rhs_pes
            .iter()
            .filter(|pe| observed_lhs.contains_key(*pe))
            .collect::<Vec<_>>()
            .into_iter();
        let mut next_shared = shared.next();
        let mut merged_rhs: Vec<&PathElement> = Vec::new();
        let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
        let (mut li, mut ri) = (0, 0);
        while li < lhs_pes.len() || ri < rhs_pes.len() {
            if li < lhs_pes.len() && ri < rhs_pes.len() {
                let pe = &lhs_pes[li];
                if *pe == rhs_pes[ri] {
                    merged_rhs.push(pe);
                    let l = observed_lhs.get(pe).copied();
                    let r = observed_rhs.get(pe).copied();
                    out.extend(self.item(t, pe, l, r, path));
                    li += 1;
                    ri += 1;
                    next_shared = shared.next();
                    continue;
                }
                // a shared item the right side wants later: skip it here
                if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                    li += 1;
                    continue;
                }
            }
            if li < lhs_pes.len() {
                let pe = &lhs_pes[li];
                if !observed_rhs.contains_key(pe) {
                    out.extend(self.item(t, pe, Some(&lhs[li]), None, path));
                    li += 1;
                    continue;
                } else if merged_rhs.contains(&pe) {
                    li += 1;
                }
            }
            if ri < rhs_pes.len() {
                let pe = &rhs_pes[ri];
                merged_rhs.push(pe);
                let l = observed_lhs.get(pe).copied();
                let r = observed_rhs.get(pe).copied();
                out.extend(self.item(t, pe, l, r, path));
                ri += 1;
                if next_shared == Some(pe) {
                    next_shared = shared.next();
                }
            }
        }
        Ok(out)
    }

    /// One list item merged; its errors are dropped, as upstream drops them.
    fn item(
        &self,
        t: &ListType,
        pe: &PathElement,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        path: &mut Path,
    ) -> Option<Value> {
        path.0.push(pe.clone());
        let (out, _errs) = self.node(&t.element, lhs, rhs, path);
        path.0.pop();
        out
    }

    fn map(
        &self,
        t: &MapType,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        node: &mut Node,
        path: &mut Path,
    ) -> TypeErrors {
        let (l, r) = (as_map(lhs), as_map(rhs));
        let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
        if t.atomic || empty {
            node.leaf(lhs, rhs);
            return TypeErrors::default();
        }
        let mut keys: Vec<&String> = l.into_iter().flat_map(|m| m.keys()).collect();
        keys.extend(r.into_iter().flat_map(|m| m.keys()));
        keys.sort();
        keys.dedup();
        let mut out = Map::new();
        let mut errs = TypeErrors::default();
        for key in keys {
            path.0.push(PathElement::field(key.as_str()));
            let lv = l.and_then(|m| m.get(key));
            let rv = r.and_then(|m| m.get(key));
            match key_type(t, key) {
                Some(tr) => {
                    let (v, e) = self.node(&tr, lv, rv, path);
                    errs.extend(e);
                    if let Some(v) = v {
                        out.insert(key.clone(), v);
                    }
                }
                None => errs.extend(TypeErrors::at(path, "field not declared in schema")),
            }
            path.0.pop();
        }
        if !out.is_empty() {
            node.out = Some(Value::Object(out));
        }
        errs
    }
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
