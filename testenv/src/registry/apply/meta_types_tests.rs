//! Tests of [`super`] (`meta_types.rs`), apart from it so that the shared test types it uses
//! (`test_types.rs`) may import the engine without a module circle.

use super::*;
use crate::registry::apply::test_types::upstream_file;

fn strip_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| *k != "description")
                .map(|(k, x)| (k.clone(), strip_descriptions(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_descriptions).collect()),
        other => other.clone(),
    }
}

#[test]
fn definitions_parse_and_resolve() {
    let ours: Value = serde_json::from_str(DEFINITIONS).expect("meta_types.json parses");
    assert_eq!(ours.as_object().map(|m| m.len()), Some(8));
    let meta = meta_types()
        .resolve_named(OBJECT_META)
        .expect("ObjectMeta resolves");
    let m = meta.map.expect("a map");
    assert!(!m.atomic && m.element.is_none());
    assert!(m.fields.contains_key("ownerReferences"));
}

#[test]
fn definitions_are_upstreams() {
    let rel = "k8s.io/kubernetes@v1.37.2/api/openapi-spec/v3/api__v1_openapi.json";
    let Some(text) = upstream_file(rel).and_then(|p| std::fs::read_to_string(p).ok()) else {
        eprintln!(
            "skipped: {rel} is not in the Go module cache (run `cargo xtask upstream build`)"
        );
        return;
    };
    let doc: Value = serde_json::from_str(&text).expect("upstream's spec parses");
    let ours: Value = serde_json::from_str(DEFINITIONS).expect("meta_types.json parses");
    for (name, def) in ours.as_object().into_iter().flatten() {
        let theirs = doc
            .pointer(&format!("/components/schemas/{name}"))
            .map(strip_descriptions);
        assert_eq!(theirs.as_ref(), Some(def), "{name}");
    }
}
