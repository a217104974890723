//! Validation of a CRD version's `openAPIV3Schema` (upstream `apiserver/schema/validation.go`
//! structural rules, `defaulting/validation.go` and the common checks of
//! `apis/apiextensions/validation`'s `ValidateCustomResourceDefinitionOpenAPISchema`), with
//! upstream's field paths (`…openAPIV3Schema.properties[spec].type`) and texts.
//!
//! Not checked: CEL rules (`x-kubernetes-validations`), the cost estimates, the fields allowed
//! at the root with a status subresource, metadata defaults.

use serde_json::Value;

use super::prune::prune;
use super::schema::{Schema, compile_pattern};
use super::validate::validate;
use crate::registry::api_status::{FieldError, go_quote};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

fn flag(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn ty(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

fn props(v: &Value) -> Vec<(&String, &Value)> {
    v.get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

/// Validate one version's schema; `path` is `spec.versions[i].schema`.
pub fn validate_version_schema(
    schema: &Value,
    path: &str,
    status_enabled: bool,
) -> Vec<FieldError> {
    let root = format!("{path}.openAPIV3Schema");
    let mut errs = Vec::new();
    if status_enabled && !ty(schema).is_empty() && ty(schema) != "object" {
        errs.push(FieldError::invalid(
            format!("{root}.type"),
            go_quote(ty(schema)),
            "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
        ));
    }
    if flag(schema, "nullable") {
        errs.push(FieldError::forbidden(
            format!("{root}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let mut structural = Vec::new();
    invariants(schema, Level::Root, &root, &mut structural);
    structural.sort_by_key(FieldError::text);
    if structural.is_empty() {
        defaults(schema, &Schema::from_json(schema), true, &root, &mut errs);
    } else {
        errs.extend(structural);
    }
    openapi(schema, &root, &mut errs);
    errs
}

/// The schemas of `anyOf`, `allOf` and `oneOf`: `(keyword, index, schema)`.
fn junctors(s: &Value) -> impl Iterator<Item = (&'static str, usize, &Value)> {
    ["anyOf", "allOf", "oneOf"].into_iter().flat_map(move |k| {
        s.get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(move |(i, x)| (k, i, x))
    })
}

/// A `type` another rule needs: Required when missing, Invalid when another.
fn wrong_type(path: &str, t: &str, detail: &str, errs: &mut Vec<FieldError>) {
    let field = format!("{path}.type");
    errs.push(if t.is_empty() {
        FieldError::required(field, detail)
    } else {
        FieldError::invalid(field, go_quote(t), detail)
    });
}

/// The structural rules (`validateStructuralInvariants`): types specified, no
/// `additionalProperties` at the root, metadata restricted, junctors without types.
fn invariants(s: &Value, lvl: Level, path: &str, errs: &mut Vec<FieldError>) {
    let t = ty(s);
    if t == "array" && s.get("items").is_none() {
        errs.push(FieldError::required(
            format!("{path}.items"),
            "must be specified",
        ));
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        invariants(items, Level::Item, &format!("{path}.items"), errs);
    }
    for (k, p) in props(s) {
        invariants(p, Level::Field, &format!("{path}.properties[{k}]"), errs);
    }
    if let Some(a) = s.get("additionalProperties") {
        if lvl == Level::Root {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "must not be used at the root",
            ));
        }
        if a.is_object() {
            invariants(
                a,
                Level::Field,
                &format!("{path}.additionalProperties"),
                errs,
            );
        }
    }
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
    let embedded = flag(s, "x-kubernetes-embedded-resource");
    if int_or_string && preserve {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    // `anyOf: [{type: integer}, {type: string}]` is the int-or-string idiom, allowed as is
    let int_or_string_any_of = |v: Option<&Value>| {
        v == Some(&serde_json::json!([{"type": "integer"}, {"type": "string"}]))
    };
    let skip_first_all_of_any_of = int_or_string_any_of(
        s.get("allOf")
            .and_then(|a| a.get(0))
            .and_then(|x| x.get("anyOf")),
    );
    let skip_any_of = int_or_string_any_of(s.get("anyOf"));
    for (k, i, x) in junctors(s).filter(|(k, _, _)| !(skip_any_of && *k == "anyOf")) {
        let skip_nested_any_of = k == "allOf" && i == 0 && skip_first_all_of_any_of;
        nested(x, &format!("{path}.{k}[{i}]"), skip_nested_any_of, errs);
    }
    if let Some(n) = s.get("not").filter(|n| n.is_object()) {
        nested(n, &format!("{path}.not"), false, errs);
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str)
        && let Err(e) = compile_pattern(p)
    {
        errs.push(FieldError::invalid(
            format!("{path}.pattern"),
            go_quote(p),
            format!("must be a valid regular expression, but isn't: {e}"),
        ));
    }
    let check_metadata = lvl == Level::Root || embedded;
    if embedded && t != "object" {
        wrong_type(
            path,
            t,
            "must be object if x-kubernetes-embedded-resource is true",
            errs,
        );
    } else if t.is_empty() && !int_or_string && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(format!("{path}.type"), detail));
    }
    if lvl == Level::Root && !t.is_empty() && t != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            go_quote(t),
            "must be object at the root",
        ));
    }
    if check_metadata {
        for k in ["kind", "apiVersion"] {
            if let Some(p) = s.get("properties").and_then(|m| m.get(k))
                && ty(p) != "string"
            {
                errs.push(FieldError::invalid(
                    format!("{path}.properties[{k}].type"),
                    go_quote(ty(p)),
                    "must be string",
                ));
            }
        }
    }
    if let Some(m) = s.get("properties").and_then(|p| p.get("metadata")) {
        let mpath = format!("{path}.properties[metadata]");
        if check_metadata && ty(m) != "object" {
            errs.push(FieldError::invalid(
                format!("{mpath}.type"),
                go_quote(ty(m)),
                "must be object",
            ));
        }
        if lvl == Level::Root {
            let only_names = m.as_object().is_some_and(|o| {
                o.iter().all(|(k, v)| match k.as_str() {
                    "type" => true,
                    "properties" => v
                        .as_object()
                        .is_some_and(|p| p.keys().all(|n| n == "name" || n == "generateName")),
                    _ => false,
                })
            });
            if !only_names {
                errs.push(FieldError::forbidden(
                    mpath,
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                ));
            }
        }
    }
}

/// A junctor's schema (`allOf[i]`, …) may only hold value validations.
fn nested(s: &Value, path: &str, skip_any_of: bool, errs: &mut Vec<FieldError>) {
    let forbidden = [
        ("type", "must be empty to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("default", "must be undefined to be structural"),
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        (
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        ),
        (
            "x-kubernetes-map-type",
            "must be undefined to be structural",
        ),
    ];
    for (k, detail) in forbidden {
        let set = match s.get(k) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(x)) => !x.is_empty() || k.starts_with("x-"),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(_) => true,
        };
        if set {
            errs.push(FieldError::forbidden(format!("{path}.{k}"), detail));
        }
    }
    for (k, i, x) in junctors(s).filter(|(k, _, _)| !(skip_any_of && *k == "anyOf")) {
        nested(x, &format!("{path}.{k}[{i}]"), false, errs);
    }
    if let Some(n) = s.get("not").filter(|n| n.is_object()) {
        nested(n, &format!("{path}.not"), false, errs);
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        nested(items, &format!("{path}.items"), false, errs);
    }
    for (k, p) in props(s) {
        if k == "metadata" {
            errs.push(FieldError::forbidden(
                format!("{path}.properties[metadata]"),
                "must not be specified in a nested context",
            ));
        }
        nested(p, &format!("{path}.properties[{k}]"), false, errs);
    }
}

