//! Sets of field paths (structured-merge-diff's `fieldpath/set.go`): a tree whose nodes hold
//! the member elements at that level and the child sets below. A parent is not implied by
//! its children: `.spec.replicas` alone does not make `.spec` a member.
//!
//! The algebra follows upstream's, including its asymmetries: [`Set::difference`] removes
//! members one by one (`parent - child = parent`, `child - parent = {}`), while
//! [`Set::recursive_difference`] removes a member together with everything below it.

use std::cmp::Ordering;

use super::path::{Path, PathElement};

/// A set of field paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    /// The elements that are members at this level, sorted.
    members: Vec<PathElement>,
    /// The sets below each element that has members below it, sorted by element.
    children: Vec<(PathElement, Set)>,
}

fn find_child(children: &[(PathElement, Set)], pe: &PathElement) -> Result<usize, usize> {
    children.binary_search_by(|(c, _)| c.cmp(pe))
}

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Set::default()
    }

    /// A set of these paths.
    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Self {
        let mut s = Set::new();
        for p in paths {
            s.insert(&p.0);
        }
        s
    }

    /// The member elements at this level, in order.
    pub fn members(&self) -> &[PathElement] {
        &self.members
    }

    /// The child sets at this level, in order of their elements.
    pub fn children(&self) -> &[(PathElement, Set)] {
        &self.children
    }

    /// Add a path (not its parents). The empty path is the whole object, which nobody owns.
    pub fn insert(&mut self, path: &[PathElement]) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut node = self;
        for pe in parents {
            node = node.descend(pe);
        }
        node.insert_member(last.clone());
    }

    fn insert_member(&mut self, pe: PathElement) {
        if let Err(i) = self.members.binary_search(&pe) {
            self.members.insert(i, pe);
        }
    }

    /// The child set under `pe`, created empty when missing.
    fn descend(&mut self, pe: &PathElement) -> &mut Set {
        let i = match find_child(&self.children, pe) {
            Ok(i) => i,
            Err(i) => {
                self.children.insert(i, (pe.clone(), Set::new()));
                i
            }
        };
        &mut self.children[i].1
    }

    /// Whether `pe` is a member at this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.binary_search(pe).is_ok()
    }

    /// The child set under `pe`, if any.
    pub fn child(&self, pe: &PathElement) -> Option<&Set> {
        find_child(&self.children, pe)
            .ok()
            .map(|i| &self.children[i].1)
    }

    /// Whether the path is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        let Some((last, parents)) = path.split_last() else {
            return false;
        };
        let mut node = self;
        for pe in parents {
            match node.child(pe) {
                Some(c) => node = c,
                None => return false,
            }
        }
        node.has_member(last)
    }

    /// The paths below `pe`, without it (`WithPrefix`).
    pub fn with_prefix(&self, pe: &PathElement) -> Set {
        self.child(pe).cloned().unwrap_or_default()
    }

    /// Whether the set has no member at any depth.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.iter().all(|(_, c)| c.is_empty())
    }

    /// The number of members at every depth.
    pub fn size(&self) -> usize {
        self.members.len() + self.children.iter().map(|(_, c)| c.size()).sum::<usize>()
    }

    /// Every member path, in upstream's order (a level's members, then its children's).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(Path(p));
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The paths in either set.
    pub fn union(&self, other: &Set) -> Set {
        Set {
            members: merge_sorted(&self.members, &other.members),
            children: zip_children(&self.children, &other.children, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.union(b)),
                (Some(x), None) | (None, Some(x)) => Some(x.clone()),
                (None, None) => None,
            }),
        }
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        Set {
            members: self
                .members
                .iter()
                .filter(|m| other.has_member(m))
                .cloned()
                .collect(),
            children: zip_children(&self.children, &other.children, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.intersection(b)).filter(|s| !s.is_empty()),
                _ => None,
            }),
        }
    }

    /// The paths of this set that `other` does not have, member by member.
    pub fn difference(&self, other: &Set) -> Set {
        Set {
            members: self
                .members
                .iter()
                .filter(|m| !other.has_member(m))
                .cloned()
                .collect(),
            children: zip_children(&self.children, &other.children, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.difference(b)).filter(|s| !s.is_empty()),
                (Some(a), None) => Some(a.clone()),
                _ => None,
            }),
        }
    }

    /// The paths of this set that neither are in `other` nor lie below a member of it.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        Set {
            members: self
                .members
                .iter()
                .filter(|m| !other.has_member(m))
                .cloned()
                .collect(),
            children: self
                .children
                .iter()
                .filter(|(pe, _)| !other.has_member(pe))
                .filter_map(|(pe, c)| match other.child(pe) {
                    Some(o) => {
                        let d = c.recursive_difference(o);
                        (!d.is_empty()).then(|| (pe.clone(), d))
                    }
                    None => Some((pe.clone(), c.clone())),
                })
                .collect(),
        }
    }

    /// The members with no member below them.
    pub fn leaves(&self) -> Set {
        Set {
            members: self
                .members
                .iter()
                .filter(|m| self.child(m).is_none())
                .cloned()
                .collect(),
            children: self
                .children
                .iter()
                .map(|(pe, c)| (pe.clone(), c.leaves()))
                .collect(),
        }
    }

    /// Build a set level from parts already sorted and unique.
    pub(crate) fn from_parts(members: Vec<PathElement>, children: Vec<(PathElement, Set)>) -> Set {
        Set { members, children }
    }
}

