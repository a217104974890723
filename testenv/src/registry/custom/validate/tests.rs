//! Table tests of the schema validation: kube-openapi's cases as apiextensions reports them.

use serde_json::{Value, json};

use super::validate;
use crate::registry::api_status::FieldError;
use crate::registry::custom::schema::Schema;

fn schema() -> Schema {
    Schema::from_json(&json!({
        "type": "object",
        "required": ["spec"],
        "properties": {
            "spec": {"type": "object", "required": ["size"], "properties": {
                "size": {"type": "string", "enum": ["small", "large"]},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                "ratio": {"type": "number", "exclusiveMinimum": true, "minimum": 0, "multipleOf": 0.5},
                "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
                "when": {"type": "string", "format": "date-time"},
                "port": {"x-kubernetes-int-or-string": true},
                "tags": {"type": "array", "maxItems": 2, "minItems": 1, "items": {"type": "string"}},
                "labels": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "integer"}},
                "opt": {"type": "string", "nullable": true},
                "flag": {"type": "boolean"},
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "integer"}}},
        },
    }))
}

fn texts(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(FieldError::text).collect()
}

fn with_spec(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": spec})
}

#[test]
fn kube_openapi_messages_table() {
    let s = schema();
    // (spec, expected error texts)
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"size": "small"}), vec![]),
        (
            json!({"size": "medium"}),
            vec![
                "spec.size: Unsupported value: \"medium\": supported values: \"small\", \"large\"",
            ],
        ),
        (json!({}), vec!["spec.size: Required value"]),
        (
            json!({"size": "small", "replicas": "3"}),
            vec![
                "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
            ],
        ),
        (
            json!({"size": "small", "replicas": 11}),
            vec![
                "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
            ],
        ),
        (
            json!({"size": "small", "replicas": 0}),
            vec![
                "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
            ],
        ),
        (
            json!({"size": "small", "replicas": 1.5}),
            vec![
                "spec.replicas: Invalid value: \"number\": spec.replicas in body must be of type integer: \"number\"",
            ],
        ),
        // an integral float is an integer
        (json!({"size": "small", "replicas": 2.0}), vec![]),
        (
            json!({"size": "small", "ratio": 0}),
            vec!["spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"],
        ),
        (
            json!({"size": "small", "ratio": 0.75}),
            vec!["spec.ratio: Invalid value: 0.75: spec.ratio in body should be a multiple of 0.5"],
        ),
        (
            json!({"size": "small", "name": "abcdef"}),
            vec!["spec.name: Too long: may not be more than 5 bytes"],
        ),
        (
            json!({"size": "small", "name": "a"}),
            vec![
                "spec.name: Invalid value: \"a\": spec.name in body should be at least 2 chars long",
            ],
        ),
        (
            json!({"size": "small", "name": "AB"}),
            vec!["spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"],
        ),
        (
            json!({"size": "small", "when": "yesterday"}),
            vec![
                "spec.when: Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\"",
            ],
        ),
        (json!({"size": "small", "port": 80}), vec![]),
        (json!({"size": "small", "port": "http"}), vec![]),
        (
            json!({"size": "small", "port": true}),
            vec![
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
            ],
        ),
        (
            json!({"size": "small", "tags": ["a", "b", "c"]}),
            vec!["spec.tags: Too many: 3: must have at most 2 items"],
        ),
        (
            json!({"size": "small", "tags": []}),
            vec!["spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"],
        ),
        (
            json!({"size": "small", "tags": ["a", 1]}),
            vec![
                "spec.tags[1]: Invalid value: \"integer\": spec.tags[1] in body must be of type string: \"integer\"",
            ],
        ),
        (
            json!({"size": "small", "labels": {"a": 1, "b": 2}}),
            vec!["spec.labels: Too many: 2: must have at most 1 item"],
        ),
        (
            json!({"size": "small", "labels": {"a": "x"}}),
            vec![
                "spec.labels.a: Invalid value: \"string\": spec.labels.a in body must be of type integer: \"string\"",
            ],
        ),
        (json!({"size": "small", "opt": null}), vec![]),
        (
            json!({"size": "small", "flag": null}),
            vec![
                "spec.flag: Invalid value: \"null\": spec.flag in body must be of type boolean: \"null\"",
            ],
        ),
    ];
    for (spec, want) in cases {
        let errs = validate(&with_spec(spec.clone()), None, &s, "");
        assert_eq!(texts(&errs), want, "{spec}");
    }
    let missing = validate(&json!({"metadata": {"name": "a"}}), None, &s, "");
    assert_eq!(texts(&missing), vec!["spec: Required value"]);
}

#[test]
fn status_is_validated_under_its_prefix() {
    let s = schema();
    let status_schema = &s.properties["status"];
    let errs = validate(&json!({"ready": "no"}), None, status_schema, "status");
    assert_eq!(
        texts(&errs),
        vec![
            "status.ready: Invalid value: \"string\": ready in body must be of type integer: \"string\""
        ]
    );
}

#[test]
fn ratcheting_keeps_unchanged_invalid_values() {
    let s = schema();
    let old = with_spec(json!({"size": "medium", "replicas": 20}));
    // unchanged invalid values pass; a changed one is reported
    let new = with_spec(json!({"size": "medium", "replicas": 20, "flag": true}));
    assert!(validate(&new, Some(&old), &s, "").is_empty());
    let new = with_spec(json!({"size": "medium", "replicas": 30}));
    assert_eq!(
        texts(&validate(&new, Some(&old), &s, "")),
        vec![
            "spec.replicas: Invalid value: 30: spec.replicas in body should be less than or equal to 10"
        ]
    );
}

#[test]
fn junctors() {
    let s = Schema::from_json(&json!({"type": "object", "properties": {
        "a": {"type": "string", "anyOf": [{"pattern": "^x"}, {"pattern": "^y"}]},
        "b": {"type": "string", "not": {"pattern": "^z"}},
        "c": {"type": "integer", "oneOf": [{"minimum": 1}, {"maximum": 5}]},
    }}));
    let ok = validate(&json!({"a": "xa", "b": "a", "c": 7}), None, &s, "");
    assert!(ok.is_empty(), "{:?}", texts(&ok));
    let t = texts(&validate(
        &json!({"a": "q", "b": "zz", "c": 3}),
        None,
        &s,
        "",
    ));
    assert!(
        t.contains(
            &"<nil>: Invalid value: \"\": \"a\" must validate at least one schema (anyOf)"
                .to_string()
        ),
        "{t:?}"
    );
    assert!(
        t.contains(
            &"<nil>: Invalid value: \"\": \"b\" must not validate the schema (not)".to_string()
        ),
        "{t:?}"
    );
    assert!(t.contains(&"<nil>: Invalid value: \"\": \"c\" must validate one and only one schema (oneOf). Found 2 valid alternatives".to_string()), "{t:?}");
}