/// Defaults must validate against their schema and hold no pruned fields.
fn defaults(raw: &Value, s: &Schema, root: bool, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(d) = &s.default {
        let dpath = format!("{path}.default");
        // pruned as a property of a wrapper, so the object's own apiVersion/kind/metadata are
        // only kept when it is an embedded resource (or the resource itself)
        let mut holder = serde_json::json!({ "v": d });
        let mut wrapper = Schema {
            type_: "object".into(),
            ..Schema::default()
        };
        let mut inner = s.clone();
        inner.embedded_resource |= root;
        wrapper.properties.insert("v".into(), inner);
        prune(&mut holder, Some(&wrapper));
        if &holder["v"] != d {
            errs.push(FieldError::invalid(
                dpath.clone(),
                serde_json::to_string(d).unwrap_or_default(),
                "must not have unknown fields",
            ));
        } else {
            errs.extend(validate(d, None, s, &dpath));
        }
    }
    if let (Some(items), Some(raw_items)) = (&s.items, raw.get("items")) {
        defaults(raw_items, items, false, &format!("{path}.items"), errs);
    }
    for (k, sub) in &s.properties {
        if let Some(raw_sub) = raw.get("properties").and_then(|p| p.get(k)) {
            defaults(
                raw_sub,
                sub,
                false,
                &format!("{path}.properties[{k}]"),
                errs,
            );
        }
    }
}

