//! Field paths (structured-merge-diff's `fieldpath/element.go` and `path.go`): a path is a
//! list of elements, each a field name, the key fields of an item of a map list, the value
//! of an item of a set list, or an index into an atomic list. Elements are ordered field
//! names first, then keys, values and indexes, as upstream orders them, which fixes the order
//! of every set and of FieldsV1.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use super::value::{compare, to_text};

/// One step of a path.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A field of a map or struct (`.name`).
    Field(String),
    /// The item of a map list with these key fields, sorted by name (`[name="c",port=80]`).
    Key(Vec<(String, Value)>),
    /// The item of a set list with this value (`[="a"]`).
    Value(Value),
    /// The item of an atomic list at this index (`[0]`); only validation paths have them.
    Index(i64),
}

impl PathElement {
    /// A field element.
    pub fn field(name: impl Into<String>) -> Self {
        PathElement::Field(name.into())
    }

    /// A key element from `(name, value)` pairs, sorted by name.
    pub fn key(mut fields: Vec<(String, Value)>) -> Self {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }
}

/// Key field lists compare name by name, then value by value; a shorter list is smaller.
fn compare_keys(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for ((an, av), (bn, bv)) in a.iter().zip(b) {
        let c = an.cmp(bn).then_with(|| compare(av, bv));
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => compare_keys(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", to_text(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", to_text(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path from the root of an object.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// A path of field names (`Path::fields(&["spec", "replicas"])`).
    pub fn fields(names: &[&str]) -> Self {
        Path(names.iter().map(|n| PathElement::field(*n)).collect())
    }

    /// This path with one more element.
    pub fn child(&self, pe: PathElement) -> Path {
        let mut p = self.0.clone();
        p.push(pe);
        Path(p)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for pe in &self.0 {
            write!(f, "{pe}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn k(pairs: &[(&str, Value)]) -> PathElement {
        PathElement::key(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn elements_print_as_upstream() {
        let p = Path(vec![
            PathElement::field("spec"),
            PathElement::field("ports"),
            k(&[("protocol", json!("TCP")), ("port", json!(80))]),
            PathElement::field("name"),
        ]);
        assert_eq!(p.to_string(), ".spec.ports[port=80,protocol=\"TCP\"].name");
        let set = Path(vec![
            PathElement::field("finalizers"),
            PathElement::Value(json!("a")),
        ]);
        assert_eq!(set.to_string(), ".finalizers[=\"a\"]");
        assert_eq!(PathElement::Index(3).to_string(), "[3]");
    }

    #[test]
    fn elements_order_fields_keys_values_indexes() {
        let ordered = [
            PathElement::field("a"),
            PathElement::field("b"),
            k(&[("name", json!("a"))]),
            k(&[("name", json!("a")), ("port", json!(1))]),
            k(&[("name", json!("b"))]),
            k(&[("port", json!(9))]),
            k(&[("port", json!(10))]),
            PathElement::Value(json!(2)),
            PathElement::Value(json!("a")),
            PathElement::Index(0),
            PathElement::Index(1),
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                // port 9 < port 10: key values compare as numbers, not as text
                assert_eq!(a.cmp(b), i.cmp(&j), "{a} vs {b}");
            }
        }
    }
}
