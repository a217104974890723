//! Whether a write would change anything: the cached object already has every field the
//! desired one sets (the test behind [`Context::create_or_patch`](super::Context::create_or_patch)).

use serde_json::Value;

/// Whether merging `desired` into `current` (a JSON merge patch, RFC 7386) leaves `current`
/// as it is: every field of `desired` is in `current` with the same value, objects compared
/// field by field, a `null` in `desired` meaning "absent in `current`", anything else equal as
/// a whole (arrays included, as a merge patch replaces them).
pub(crate) fn contains(current: &Value, desired: &Value) -> bool {
    match (current, desired) {
        (Value::Object(current), Value::Object(desired)) => {
            desired
                .iter()
                .all(|(k, want)| match (current.get(k), want) {
                    (None | Some(Value::Null), Value::Null) => true,
                    (Some(have), want) => contains(have, want),
                    (None, _) => false,
                })
        }
        (current, desired) => current == desired,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn desired_fields_against_the_current_object() {
        let current = json!({
            "metadata": {"name": "web", "resourceVersion": "7", "labels": {"app": "web"}},
            "data": {"greeting": "hello", "extra": "kept"},
            "list": [1, 2],
        });
        // (case, desired, no write needed)
        let cases = [
            (
                "a subset",
                json!({"metadata": {"name": "web"}, "data": {"greeting": "hello"}}),
                true,
            ),
            (
                "a changed value",
                json!({"data": {"greeting": "hi"}}),
                false,
            ),
            ("a new key", json!({"data": {"new": "x"}}), false),
            ("a new top-level field", json!({"spec": {}}), false),
            (
                "null for an absent key",
                json!({"data": {"gone": null}}),
                true,
            ),
            (
                "null for a present key",
                json!({"data": {"extra": null}}),
                false,
            ),
            ("the same list", json!({"list": [1, 2]}), true),
            ("a shorter list replaces", json!({"list": [1]}), false),
            (
                "an object for a string",
                json!({"data": {"greeting": {"a": 1}}}),
                false,
            ),
            ("nothing", json!({}), true),
        ];
        for (name, desired, want) in cases {
            assert_eq!(contains(&current, &desired), want, "{name}");
        }
    }
}
