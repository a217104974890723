//! Ownership made to fit the current schema (structured-merge-diff's
//! `typed/reconcile_schema.go`): where a manager owns parts of a list or map that the schema
//! now calls atomic (a CRD changed its `x-kubernetes-map-type` or `x-kubernetes-list-type`),
//! it owns the whole list or map instead.

use super::{Part, key_type, part};
use crate::registry::apply::path::{Path, PathElement};
use crate::registry::apply::schema::{TypeRef, TypedSchema, is_untyped_deduced_map};
use crate::registry::apply::set::Set;

/// The set reconciled with the schema, or `None` when it already fits.
pub fn reconcile(set: &Set, schema: &TypedSchema) -> Option<Set> {
    let mut w = Reconciler {
        schema,
        to_remove: Set::new(),
        to_add: Set::new(),
    };
    w.node(schema.root(), Some(set), false, &mut Path::default());
    if w.to_remove.is_empty() && w.to_add.is_empty() {
        return None;
    }
    Some(set.recursive_difference(&w.to_remove).union(&w.to_add))
}

struct Reconciler<'a> {
    schema: &'a TypedSchema,
    to_remove: Set,
    to_add: Set,
}

impl Reconciler<'_> {
    fn node(&mut self, tr: &TypeRef, set: Option<&Set>, is_atomic: bool, path: &mut Path) {
        let Some(atom) = self.schema.resolve(tr) else {
            return;
        };
        match part(&atom, tr, path) {
            Ok(Part::List(l)) => {
                if !is_atomic && l.atomic {
                    self.make_atomic(path);
                } else if let Some(s) = set {
                    self.children(s, path, |_| Some(l.element.clone()));
                }
            }
            Ok(Part::Map(m)) => {
                if is_untyped_deduced_map(m) {
                    return;
                }
                if !is_atomic && m.atomic {
                    if set.is_some_and(|s| s.size() > 0) {
                        self.make_atomic(path);
                    }
                } else if let Some(s) = set {
                    self.children(s, path, |pe| match pe {
                        PathElement::Field(name) => key_type(m, name),
                        _ => m.element.clone(),
                    });
                }
            }
            Ok(Part::Scalar(_)) | Err(_) => {}
        }
    }

    fn make_atomic(&mut self, path: &Path) {
        self.to_remove.insert(&path.0);
        self.to_add.insert(&path.0);
    }

    /// Visit the elements below a node: those only with children first, then the members.
    fn children(
        &mut self,
        set: &Set,
        path: &mut Path,
        type_of: impl Fn(&PathElement) -> Option<TypeRef>,
    ) {
        let mut visit = |w: &mut Self, pe: &PathElement, is_member: bool| {
            let Some(tr) = type_of(pe) else { return };
            let child = set.child(pe);
            path.0.push(pe.clone());
            w.node(&tr, child, is_member && child.is_none(), path);
            path.0.pop();
        };
        for (pe, _) in set.children() {
            if !set.has_member(pe) {
                visit(self, pe, false);
            }
        }
        for pe in set.members() {
            visit(self, pe, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::apply::test_types::widget;

    #[test]
    fn parts_of_an_atomic_map_become_the_map() {
        // .spec.selector is atomic in the widget schema
        let parts = Set::from_paths(&[
            Path::fields(&["spec", "selector", "a"]),
            Path::fields(&["spec", "replicas"]),
        ]);
        let got = reconcile(&parts, &widget()).expect("changes");
        let texts: Vec<String> = got.paths().iter().map(Path::to_string).collect();
        assert_eq!(texts, vec![".spec.replicas", ".spec.selector"]);
        let fits = Set::from_paths(&[
            Path::fields(&["spec", "selector"]),
            Path::fields(&["spec", "labels", "a"]),
        ]);
        assert!(reconcile(&fits, &widget()).is_none());
    }
}
