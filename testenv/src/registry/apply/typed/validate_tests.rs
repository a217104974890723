//! Tests of [`super`] (`validate.rs`), apart from it so that the shared test types it uses
//! (`test_types.rs`) may import the engine without a module circle.

use super::*;
use crate::registry::apply::test_types::widget;
use serde_json::json;

fn check(v: Value, dup: bool) -> Result<(), String> {
    validate(&widget(), &v, dup).map_err(|e| e.to_string())
}

#[test]
fn reports_upstreams_errors() {
    assert_eq!(
        check(json!({"spec": {"replicas": 1, "tags": ["a"]}}), false),
        Ok(())
    );
    assert_eq!(
        check(json!({"spec": {"replicas": "x"}}), false),
        Err(".spec.replicas: expected numeric (int or float), got string".into())
    );
    assert_eq!(
        check(json!({"spec": {"nope": 1}}), false),
        Err(".spec.nope: field not declared in schema".into())
    );
    let dup = json!({"spec": {"ports": [{"name": "a"}, {"name": "a"}]}});
    assert_eq!(
        check(dup.clone(), false),
        Err(".spec.ports: duplicate entries for key [name=\"a\"]".into())
    );
    assert_eq!(check(dup, true), Ok(()));
    assert_eq!(
        check(json!({"spec": {"ports": [{"port": 1}]}}), false),
        Err(".spec.ports: element 0: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)".into())
    );
    assert_eq!(
        check(json!({"spec": {"replicas": [1], "tags": {"a": 1}}}), false),
        Err("errors:\n  .spec.replicas: expected numeric (int or float), got []interface {}\n  .spec.tags: expected list, got &{map[a:1]}".into())
    );
    // metadata is ObjectMeta: an unknown field there is undeclared too
    assert!(check(json!({"metadata": {"bogus": 1}}), false).is_err());
    assert_eq!(
        check(json!({"metadata": {"labels": {"a": "b"}}}), false),
        Ok(())
    );
}
