//! An object without a set of fields, or with only them (structured-merge-diff's
//! `typed/remove.go`). A field whose contents are all removed stays, as `null`, unless the
//! field itself is in the set; atomic lists and maps go or stay whole.

use serde_json::{Map, Value};

use super::items::item_element;
use super::{Part, key_type, part};
use crate::registry::apply::path::{Path, PathElement};
use crate::registry::apply::schema::{ListType, MapType, TypeRef, TypedSchema};
use crate::registry::apply::set::Set;

/// `value` without the fields of `set`.
pub fn remove(schema: &TypedSchema, value: &Value, set: &Set) -> Value {
    walk(schema, Some(schema.root()), value, set, false).unwrap_or(Value::Null)
}

/// Only the fields of `set` from `value` (upstream's `ExtractItems`).
pub fn extract(schema: &TypedSchema, value: &Value, set: &Set) -> Value {
    walk(schema, Some(schema.root()), value, set, true).unwrap_or(Value::Null)
}

fn walk(
    schema: &TypedSchema,
    tr: Option<&TypeRef>,
    v: &Value,
    set: &Set,
    extract: bool,
) -> Option<Value> {
    let tr = tr?;
    let atom = schema.resolve(tr)?.deduce(Some(v));
    match part(&atom, tr, &Path::default()).ok()? {
        Part::Scalar(_) => Some(v.clone()),
        Part::List(l) => list(schema, l, v, set, extract),
        Part::Map(m) => map(schema, m, v, set, extract),
    }
}

fn list(schema: &TypedSchema, t: &ListType, v: &Value, set: &Set, extract: bool) -> Option<Value> {
    let Value::Array(items) = v else {
        return None;
    };
    if items.is_empty() || t.atomic {
        return extract.then(|| v.clone());
    }
    let mut out = Vec::new();
    for item in items {
        let Ok(pe) = item_element(schema, t, item) else {
            // an item without an element matches nothing in the set
            if !extract {
                out.push(item.clone());
            }
            continue;
        };
        let exact = set.has_member(&pe);
        let below = set.with_prefix(&pe);
        let item = if below.is_empty() {
            item.clone()
        } else {
            walk(schema, Some(&t.element), item, &below, extract).unwrap_or(Value::Null)
        };
        let keep = if extract {
            exact || !below.is_empty()
        } else {
            !exact
        };
        if keep {
            out.push(item);
        }
    }
    (!out.is_empty()).then_some(Value::Array(out))
}

fn map(schema: &TypedSchema, t: &MapType, v: &Value, set: &Set, extract: bool) -> Option<Value> {
    let Value::Object(m) = v else {
        return None;
    };
    if m.is_empty() || t.atomic {
        return extract.then(|| v.clone());
    }
    let mut out = Map::new();
    for (k, child) in m {
        let pe = PathElement::field(k.as_str());
        let ty = key_type(t, k);
        if set.has_member(&pe) {
            if extract {
                // upstream descends with the whole set here
                let x = walk(schema, ty.as_ref(), child, set, extract).unwrap_or(Value::Null);
                out.insert(k.clone(), x);
            }
            continue;
        }
        let below = set.with_prefix(&pe);
        let child = if below.is_empty() {
            if extract {
                continue;
            }
            child.clone()
        } else {
            walk(schema, ty.as_ref(), child, &below, extract).unwrap_or(Value::Null)
        };
        out.insert(k.clone(), child);
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::apply::test_types::widget;
    use serde_json::json;

    fn set(paths: &[Path]) -> Set {
        Set::from_paths(paths)
    }

    fn f(parts: &[&str]) -> Path {
        Path::fields(parts)
    }

    #[test]
    fn removes_and_extracts() {
        let obj = json!({"spec": {"replicas": 1, "tags": ["a", "b"], "labels": {"x": "1"}, "selector": {"a": "b"}}});
        let s = set(&[
            f(&["spec", "replicas"]),
            f(&["spec", "tags"]).child(PathElement::Value(json!("a"))),
            f(&["spec", "labels", "x"]),
        ]);
        // labels lost its only key: it stays, as null
        assert_eq!(
            remove(&widget(), &obj, &s),
            json!({"spec": {"tags": ["b"], "labels": null, "selector": {"a": "b"}}})
        );
        assert_eq!(
            extract(&widget(), &obj, &s),
            json!({"spec": {"replicas": 1, "tags": ["a"], "labels": {"x": "1"}}})
        );
        // removing a field removes it whole, atomic or not
        assert_eq!(
            remove(
                &widget(),
                &obj,
                &set(&[f(&["spec", "selector"]), f(&["spec", "labels"])])
            ),
            json!({"spec": {"replicas": 1, "tags": ["a", "b"]}})
        );
        assert_eq!(remove(&widget(), &obj, &set(&[f(&["spec"])])), json!(null));
    }

    #[test]
    fn map_list_items() {
        let obj = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}});
        let a = PathElement::key(vec![("name".into(), json!("a"))]);
        let b = PathElement::key(vec![("name".into(), json!("b"))]);
        let ports = f(&["spec", "ports"]);
        let s = set(&[
            ports.child(a),
            ports.child(b).child(PathElement::field("port")),
        ]);
        assert_eq!(
            remove(&widget(), &obj, &s),
            json!({"spec": {"ports": [{"name": "b"}]}})
        );
        assert_eq!(
            extract(&widget(), &obj, &s),
            json!({"spec": {"ports": [{"name": "a", "port": 1}, {"port": 2}]}})
        );
    }
}
