//! Tests of the custom resource strategy: decoding, status split, generation, validation.

use serde_json::{Value, json};

use super::{decode, prepare_for_create, prepare_for_update, validate_object};
use crate::registry::ResourceInfo;
use crate::registry::api_status::FieldError;
use crate::registry::custom::definition::served_versions;
use crate::registry::resources::StorageId;

fn widget_crd(status: bool) -> Value {
    let sub = if status {
        json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}})
    } else {
        json!({})
    };
    json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true, "subresources": sub,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "replicas": {"type": "integer", "default": 1},
                            "color": {"type": "string"}}},
                        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}]},
        "status": {"acceptedNames": {"plural": "widgets", "kind": "Widget"}},
    })
}

fn res(status: bool) -> &'static ResourceInfo {
    served_versions(
        &widget_crd(status),
        StorageId::custom(90 + u32::from(status)),
    )[0]
}

#[test]
fn decode_prunes_defaults_and_reports_unknown_fields() {
    let r = res(true);
    let cv = r.custom.expect("custom");
    let body = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                      "metadata": {"name": "a", "bogus": 1},
                      "spec": {"color": "red", "size": 3}, "extra": true});
    let (obj, unknown) = decode(r, cv, body, b"{}").expect("decodes");
    assert_eq!(unknown, vec!["metadata.bogus", "extra", "spec.size"]);
    assert_eq!(obj["spec"], json!({"color": "red", "replicas": 1}));
    let wrong =
        json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "a"}});
    assert_eq!(
        decode(r, cv, wrong, b"{}").map(|_| ()).map_err(|e| e.code),
        Err(400)
    );
    // an unstructured body must name its type
    let raw = br#"{"apiVersion": "example.com/v1", "metadata": {"name": "a"}}"#;
    let kindless = serde_json::from_slice(raw).expect("json");
    let e = decode(r, cv, kindless, raw).expect_err("no kind");
    assert_eq!(
        e.message,
        format!(
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{}' ({{\"apiVersion\": \"example.com/v1 ...)",
            String::from_utf8_lossy(raw)
        )
    );
    let versionless = json!({"kind": "Widget", "metadata": {"name": "a"}});
    assert_eq!(
        decode(r, cv, versionless, b"{}")
            .expect_err("no apiVersion")
            .message,
        "the API version in the data () does not match the expected API version (example.com/v1)"
    );
}

#[test]
fn status_subresource_splits_spec_and_status() {
    let r = res(true);
    let cv = r.custom.expect("custom");
    let mut created =
        json!({"metadata": {"name": "a"}, "spec": {"replicas": 1}, "status": {"replicas": 5}});
    prepare_for_create(cv, &mut created);
    assert_eq!(created.get("status"), None);
    assert_eq!(created["metadata"]["generation"], 1);
    let old = json!({"metadata": {"name": "a", "generation": 1}, "spec": {"replicas": 1}, "status": {"replicas": 1}});
    // the main resource ignores status changes; metadata does not move the generation
    let mut new = json!({"metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"replicas": 1}, "status": {"replicas": 9}});
    prepare_for_update(cv, None, &old, &mut new);
    assert_eq!(
        (new["status"].clone(), new["metadata"]["generation"].clone()),
        (json!({"replicas": 1}), json!(1))
    );
    let mut new = json!({"metadata": {"name": "a"}, "spec": {"replicas": 2}});
    prepare_for_update(cv, None, &old, &mut new);
    assert_eq!(new["metadata"]["generation"], 2);
    // /status changes only the status
    let mut st = json!({"metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"replicas": 7}, "status": {"replicas": 3}});
    prepare_for_update(cv, Some("status"), &old, &mut st);
    assert_eq!(
        st,
        json!({"metadata": {"name": "a", "generation": 1}, "spec": {"replicas": 1}, "status": {"replicas": 3}})
    );
}

#[test]
fn without_status_subresource_status_changes_bump_generation() {
    let r = res(false);
    let cv = r.custom.expect("custom");
    let old =
        json!({"metadata": {"name": "a", "generation": 1}, "spec": {}, "status": {"replicas": 1}});
    let mut new = json!({"metadata": {"name": "a"}, "spec": {}, "status": {"replicas": 2}});
    prepare_for_update(cv, None, &old, &mut new);
    assert_eq!(
        (
            new["status"]["replicas"].clone(),
            new["metadata"]["generation"].clone()
        ),
        (json!(2), json!(2))
    );
}

#[test]
fn validation_covers_metadata_schema_and_scale() {
    let r = res(true);
    let cv = r.custom.expect("custom");
    let texts = |o: &Value, sub| -> Vec<String> {
        validate_object(r, cv, o, None, sub)
            .iter()
            .map(FieldError::text)
            .collect()
    };
    let bad = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "Not_OK"},
                     "spec": {"replicas": -1}});
    let t = texts(&bad, None);
    assert!(
        t[0].starts_with(
            "metadata.name: Invalid value: \"Not_OK\": a lowercase RFC 1123 subdomain"
        ),
        "{t:?}"
    );
    assert_eq!(
        t[1],
        ".spec.replicas: Invalid value: -1: should be a non-negative integer"
    );
    let gadget =
        json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "Not_OK"}});
    assert_eq!(
        texts(&gadget, None),
        vec!["kind: Invalid value: \"Gadget\": must be Widget"]
    );
    let st = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"},
                    "spec": {"replicas": "x"}, "status": {"replicas": "y"}});
    assert_eq!(
        texts(&st, Some("status")),
        vec![
            "status.replicas: Invalid value: \"string\": replicas in body must be of type integer: \"string\"",
            ".status.replicas: Invalid value: 0: .status.replicas accessor error: y is of the type string, expected int64",
        ]
    );
}
