//! The field manager as kube-apiserver runs it, on the `Widget` test kind: managedFields
//! after creates, updates and applies, `before-first-apply`, cleared and client-sent
//! managedFields, subresources, conflicts and force, the cap on update managers; and the
//! property that applying a configuration twice changes nothing.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::field_manager::{ApplyError, FieldManager};
use super::set::Set;
use super::test_types::widget;
use crate::registry::apply::path::Path;
use crate::registry::apply::schema::TypedSchema;

const T0: &str = "2024-01-01T00:00:00Z";
const T1: &str = "2024-01-01T00:01:00Z";

fn fm<'a>(schema: &'a TypedSchema, sub: &'a str, reset: Option<&'a Set>) -> FieldManager<'a> {
    FieldManager {
        schema,
        api_version: "example.com/v1",
        kind: "Widget",
        subresource: sub,
        reset,
        strict_versions: false,
    }
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": "w", "namespace": "ns"}, "spec": spec})
}

/// A stored object: what a create returned, with a uid.
fn stored(mut v: Value) -> Value {
    v["metadata"]["uid"] = json!("u-1");
    v
}

fn entries(v: &Value) -> Vec<Value> {
    v["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn status_reset() -> Set {
    Set::from_paths(&[Path::fields(&["status"])])
}

#[test]
fn create_then_update_then_apply() {
    let s = widget();
    let reset = status_reset();
    let f = fm(&s, "", Some(&reset));
    // a create: the creator owns what it set, but not metadata the server sets, nor status
    let mut created = obj(json!({"replicas": 1, "labels": {"a": "b"}}));
    created["status"] = json!({"ready": 1});
    let created = stored(f.update(&json!({}), created, "kubectl-create", T0));
    assert_eq!(
        entries(&created),
        vec![
            json!({"manager": "kubectl-create", "operation": "Update", "apiVersion": "example.com/v1",
            "time": T0, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {".": {}, "f:labels": {".": {}, "f:a": {}}, "f:replicas": {}}}})
        ]
    );
    // an update by another manager takes the field it changed
    let mut new = created.clone();
    new["spec"]["replicas"] = json!(3);
    let updated = f.update(&created, new, "scaler", T1);
    let e = entries(&updated);
    assert_eq!(e.len(), 2);
    assert_eq!(
        e[0]["fieldsV1"],
        json!({"f:spec": {".": {}, "f:labels": {".": {}, "f:a": {}}}})
    );
    assert_eq!(
        (&e[1]["manager"], &e[1]["fieldsV1"]),
        (&json!("scaler"), &json!({"f:spec": {"f:replicas": {}}}))
    );
    // an apply of the same replicas conflicts with the scaler
    let cfg = obj(json!({"replicas": 5}));
    let err = f
        .apply(&updated, &cfg, "tool", false, T1)
        .expect_err("conflicts");
    let status = err.to_api_error().to_status();
    assert_eq!(status["code"], 409);
    assert_eq!(
        status["message"],
        "Apply failed with 1 conflict: conflict with \"scaler\" using example.com/v1: .spec.replicas"
    );
    // forced: the tool owns replicas, the scaler nothing (and is gone)
    let forced = f.apply(&updated, &cfg, "tool", true, T1).expect("forced");
    let managers: Vec<(Value, Value)> = entries(&forced)
        .iter()
        .map(|e| (e["manager"].clone(), e["operation"].clone()))
        .collect();
    assert_eq!(
        managers,
        vec![
            (json!("tool"), json!("Apply")),
            (json!("kubectl-create"), json!("Update"))
        ]
    );
    assert_eq!(forced["spec"]["replicas"], 5);
    assert!(entries(&forced)[0].get("apiVersion") == Some(&json!("example.com/v1")));
}