/// The OpenAPI checks every node goes through (`specStandardValidatorV3` and friends).
fn openapi(s: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let t = ty(s);
    if !t.is_empty() && !TYPES.contains(&t) && t != "null" {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            go_quote(t),
            &TYPES,
        ));
    }
    if t == "null" {
        errs.push(FieldError::forbidden(
            format!("{path}.type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    for (k, detail) in [
        ("id", "id is not supported"),
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ] {
        if s.get(k).is_some_and(|v| !v.is_null()) {
            errs.push(FieldError::forbidden(format!("{path}.{k}"), detail));
        }
    }
    if s.get("items").is_some_and(Value::is_array) {
        errs.push(FieldError::forbidden(
            format!("{path}.items"),
            "items must be a schema object and not an array",
        ));
    }
    if flag(s, "uniqueItems") {
        errs.push(FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(a) = s.get("additionalProperties") {
        if !props(s).is_empty() && (a == &Value::Bool(false) || a.is_object()) {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if a.is_object() {
            openapi(a, &format!("{path}.additionalProperties"), errs);
        }
    }
    for (k, p) in props(s) {
        openapi(p, &format!("{path}.properties[{k}]"), errs);
    }
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            "false",
            "must be true or undefined",
        ));
    }
    if let Some(lt) = s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        if t != "array" {
            wrong_type(
                path,
                t,
                "must be array if x-kubernetes-list-type is specified",
                errs,
            );
        }
        if !["atomic", "set", "map"].contains(&lt) {
            errs.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-list-type"),
                go_quote(lt),
                &["atomic", "set", "map"],
            ));
        }
        let keys = s
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        if lt == "map" && !keys {
            errs.push(FieldError::required(
                format!("{path}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
    }
    for (k, i, x) in junctors(s) {
        openapi(x, &format!("{path}.{k}[{i}]"), errs);
    }
    if let Some(n) = s.get("not").filter(|n| n.is_object()) {
        openapi(n, &format!("{path}.not"), errs);
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        openapi(items, &format!("{path}.items"), errs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(schema: Value, status: bool) -> Vec<String> {
        validate_version_schema(&schema, "spec.versions[0].schema", status)
            .iter()
            .map(FieldError::text)
            .collect()
    }

    #[test]
    fn structural_and_openapi_rules() {
        let p = "spec.versions[0].schema.openAPIV3Schema";
        let cases: Vec<(Value, Vec<String>)> = vec![
            (
                json!({"type": "object", "properties": {"spec": {"type": "object"}}}),
                vec![],
            ),
            (
                json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}}),
                vec![format!(
                    "{p}.properties[spec].type: Required value: must not be empty for specified object fields"
                )],
            ),
            (
                json!({"type": "object", "properties": {"list": {"type": "array"}}}),
                vec![format!(
                    "{p}.properties[list].items: Required value: must be specified"
                )],
            ),
            (
                json!({"type": "string"}),
                vec![format!(
                    "{p}.type: Invalid value: \"string\": must be object at the root"
                )],
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                vec![format!(
                    "{p}.additionalProperties: Forbidden: must not be used at the root"
                )],
            ),
            (
                json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
                vec![format!(
                    "{p}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
                )],
            ),
            (
                json!({"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}}),
                vec![format!(
                    "{p}.properties[tags].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
                )],
            ),
            (
                json!({"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}),
                vec![format!(
                    "{p}.properties[n].default: Invalid value: \"string\":  in body must be of type integer: \"string\""
                )],
            ),
            (
                json!({"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}}}}),
                vec![format!(
                    "{p}.properties[o].default: Invalid value: {{\"a\":\"x\",\"b\":1}}: must not have unknown fields"
                )],
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "thing"}}}),
                vec![format!(
                    "{p}.properties[x].type: Unsupported value: \"thing\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
                )],
            ),
            (
                // the int-or-string idiom is allowed, other typed junctors are not
                json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}}}),
                vec![],
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "string", "oneOf": [{"type": "string"}, {"pattern": "a"}]}}}),
                vec![format!(
                    "{p}.properties[p].oneOf[0].type: Forbidden: must be empty to be structural"
                )],
            ),
        ];
        for (schema, want) in cases {
            assert_eq!(texts(schema.clone(), false), want, "{schema}");
        }
        assert_eq!(
            texts(json!({"type": "array", "items": {"type": "string"}}), true)[0],
            format!(
                "{p}.type: Invalid value: \"array\": only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled"
            )
        );
    }
}
