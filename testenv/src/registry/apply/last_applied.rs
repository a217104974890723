//! kubectl's move from client-side to server-side apply (apimachinery's
//! `util/managedfields/internal/lastappliedmanager.go` and `lastappliedupdater.go`): when the
//! manager `kubectl` applies server-side to an object with a
//! `kubectl.kubernetes.io/last-applied-configuration` annotation, conflicts on fields that
//! annotation set (and the object still has as set) are taken over without `force`, and the
//! annotation is rewritten to the applied configuration.

use serde_json::{Map, Value};

use super::schema::TypedSchema;
use super::set::Set;
use super::typed;
use super::value::to_json;
use crate::registry::meta;

/// The annotation client-side apply keeps.
pub const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn annotation(obj: &Value) -> Option<&str> {
    meta::at(obj, &["metadata", "annotations", ANNOTATION])
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The fields the last client-side apply set that still have the values it set.
pub fn allowed_conflicts(schema: &TypedSchema, live: &Value, api_version: &str) -> Option<Set> {
    let last: Value = serde_json::from_str(annotation(live)?).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
        return None;
    }
    typed::validate(schema, &last, false).ok()?;
    typed::validate(schema, live, false).ok()?;
    let set = typed::to_set(schema, &last).ok()?;
    let cmp = typed::compare(schema, &last, live).ok()?;
    Some(
        set.difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

/// Rewrite the annotation, when `obj` has one, to the applied configuration (without it).
pub fn update_annotation(obj: &mut Value, config: &Value) {
    if annotation(obj).is_none() {
        return;
    }
    let mut applied = config.clone();
    if let Some(a) = applied
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        a.remove(ANNOTATION);
    }
    let text = format!("{}\n", to_json(&applied));
    let m = meta::meta_mut(obj);
    let annotations = m
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(a) = annotations.as_object_mut() {
        a.insert(ANNOTATION.into(), Value::String(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::apply::path::Path;
    use crate::registry::apply::test_types::widget;
    use serde_json::json;

    #[test]
    fn allowed_fields_are_those_still_as_applied() {
        let last = json!({"apiVersion": "x/v1", "kind": "Widget", "metadata": {"name": "a"},
                          "spec": {"replicas": 1, "note": "n"}});
        let live = json!({"apiVersion": "x/v1", "kind": "Widget",
            "metadata": {"name": "a", "annotations": {ANNOTATION: last.to_string()}},
            "spec": {"replicas": 5, "note": "n"}});
        let allowed = allowed_conflicts(&widget(), &live, "x/v1").expect("annotation");
        assert!(allowed.has(&Path::fields(&["spec", "note"]).0));
        assert!(!allowed.has(&Path::fields(&["spec", "replicas"]).0));
        assert!(allowed_conflicts(&widget(), &live, "x/v2").is_none());

        let mut obj = live.clone();
        let config = json!({"apiVersion": "x/v1", "kind": "Widget",
            "metadata": {"name": "a", "annotations": {ANNOTATION: "old", "b": "<c>"}}});
        update_annotation(&mut obj, &config);
        assert_eq!(
            obj["metadata"]["annotations"][ANNOTATION],
            "{\"apiVersion\":\"x/v1\",\"kind\":\"Widget\",\"metadata\":{\"annotations\":{\"b\":\"\\u003cc\\u003e\"},\"name\":\"a\"}}\n"
        );
    }
}