#[test]
fn apply_creates_and_removes_what_it_no_longer_applies() {
    let s = widget();
    let f = fm(&s, "", None);
    let cfg = obj(json!({"replicas": 1, "note": "x", "tags": ["a", "b"]}));
    let created = stored(
        f.apply(&json!({}), &cfg, "tool", false, T0)
            .expect("applies"),
    );
    let e = entries(&created);
    assert_eq!(e.len(), 1, "no before-first-apply for a create: {e:?}");
    assert_eq!(
        e[0],
        json!({"manager": "tool", "operation": "Apply", "apiVersion": "example.com/v1", "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:note": {}, "f:replicas": {}, "f:tags": {"v:\"a\"": {}, "v:\"b\"": {}}}}})
    );
    // the same configuration again: nothing changes, not even the time
    let again = f.apply(&created, &cfg, "tool", false, T1).expect("applies");
    assert_eq!(again, created);
    // dropping note and a tag removes them
    let less = f
        .apply(
            &created,
            &obj(json!({"replicas": 1, "tags": ["b"]})),
            "tool",
            false,
            T1,
        )
        .expect("applies");
    assert_eq!(less["spec"], json!({"replicas": 1, "tags": ["b"]}));
    assert_eq!(entries(&less)[0]["time"], T1);
}

#[test]
fn before_first_apply_owns_what_was_there() {
    let s = widget();
    let f = fm(&s, "", None);
    // an object with no managers (created untracked)
    let live = stored(obj(json!({"replicas": 1, "note": "old"})));
    let out = f
        .apply(&live, &obj(json!({"replicas": 2})), "tool", true, T1)
        .expect("applies");
    let e = entries(&out);
    let names: Vec<&Value> = e.iter().map(|e| &e["manager"]).collect();
    assert_eq!(names, vec!["tool", "before-first-apply"]);
    assert_eq!(e[1]["fieldsV1"], json!({"f:spec": {".": {}, "f:note": {}}}));
    // without force the apply conflicts with before-first-apply
    let err = f
        .apply(&live, &obj(json!({"replicas": 2})), "tool", false, T1)
        .expect_err("conflict");
    assert!(matches!(err, ApplyError::Conflicts(ref c) if c.len() == 1));
    assert_eq!(
        err.to_api_error().message,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using example.com/v1: .spec.replicas"
    );
}