fn merge_sorted(a: &[PathElement], b: &[PathElement]) -> Vec<PathElement> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                out.push(a[i].clone());
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Walk two sorted child lists together; `f` decides each element's set (or drops it).
fn zip_children(
    a: &[(PathElement, Set)],
    b: &[(PathElement, Set)],
    f: impl Fn(Option<&Set>, Option<&Set>) -> Option<Set>,
) -> Vec<(PathElement, Set)> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let ord = match (a.get(i), b.get(j)) {
            (Some((x, _)), Some((y, _))) => x.cmp(y),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        let (pe, set) = match ord {
            Ordering::Less => {
                i += 1;
                (&a[i - 1].0, f(Some(&a[i - 1].1), None))
            }
            Ordering::Greater => {
                j += 1;
                (&b[j - 1].0, f(None, Some(&b[j - 1].1)))
            }
            Ordering::Equal => {
                i += 1;
                j += 1;
                (&a[i - 1].0, f(Some(&a[i - 1].1), Some(&b[j - 1].1)))
            }
        };
        if let Some(s) = set {
            out.push((pe.clone(), s));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn p(parts: &[&str]) -> Path {
        Path::fields(parts)
    }

    fn set(paths: &[&[&str]]) -> Set {
        let ps: Vec<Path> = paths.iter().map(|x| p(x)).collect();
        Set::from_paths(&ps)
    }

    fn texts(s: &Set) -> Vec<String> {
        s.paths().iter().map(Path::to_string).collect()
    }

    #[test]
    fn parents_are_not_implied() {
        let s = set(&[&["spec", "replicas"]]);
        assert!(s.has(&p(&["spec", "replicas"]).0));
        assert!(!s.has(&p(&["spec"]).0));
        assert!(!s.has(&[]));
        assert_eq!(s.size(), 1);
    }

    #[test]
    fn difference_is_member_wise_recursive_difference_is_not() {
        let parent = set(&[&["a"], &["a", "b"]]);
        let child = set(&[&["a", "b", "c"]]);
        // parent - child = parent; child - parent = {} only recursively
        assert_eq!(parent.difference(&child), parent);
        assert_eq!(texts(&child.difference(&set(&[&["a"]]))), vec![".a.b.c"]);
        assert!(child.recursive_difference(&set(&[&["a", "b"]])).is_empty());
        let s = set(&[&["a", "x"], &["a", "b", "c"]]);
        assert_eq!(
            texts(&s.recursive_difference(&set(&[&["a", "b"]]))),
            vec![".a.x"]
        );
    }

    #[test]
    fn leaves_and_order() {
        let s = set(&[&["b"], &["a"], &["a", "c"], &["a", "b"], &["a", "b", "d"]]);
        assert_eq!(texts(&s), vec![".a", ".b", ".a.b", ".a.c", ".a.b.d"]);
        assert_eq!(texts(&s.leaves()), vec![".b", ".a.c", ".a.b.d"]);
        let mut keyed = Set::new();
        let item = PathElement::key(vec![("name".into(), json!("c"))]);
        keyed.insert(&[PathElement::field("list"), item.clone()]);
        keyed.insert(&[
            PathElement::field("list"),
            item,
            PathElement::field("image"),
        ]);
        assert_eq!(
            texts(&keyed),
            vec![".list[name=\"c\"]", ".list[name=\"c\"].image"]
        );
    }

    fn arb_element() -> impl Strategy<Value = PathElement> {
        prop_oneof![
            "[a-d]".prop_map(PathElement::Field),
            (0i64..3).prop_map(|v| PathElement::key(vec![("k".into(), json!(v))])),
            "[x-z]".prop_map(|v| PathElement::Value(json!(v))),
        ]
    }

    fn arb_set() -> impl Strategy<Value = Set> {
        prop::collection::vec(prop::collection::vec(arb_element(), 1..4), 0..8).prop_map(|paths| {
            let ps: Vec<Path> = paths.into_iter().map(Path).collect();
            Set::from_paths(&ps)
        })
    }

    fn same_paths(a: &Set, b: &Set) -> bool {
        a.paths() == b.paths()
    }

    proptest! {
        #[test]
        fn algebra_laws(a in arb_set(), b in arb_set(), c in arb_set()) {
            prop_assert_eq!(a.union(&b), b.union(&a));
            prop_assert_eq!(a.union(&b).union(&c), a.union(&b.union(&c)));
            prop_assert!(same_paths(&a.intersection(&b), &b.intersection(&a)));
            prop_assert_eq!(a.union(&a), a.clone());
            prop_assert!(same_paths(&a.intersection(&a), &a));
            prop_assert!(a.difference(&a).is_empty());
            // every path of a is in exactly one of (a - b) and (a ∩ b)
            for path in a.paths() {
                let in_diff = a.difference(&b).has(&path.0);
                let in_both = a.intersection(&b).has(&path.0);
                prop_assert!(in_diff != in_both, "{}", path);
                prop_assert_eq!(in_both, b.has(&path.0));
            }
            for path in a.union(&b).paths() {
                prop_assert!(a.has(&path.0) || b.has(&path.0));
            }
            // a recursive difference keeps a subset of the member-wise difference
            for path in a.recursive_difference(&b).paths() {
                prop_assert!(a.difference(&b).has(&path.0));
            }
            prop_assert!(a.leaves().size() <= a.size());
        }
    }
}
