//! Pruning (upstream `apiserver/schema/pruning` and `defaulting/prunenulls.go`): fields the
//! structural schema does not specify are dropped, except under
//! `x-kubernetes-preserve-unknown-fields`; `apiVersion`, `kind` and `metadata` of the object
//! (and of embedded resources) are kept. The dropped paths are what `fieldValidation` reports.

use serde_json::Value;

use super::schema::Schema;

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Prune `obj`, a whole object, with its version's schema (`None`: no schema, everything but
/// the type and object metadata goes). Returns the dropped paths, sorted (`spec.foo`,
/// `spec.items[0].bar`).
pub fn prune(obj: &mut Value, schema: Option<&Schema>) -> Vec<String> {
    let mut out = Vec::new();
    let mut path = String::new();
    let empty = Schema::default();
    walk(
        obj,
        Some(schema.unwrap_or(&empty)),
        true,
        false,
        &mut path,
        &mut out,
    );
    out.sort();
    out
}

fn push_key(path: &mut String, key: &str) -> usize {
    let len = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
    len
}

/// Prune `x` with `s`. `keep`: unknown fields stay (under
/// `x-kubernetes-preserve-unknown-fields`, which reaches into lists' items), while the fields a
/// schema specifies are pruned as usual.
fn walk(
    x: &mut Value,
    s: Option<&Schema>,
    embedded: bool,
    keep: bool,
    path: &mut String,
    out: &mut Vec<String>,
) {
    let keep = keep || s.is_some_and(|s| s.preserve_unknown_fields);
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                if !keep {
                    for k in m.keys() {
                        let len = push_key(path, k);
                        out.push(path.clone());
                        path.truncate(len);
                    }
                    m.clear();
                }
                return;
            };
            let mut dropped = Vec::new();
            for (k, v) in m.iter_mut() {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                let len = push_key(path, k);
                if let Some(p) = s.properties.get(k) {
                    walk(v, Some(p), p.embedded_resource, false, path, out);
                } else if let Some(a) = &s.additional {
                    let sub = a.schema.as_deref();
                    let emb = sub.is_some_and(|x| x.embedded_resource);
                    walk(v, sub, emb, false, path, out);
                } else if !keep {
                    out.push(path.clone());
                    dropped.push(k.clone());
                }
                path.truncate(len);
            }
            for k in dropped {
                m.remove(&k);
            }
        }
        Value::Array(a) => {
            let item = s.and_then(|s| s.items.as_deref());
            if keep && item.is_none() {
                return;
            }
            for (i, v) in a.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let emb = item.is_some_and(|x| x.embedded_resource);
                walk(v, item, emb, keep, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Drop `null`s of fields that are neither nullable nor defaulted (upstream
/// `PruneNonNullableNullsWithoutDefaults`), so they read as absent.
pub fn prune_nulls(x: &mut Value, s: Option<&Schema>) {
    match x {
        Value::Object(m) => {
            m.retain(|k, v| {
                let sub = s.and_then(|s| s.child(k));
                let drop = v.is_null() && sub.is_some_and(|c| !c.nullable && c.default.is_none());
                if !drop {
                    prune_nulls(v, sub);
                }
                !drop
            });
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.items.as_deref());
            for v in a {
                prune_nulls(v, items);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::from_json(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                             "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                    "opt": {"type": "string"},
                    "nul": {"type": "string", "nullable": true},
                }},
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
            },
        }))
    }

    #[test]
    fn prunes_unknown_fields_and_reports_them() {
        let s = schema();
        let mut o = json!({
            "apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
            "top": 1,
            "spec": {"replicas": 1, "bogus": true,
                     "items": [{"name": "a", "extra": 1}],
                     "labels": {"k": "v"},
                     "free": {"anything": {"deep": 1}, "known": {"a": "x", "b": "y"}},
                     "kind": "nested meta fields are pruned"},
            "status": {"ready": true, "phase": "x"},
        });
        let dropped = prune(&mut o, Some(&s));
        assert_eq!(
            dropped,
            vec![
                "spec.bogus",
                "spec.free.known.b",
                "spec.items[0].extra",
                "spec.kind",
                "status.phase",
                "top"
            ]
        );
        assert_eq!(
            o,
            json!({
                "apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
                "spec": {"replicas": 1, "items": [{"name": "a"}], "labels": {"k": "v"},
                         "free": {"anything": {"deep": 1}, "known": {"a": "x"}}},
                "status": {"ready": true},
            })
        );
    }

    #[test]
    fn no_schema_keeps_only_type_and_metadata() {
        let mut o = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {}, "spec": {"a": 1}});
        assert_eq!(prune(&mut o, None), vec!["spec"]);
        assert_eq!(
            o,
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {}})
        );
    }

    #[test]
    fn non_nullable_nulls_go() {
        let s = schema();
        let mut o = json!({"spec": {"opt": null, "nul": null, "replicas": 2}});
        prune_nulls(&mut o, Some(&s));
        assert_eq!(o, json!({"spec": {"nul": null, "replicas": 2}}));
    }
}
