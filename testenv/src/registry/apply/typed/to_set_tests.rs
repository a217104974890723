//! Tests of [`super`] (`to_set.rs`), apart from it so that the shared test types it uses
//! (`test_types.rs`) may import the engine without a module circle.

use super::*;
use crate::registry::apply::test_types::widget;
use serde_json::json;

fn paths(v: Value) -> Vec<String> {
    to_set(&widget(), &v)
        .expect("valid")
        .paths()
        .iter()
        .map(Path::to_string)
        .collect()
}

#[test]
fn fields_of_an_object() {
    let got = paths(json!({
        "spec": {
            "replicas": 1,
            "tags": ["a", "b"],
            "ports": [{"name": "http", "port": 80}],
            "args": ["x"],
            "selector": {"a": "b"},
            "labels": {"x": "y", "empty": {}},
            "template": {},
            "note": null,
        }
    }));
    assert_eq!(
        got,
        vec![
            ".spec.args",
            ".spec.note",
            ".spec.replicas",
            ".spec.selector",
            ".spec.template",
            ".spec.labels.empty",
            ".spec.labels.x",
            ".spec.ports[name=\"http\"]",
            ".spec.ports[name=\"http\"].name",
            ".spec.ports[name=\"http\"].port",
            ".spec.tags[=\"a\"]",
            ".spec.tags[=\"b\"]",
        ]
    );
}

#[test]
fn duplicated_items_are_one_field() {
    let got = paths(json!({"spec": {"ports": [
        {"name": "a", "port": 1}, {"name": "a", "port": 2}, {"name": "b"}
    ]}}));
    assert_eq!(
        got,
        vec![
            ".spec.ports[name=\"a\"]",
            ".spec.ports[name=\"b\"]",
            ".spec.ports[name=\"b\"].name"
        ]
    );
}

#[test]
fn named_fields_become_members() {
    let s = to_set(
        &widget(),
        &json!({"spec": {"labels": {"x": "y"}, "ports": [{"name": "a", "port": 1}]}}),
    )
    .expect("valid");
    let named = ensure_named_fields(&s, &widget(), Some(widget().root()));
    let got: Vec<String> = named.paths().iter().map(Path::to_string).collect();
    // spec, spec.labels and spec.ports are named fields; the map key x and the item are not
    assert_eq!(
        got,
        vec![
            ".spec",
            ".spec.labels",
            ".spec.ports",
            ".spec.labels.x",
            ".spec.ports[name=\"a\"]",
            ".spec.ports[name=\"a\"].name",
            ".spec.ports[name=\"a\"].port",
        ]
    );
}
