//! The structural schema of a custom resource version (upstream `apiserver/schema`'s
//! `Structural`): the part of a CRD's `openAPIV3Schema` the API server prunes, defaults and
//! validates with, read leniently from JSON (the CRD's own validation reports bad shapes).

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

use crate::registry::meta::strings;

/// `additionalProperties`: a schema for every other key, or a plain `true`/`false`.
#[derive(Debug, Clone)]
pub struct Additional {
    /// `true`, or a schema (which allows).
    pub allows: bool,
    /// The schema of the values.
    pub schema: Option<Box<Schema>>,
}

/// A compiled `pattern`.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The source text (used in messages).
    pub source: String,
    /// The compiled expression (`None` when it does not compile).
    pub regex: Option<Regex>,
}

/// One node of a structural schema.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// `type` (`""` when unset).
    pub type_: String,
    /// `nullable`.
    pub nullable: bool,
    /// `format`.
    pub format: String,
    /// `properties`, by name.
    pub properties: BTreeMap<String, Schema>,
    /// `items`.
    pub items: Option<Box<Schema>>,
    /// `additionalProperties`.
    pub additional: Option<Additional>,
    /// `default`.
    pub default: Option<Value>,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-int-or-string: true`.
    pub int_or_string: bool,
    /// `x-kubernetes-embedded-resource: true`.
    pub embedded_resource: bool,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<String>,
    /// `required`.
    pub required: Vec<String>,
    /// `enum`.
    pub enum_values: Option<Vec<Value>>,
    /// `maximum` and `exclusiveMaximum`.
    pub maximum: Option<(f64, bool)>,
    /// `minimum` and `exclusiveMinimum`.
    pub minimum: Option<(f64, bool)>,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `pattern`.
    pub pattern: Option<Pattern>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `allOf`.
    pub all_of: Vec<Schema>,
    /// `anyOf`.
    pub any_of: Vec<Schema>,
    /// `oneOf`.
    pub one_of: Vec<Schema>,
    /// `not`.
    pub not: Option<Box<Schema>>,
}

fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn list(v: &Value, key: &str) -> Vec<Schema> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(Schema::from_json).collect())
        .unwrap_or_default()
}

/// Compile a JSON-schema `pattern` as Go's `regexp` would (unanchored search).
pub fn compile_pattern(source: &str) -> Result<Regex, regex::Error> {
    Regex::new(source)
}

impl Schema {
    /// Read a schema node (`openAPIV3Schema` or any node below it).
    pub fn from_json(v: &Value) -> Schema {
        let additional = match v.get("additionalProperties") {
            Some(Value::Bool(b)) => Some(Additional {
                allows: *b,
                schema: None,
            }),
            Some(s @ Value::Object(_)) => Some(Additional {
                allows: true,
                schema: Some(Box::new(Schema::from_json(s))),
            }),
            _ => None,
        };
        let strings = |key: &str| strings(v.get(key));
        Schema {
            type_: text(v, "type"),
            nullable: flag(v, "nullable"),
            format: text(v, "format"),
            properties: v
                .get("properties")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, s)| (k.clone(), Schema::from_json(s)))
                        .collect()
                })
                .unwrap_or_default(),
            items: v
                .get("items")
                .filter(|i| i.is_object())
                .map(|i| Box::new(Schema::from_json(i))),
            additional,
            default: v.get("default").cloned(),
            preserve_unknown_fields: flag(v, "x-kubernetes-preserve-unknown-fields"),
            int_or_string: flag(v, "x-kubernetes-int-or-string"),
            embedded_resource: flag(v, "x-kubernetes-embedded-resource"),
            list_type: v
                .get("x-kubernetes-list-type")
                .and_then(Value::as_str)
                .map(str::to_string),
            list_map_keys: strings("x-kubernetes-list-map-keys"),
            map_type: v
                .get("x-kubernetes-map-type")
                .and_then(Value::as_str)
                .map(str::to_string),
            required: strings("required"),
            enum_values: v.get("enum").and_then(Value::as_array).cloned(),
            maximum: num(v, "maximum").map(|m| (m, flag(v, "exclusiveMaximum"))),
            minimum: num(v, "minimum").map(|m| (m, flag(v, "exclusiveMinimum"))),
            multiple_of: num(v, "multipleOf"),
            max_length: int(v, "maxLength"),
            min_length: int(v, "minLength"),
            pattern: v.get("pattern").and_then(Value::as_str).map(|p| Pattern {
                source: p.to_string(),
                regex: compile_pattern(p).ok(),
            }),
            max_items: int(v, "maxItems"),
            min_items: int(v, "minItems"),
            unique_items: flag(v, "uniqueItems"),
            max_properties: int(v, "maxProperties"),
            min_properties: int(v, "minProperties"),
            all_of: list(v, "allOf"),
            any_of: list(v, "anyOf"),
            one_of: list(v, "oneOf"),
            not: v
                .get("not")
                .filter(|n| n.is_object())
                .map(|n| Box::new(Schema::from_json(n))),
        }
    }

    /// The schema of the value under `key` of an object: a property, or `additionalProperties`.
    pub fn child(&self, key: &str) -> Option<&Schema> {
        self.properties
            .get(key)
            .or_else(|| self.additional.as_ref().and_then(|a| a.schema.as_deref()))
    }

    /// The types a value may have, as kube-openapi lists them in messages (`integer,string`
    /// for `x-kubernetes-int-or-string`).
    pub fn types(&self) -> Vec<&str> {
        if self.int_or_string {
            vec!["integer", "string"]
        } else if self.type_.is_empty() {
            Vec::new()
        } else {
            vec![self.type_.as_str()]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_structural_parts() {
        let s = Schema::from_json(&json!({
            "type": "object",
            "required": ["spec"],
            "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "exclusiveMaximum": true, "default": 1},
                    "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                    "port": {"x-kubernetes-int-or-string": true},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }},
            },
        }));
        assert_eq!(s.required, vec!["spec"]);
        let spec = &s.properties["spec"];
        let r = &spec.properties["replicas"];
        assert_eq!(
            (r.minimum, r.maximum, r.default.clone()),
            (Some((0.0, false)), Some((10.0, true)), Some(json!(1)))
        );
        let name = &spec.properties["name"];
        assert!(
            name.pattern
                .as_ref()
                .and_then(|p| p.regex.as_ref())
                .is_some_and(|r| r.is_match("abc"))
        );
        assert_eq!(spec.properties["port"].types(), vec!["integer", "string"]);
        assert_eq!(
            spec.properties["labels"]
                .child("x")
                .map(|c| c.type_.as_str()),
            Some("string")
        );
        assert!(spec.properties["free"].preserve_unknown_fields);
        let bad = Schema::from_json(&json!({"pattern": "(["}));
        assert!(bad.pattern.is_some_and(|p| p.regex.is_none()));
    }
}