#[test]
fn clients_may_clear_or_replace_managed_fields() {
    let s = widget();
    let f = fm(&s, "", None);
    let created = stored(f.update(&json!({}), obj(json!({"replicas": 1})), "a", T0));
    // an empty list clears them, and the object stays untracked on later updates
    let mut cleared = created.clone();
    cleared["metadata"]["managedFields"] = json!([]);
    let cleared = f.update(&created, cleared, "b", T1);
    assert!(cleared["metadata"].get("managedFields").is_none());
    let mut next = cleared.clone();
    next["spec"]["note"] = json!("x");
    assert!(
        f.update(&cleared, next, "c", T1)["metadata"]
            .get("managedFields")
            .is_none()
    );
    // valid entries sent by the client are taken; malformed ones are ignored for the stored
    let mut replaced = created.clone();
    replaced["metadata"]["managedFields"] = json!([{"manager": "someone", "operation": "Update",
        "apiVersion": "example.com/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]);
    let out = f.update(&created, replaced, "b", T1);
    assert_eq!(entries(&out)[0]["manager"], "someone");
    let mut bad = created.clone();
    bad["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Bogus"}]);
    let out = f.update(&created, bad, "b", T1);
    assert_eq!(entries(&out), entries(&created));
}

#[test]
fn status_subresource_managers() {
    let s = widget();
    let spec_reset = Set::from_paths(&[
        Path::fields(&["spec"]),
        Path::fields(&["metadata", "labels"]),
    ]);
    let main_reset = status_reset();
    let main = fm(&s, "", Some(&main_reset));
    let status = fm(&s, "status", Some(&spec_reset));
    let created = stored(main.update(&json!({}), obj(json!({"replicas": 1})), "a", T0));
    let mut cfg = obj(json!({"replicas": 9}));
    cfg["status"] = json!({"ready": 2});
    let out = status
        .apply(&created, &cfg, "ctrl", false, T1)
        .expect("applies");
    let e = entries(&out);
    let apply = e
        .iter()
        .find(|e| e["manager"] == "ctrl")
        .expect("ctrl entry");
    // the status applier owns status only, through the status subresource
    assert_eq!(apply["subresource"], "status");
    assert_eq!(apply["fieldsV1"], json!({"f:status": {"f:ready": {}}}));
    // an update through status ignores client-sent managedFields (here: a request to clear
    // them) and takes status.ready from the applier
    let mut new = out.clone();
    new["status"]["ready"] = json!(3);
    new["metadata"]["managedFields"] = json!([]);
    let upd = status.update(&out, new, "ctrl2", T1);
    let got: Vec<(Value, Value)> = entries(&upd)
        .iter()
        .map(|e| (e["manager"].clone(), e["subresource"].clone()))
        .collect();
    assert_eq!(
        got,
        vec![(json!("a"), Value::Null), (json!("ctrl2"), json!("status"))]
    );
}

#[test]
fn bad_applies() {
    let s = widget();
    let f = fm(&s, "", None);
    let mut pod = obj(json!({}));
    pod["apiVersion"] = json!("v1");
    pod["kind"] = json!("Pod");
    assert_eq!(
        f.apply(&json!({}), &pod, "t", false, T0),
        Err(ApplyError::BadRequest(
            "invalid object type: /v1, Kind=Pod".into()
        ))
    );
    let mut with_mf = obj(json!({}));
    with_mf["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        f.apply(&json!({}), &with_mf, "t", false, T0),
        Err(ApplyError::BadRequest(
            "metadata.managedFields must be nil".into()
        ))
    );
    let dup = obj(json!({"ports": [{"name": "a"}, {"name": "a"}]}));
    assert_eq!(
        f.apply(&json!({}), &dup, "t", false, T0),
        Err(ApplyError::Internal(
            "failed to create typed patch object (ns/w; example.com/v1, Kind=Widget): .spec.ports: duplicate entries for key [name=\"a\"]".into()
        ))
    );
}

#[test]
fn update_managers_are_capped() {
    let s = widget();
    let f = fm(&s, "", None);
    let mut live = stored(f.update(&json!({}), obj(json!({"replicas": 0})), "m0", T0));
    for i in 1..=12 {
        let mut new = live.clone();
        new["spec"]["labels"][format!("l{i}")] = json!("x");
        new["spec"]["replicas"] = json!(i);
        let t = format!("2024-01-01T00:00:{i:02}Z");
        live = f.update(&live, new, &format!("m{i}"), &t);
    }
    let names: Vec<String> = entries(&live)
        .iter()
        .map(|e| e["manager"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(names.len(), 10, "{names:?}");
    assert!(names.contains(&"ancient-changes".to_string()), "{names:?}");
    assert!(names.contains(&"m12".to_string()));
}

fn arb_spec() -> impl Strategy<Value = Value> {
    (
        0i64..5,
        prop::option::of("[a-c]"),
        prop::collection::btree_set("[a-d]", 0..4),
        prop::collection::btree_map("[a-c]", 0i64..3, 0..3),
        prop::collection::btree_map("[x-z]", "[a-b]", 0..3),
    )
        .prop_map(|(replicas, note, tags, ports, labels)| {
            let mut spec = serde_json::Map::new();
            // never empty: an empty spec is a field of its own, kept only while empty
            spec.insert("replicas".into(), json!(replicas));
            if let Some(n) = note {
                spec.insert("note".into(), json!(n));
            }
            if !tags.is_empty() {
                spec.insert("tags".into(), json!(tags));
            }
            if !ports.is_empty() {
                let items: Vec<Value> = ports
                    .iter()
                    .map(|(n, p)| json!({"name": n, "port": p}))
                    .collect();
                spec.insert("ports".into(), json!(items));
            }
            if !labels.is_empty() {
                spec.insert("labels".into(), json!(labels));
            }
            Value::Object(spec)
        })
}

proptest! {
    #[test]
    fn applying_twice_changes_nothing(first in arb_spec(), second in arb_spec()) {
        let s = widget();
        let f = fm(&s, "", None);
        let a = stored(f.apply(&json!({}), &obj(first), "one", true, T0).expect("applies"));
        let b = f.apply(&a, &obj(second.clone()), "two", true, T0).expect("applies");
        let c = f.apply(&b, &obj(second), "two", false, T1).expect("no conflict the second time");
        prop_assert_eq!(b, c);
    }

    #[test]
    fn an_applier_owns_what_it_applied(first in arb_spec(), second in arb_spec()) {
        let s = widget();
        let f = fm(&s, "", None);
        let a = stored(f.apply(&json!({}), &obj(first), "one", true, T0).expect("applies"));
        let cfg = obj(second);
        let b = f.apply(&a, &cfg, "two", true, T0).expect("applies");
        // every field of the configuration is in the result with the configured value
        let want = super::typed::to_set(&s, &cfg).expect("valid");
        let got = super::typed::to_set(&s, &b).expect("valid");
        for p in want.leaves().paths() {
            prop_assert!(got.has(&p.0), "{} missing", p);
        }
    }
}
