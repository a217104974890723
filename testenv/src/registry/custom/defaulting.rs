//! Defaulting (upstream `apiserver/schema/defaulting/algorithm.go`): a property with a
//! `default` that is absent, or `null` without being nullable, gets the default; then the
//! children are defaulted, so defaults inside a default apply too.

use serde_json::Value;

use super::schema::Schema;

fn non_nullable_null(v: &Value, s: &Schema) -> bool {
    v.is_null() && !s.nullable
}

/// Apply the schema's defaults to `x` in place.
pub fn apply_defaults(x: &mut Value, s: &Schema) {
    match x {
        Value::Object(m) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.default else {
                    continue;
                };
                if m.get(k).is_none_or(|v| non_nullable_null(v, prop)) {
                    m.insert(k.clone(), d.clone());
                }
            }
            let additional = s.additional.as_ref().and_then(|a| a.schema.as_deref());
            for (k, v) in m.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    apply_defaults(v, prop);
                } else if let Some(sub) = additional {
                    if non_nullable_null(v, sub) {
                        *v = sub.default.clone().unwrap_or(Value::Null);
                    }
                    apply_defaults(v, sub);
                }
            }
        }
        Value::Array(a) => {
            let Some(items) = s.items.as_deref() else {
                return;
            };
            for v in a {
                if non_nullable_null(v, items) {
                    *v = items.default.clone().unwrap_or(Value::Null);
                }
                apply_defaults(v, items);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_table() {
        let s = Schema::from_json(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "default": {}, "properties": {
                    "replicas": {"type": "integer", "default": 1},
                    "mode": {"type": "string", "default": "auto", "nullable": true},
                    "ports": {"type": "array", "items": {"type": "object", "properties": {
                        "protocol": {"type": "string", "default": "TCP"}}}},
                    "limits": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                        "max": {"type": "integer", "default": 10}}}},
                }},
            },
        }));
        // (input, defaulted)
        let cases = [
            (json!({}), json!({"spec": {"replicas": 1, "mode": "auto"}})),
            (
                json!({"spec": {"replicas": 3}}),
                json!({"spec": {"replicas": 3, "mode": "auto"}}),
            ),
            (
                // a null of a non-nullable field is defaulted, a nullable one's stays
                json!({"spec": {"replicas": null, "mode": null}}),
                json!({"spec": {"replicas": 1, "mode": null}}),
            ),
            (
                json!({"spec": {"ports": [{"protocol": "UDP"}, {}], "limits": {"cpu": {}}}}),
                json!({"spec": {"replicas": 1, "mode": "auto", "ports": [{"protocol": "UDP"}, {"protocol": "TCP"}], "limits": {"cpu": {"max": 10}}}}),
            ),
        ];
        for (mut input, want) in cases {
            let before = input.clone();
            apply_defaults(&mut input, &s);
            assert_eq!(input, want, "{before}");
        }
    }
}
