//! `x-kubernetes-list-type` `set` and `map` (upstream `apiserver/schema/listtype`): a set
//! holds no value twice, a map list no two items with the same keys.

use serde_json::{Map, Value};

use super::go_format::go_field_value;
use super::schema::Schema;
use crate::registry::api_status::FieldError;

/// Duplicate entries of set and map lists anywhere in `obj`.
pub fn validate_list_types(obj: &Value, s: &Schema) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk(obj, s, "", &mut errs);
    errs
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(v: &Value, s: &Schema, path: &str, errs: &mut Vec<FieldError>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let sub = s.child(k);
                if let Some(sub) = sub {
                    let p = if s.properties.contains_key(k) {
                        child(path, k)
                    } else {
                        format!("{path}[{k}]")
                    };
                    walk(x, sub, &p, errs);
                }
            }
        }
        Value::Array(items) => {
            match s.list_type.as_deref() {
                Some("set") => {
                    for i in duplicates(items) {
                        errs.push(FieldError::duplicate(
                            format!("{path}[{i}]"),
                            go_field_value(&items[i]),
                        ));
                    }
                }
                Some("map") => map_list(items, s, path, errs),
                _ => {}
            }
            if let Some(item) = s.items.as_deref() {
                for (i, x) in items.iter().enumerate() {
                    walk(x, item, &format!("{path}[{i}]"), errs);
                }
            }
        }
        _ => {}
    }
}

/// The index of the second occurrence of every repeated value.
fn duplicates(items: &[Value]) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, x) in items.iter().enumerate() {
        let before = items[..i].iter().filter(|y| *y == x).count();
        if before == 1 {
            out.push(i);
        }
    }
    out
}

fn map_list(items: &[Value], s: &Schema, path: &str, errs: &mut Vec<FieldError>) {
    for (i, x) in items.iter().enumerate() {
        if !x.is_object() && !x.is_null() {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                go_field_value(x),
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    let keys: Vec<Value> = items
        .iter()
        .map(|x| {
            let m: Map<String, Value> = s
                .list_map_keys
                .iter()
                .filter_map(|k| x.get(k).map(|v| (k.clone(), v.clone())))
                .collect();
            Value::Object(m)
        })
        .collect();
    for i in duplicates(&keys) {
        errs.push(FieldError::duplicate(
            format!("{path}[{i}]"),
            go_field_value(&keys[i]),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sets_and_maps() {
        let s = Schema::from_json(
            &json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
            }}}}),
        );
        let ok = json!({"spec": {"tags": ["a", "b"], "ports": [{"name": "a", "port": 1}, {"name": "b", "port": 1}]}});
        assert!(validate_list_types(&ok, &s).is_empty());
        let bad = json!({"spec": {"tags": ["a", "b", "a", "a"], "ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}});
        let texts: Vec<String> = validate_list_types(&bad, &s)
            .iter()
            .map(FieldError::text)
            .collect();
        assert_eq!(
            texts,
            vec![
                "spec.ports[1]: Duplicate value: {\"name\":\"a\"}",
                "spec.tags[2]: Duplicate value: \"a\"",
            ]
        );
    }
}
