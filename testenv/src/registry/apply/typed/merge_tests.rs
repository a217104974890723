//! Tests of [`super`] (`merge.rs`), apart from it so that the shared test types it uses
//! (`test_types.rs`) may import the engine without a module circle.

use super::*;
use crate::registry::apply::test_types::widget;
use serde_json::json;

fn m(lhs: Value, rhs: Value) -> Value {
    merge(&widget(), &lhs, &rhs).expect("merges")
}

#[test]
fn right_side_wins_at_leaves() {
    let live = json!({"spec": {"replicas": 1, "note": "a", "selector": {"a": "1", "b": "2"}, "args": ["x", "y"]}});
    let cfg = json!({"spec": {"replicas": 2, "selector": {"c": "3"}, "args": ["z"]}});
    assert_eq!(
        m(live, cfg),
        json!({"spec": {"replicas": 2, "note": "a", "selector": {"c": "3"}, "args": ["z"]}})
    );
    // granular maps merge key by key
    assert_eq!(
        m(
            json!({"spec": {"labels": {"a": "1"}}}),
            json!({"spec": {"labels": {"b": "2"}}})
        ),
        json!({"spec": {"labels": {"a": "1", "b": "2"}}})
    );
}

#[test]
fn map_lists_merge_by_key_in_order() {
    let live = json!({"spec": {"ports": [
        {"name": "a", "port": 1}, {"name": "b", "port": 2}, {"name": "c", "port": 3}
    ]}});
    let cfg = json!({"spec": {"ports": [{"name": "c", "port": 30}, {"name": "d"}, {"name": "a", "protocol": "UDP"}]}});
    // the config's items keep its order (c before a); b stays where it was
    assert_eq!(
        m(live, cfg),
        json!({"spec": {"ports": [
            {"name": "b", "port": 2},
            {"name": "c", "port": 30},
            {"name": "d"},
            {"name": "a", "port": 1, "protocol": "UDP"},
        ]}})
    );
    assert_eq!(
        m(
            json!({"spec": {"tags": ["a", "b"]}}),
            json!({"spec": {"tags": ["c", "a"]}})
        ),
        json!({"spec": {"tags": ["c", "a", "b"]}})
    );
}

#[test]
fn duplicates_in_the_config_are_errors() {
    let e = merge(
        &widget(),
        &json!({}),
        &json!({"spec": {"ports": [{"name": "a"}, {"name": "a"}]}}),
    )
    .expect_err("duplicates");
    assert_eq!(
        e.to_string(),
        ".spec.ports: duplicate entries for key [name=\"a\"]"
    );
    // a duplicated live item is replaced by the configured one
    assert_eq!(
        m(
            json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}}),
            json!({"spec": {"ports": [{"name": "a", "port": 3}]}})
        ),
        json!({"spec": {"ports": [{"name": "a", "port": 3}]}})
    );
}
