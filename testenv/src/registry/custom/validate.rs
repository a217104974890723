//! Validation of a custom resource against its structural schema: kube-openapi's schema
//! validator (type, enum, bounds, lengths, pattern, formats, items, properties, required,
//! junctors) with its messages, turned into field errors as apiextensions-apiserver does
//! (`apiserver/validation.kubeOpenAPIResultToFieldErrors`), and with update ratcheting: a
//! value equal to the old object's value at the same place keeps its errors to itself.
//!
//! Not checked: `x-kubernetes-validations` (CEL rules), number formats (`int32` ranges),
//! `patternProperties`/`dependencies` (forbidden in CRDs anyway).

use serde_json::{Map, Value};

use super::formats::format_ok;
use super::go_format::{go_field_value, go_float, go_number};
use super::schema::Schema;
use crate::registry::api_status::{FieldError, FieldErrorType, go_quote};

/// Validate `new` (the object, or the `status` value with `prefix` `status`) against `schema`.
/// On updates `old` is the stored value at the same place: unchanged values are not reported.
pub fn validate(
    new: &Value,
    old: Option<&Value>,
    schema: &Schema,
    prefix: &str,
) -> Vec<FieldError> {
    let mut w = Walk {
        prefix,
        errs: Vec::new(),
    };
    w.node(new, old, schema, "");
    w.errs
}

struct Walk<'a> {
    prefix: &'a str,
    errs: Vec<FieldError>,
}

/// kube-openapi's JSON type name of a decoded value.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::String(_) => "string",
        Value::Number(n) if n.as_i64().is_some() => "integer",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn items_word(n: i64) -> &'static str {
    if n == 1 { "item" } else { "items" }
}

impl Walk<'_> {
    /// The field path of a kube-openapi name (`spec.replicas`, `.key` for additional
    /// properties at the root), under the prefix.
    fn field(&self, name: &str) -> String {
        let n = name.strip_prefix('.').unwrap_or(name);
        match (self.prefix.is_empty(), n.is_empty()) {
            (true, _) => n.to_string(),
            (false, true) => self.prefix.to_string(),
            (false, false) => format!("{}.{n}", self.prefix),
        }
    }

    fn invalid(&mut self, name: &str, value: String, detail: String) {
        let field = self.field(name);
        self.errs.push(FieldError::invalid(field, value, detail));
    }

    fn type_invalid(&mut self, name: &str, want: &str, actual: &str) {
        let field = self.field(name);
        self.errs.push(FieldError {
            kind: FieldErrorType::TypeInvalid,
            field,
            value: Some(go_quote(actual)),
            detail: format!(
                "{name} in body must be of type {want}: {}",
                go_quote(actual)
            ),
        });
    }

    fn too_many(&mut self, name: &str, actual: usize, max: i64) {
        let field = self.field(name);
        self.errs.push(FieldError {
            kind: FieldErrorType::TooMany,
            field,
            value: Some(actual.to_string()),
            detail: format!("must have at most {max} {}", items_word(max)),
        });
    }

    /// A junctor's error: not a kube-openapi validation error, so apiextensions reports it on
    /// the validated root (`<nil>` for a whole object) with an empty value.
    fn composite(&mut self, detail: String) {
        let field = if self.prefix.is_empty() {
            "<nil>".to_string()
        } else {
            self.prefix.to_string()
        };
        self.errs
            .push(FieldError::invalid(field, go_quote(""), detail));
    }

    fn node(&mut self, v: &Value, old: Option<&Value>, s: &Schema, name: &str) {
        if old == Some(v) {
            return;
        }
        let types = s.types();
        if v.is_null() {
            if !types.is_empty() && !s.nullable {
                self.type_invalid(name, &types.join(","), "null");
            }
            self.enum_check(v, s, name);
            return;
        }
        let actual = type_of(v);
        let float_int = matches!(v, Value::Number(n) if n.as_i64().is_none()
            && n.as_f64().is_some_and(|f| f.fract() == 0.0));
        // an integral float is an integer, an integer a number
        let type_ok = types.is_empty()
            || types.contains(&actual)
            || (float_int && types.contains(&"integer"))
            || (actual == "integer" && types.contains(&"number"));
        if !type_ok {
            self.type_invalid(name, &types.join(","), actual);
        }
        self.junctors(v, s, name);
        match v {
            Value::String(text) => {
                self.string_checks(text, s, name);
                if !s.format.is_empty() && format_ok(&s.format, text) == Some(false) {
                    self.type_invalid(name, &s.format, text);
                }
            }
            Value::Number(n) => self.number_checks(n, s, name),
            Value::Array(a) => self.array_checks(a, old.and_then(Value::as_array), s, name),
            _ => {}
        }
        self.enum_check(v, s, name);
        if let Value::Object(m) = v {
            self.object_checks(m, old.and_then(Value::as_object), s, name);
        }
    }

    fn junctors(&mut self, v: &Value, s: &Schema, name: &str) {
        let run = |sub: &Schema| {
            let mut w = Walk {
                prefix: self.prefix,
                errs: Vec::new(),
            };
            w.node(v, None, sub, name);
            w.errs
        };
        if !s.all_of.is_empty() {
            let results: Vec<Vec<FieldError>> = s.all_of.iter().map(run).collect();
            let valid = results.iter().filter(|r| r.is_empty()).count();
            for r in &results {
                self.errs.extend(r.iter().cloned());
            }
            if valid != results.len() {
                let extra = if valid == 0 { ". None validated" } else { "" };
                self.composite(format!(
                    "{} must validate all the schemas (allOf){extra}",
                    go_quote(name)
                ));
            }
        }
        if !s.any_of.is_empty() {
            let results: Vec<Vec<FieldError>> = s.any_of.iter().map(run).collect();
            if !results.iter().any(Vec::is_empty) {
                self.composite(format!(
                    "{} must validate at least one schema (anyOf)",
                    go_quote(name)
                ));
                if let Some(first) = results.into_iter().next() {
                    self.errs.extend(first);
                }
            }
        }
        if !s.one_of.is_empty() {
            let results: Vec<Vec<FieldError>> = s.one_of.iter().map(run).collect();
            let valid = results.iter().filter(|r| r.is_empty()).count();
            if valid != 1 {
                let extra = if valid == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {valid} valid alternatives")
                };
                self.composite(format!(
                    "{} must validate one and only one schema (oneOf). {extra}",
                    go_quote(name)
                ));
                if valid == 0
                    && let Some(first) = results.into_iter().next()
                {
                    self.errs.extend(first);
                }
            }
        }
        if let Some(not) = &s.not
            && run(not).is_empty()
        {
            self.composite(format!(
                "{} must not validate the schema (not)",
                go_quote(name)
            ));
        }
    }

    /// `maxLength`, `minLength`, `pattern`: the first that fails is reported.
    fn string_checks(&mut self, text: &str, s: &Schema, name: &str) {
        let chars = i64::try_from(text.chars().count()).unwrap_or(i64::MAX);
        if let Some(max) = s.max_length
            && chars > max
        {
            let field = self.field(name);
            let unit = if max == 1 { "byte" } else { "bytes" };
            self.errs.push(FieldError {
                kind: FieldErrorType::TooLong,
                field,
                value: None,
                detail: format!("may not be more than {max} {unit}"),
            });
            return;
        }
        if let Some(min) = s.min_length
            && chars < min
        {
            self.invalid(
                name,
                go_quote(text),
                format!("{name} in body should be at least {min} chars long"),
            );
            return;
        }
        if let Some(p) = &s.pattern {
            match &p.regex {
                Some(re) if re.is_match(text) => {}
                Some(_) => self.invalid(
                    name,
                    go_quote(text),
                    format!("{name} in body should match '{}'", p.source),
                ),
                None => self.invalid(
                    name,
                    go_quote(text),
                    format!(
                        "{name} in body should match '{}, but pattern is invalid'",
                        p.source
                    ),
                ),
            }
        }
    }

    /// `multipleOf`, `minimum`, `maximum`, each reported; integers compare as integers (the
    /// bounds truncated), as kube-openapi's native-type checks do.
    fn number_checks(&mut self, n: &serde_json::Number, s: &Schema, name: &str) {
        let shown = go_number(n);
        let int = n.as_i64();
        let f = n.as_f64().unwrap_or(0.0);
        let bound = |b: f64| match int {
            Some(_) => (b as i64).to_string(),
            None => go_float(b),
        };
        // the value's position relative to a bound: below, equal or above it
        let cmp = |b: f64| match int {
            Some(i) => i.cmp(&(b as i64)),
            None => f.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal),
        };
        if let Some(m) = s.multiple_of {
            let off = match int {
                Some(i) => (m as i64) != 0 && i % (m as i64) != 0,
                None => m != 0.0 && (f / m).fract() != 0.0,
            };
            if off {
                let detail = format!("{name} in body should be a multiple of {}", bound(m));
                self.invalid(name, shown.clone(), detail);
            }
        }
        if let Some((min, excl)) = s.minimum {
            let c = cmp(min);
            if c.is_lt() || (excl && c.is_eq()) {
                let op = if excl {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                let detail = format!("{name} in body should be {op} {}", bound(min));
                self.invalid(name, shown.clone(), detail);
            }
        }
        if let Some((max, excl)) = s.maximum {
            let c = cmp(max);
            if c.is_gt() || (excl && c.is_eq()) {
                let op = if excl {
                    "less than"
                } else {
                    "less than or equal to"
                };
                let detail = format!("{name} in body should be {op} {}", bound(max));
                self.invalid(name, shown, detail);
            }
        }
    }

    fn array_checks(&mut self, a: &[Value], old: Option<&Vec<Value>>, s: &Schema, name: &str) {
        if let Some(items) = &s.items {
            for (i, x) in a.iter().enumerate() {
                let prev = old.and_then(|o| correlate_item(s, x, o));
                self.node(x, prev, items, &format!("{name}[{i}]"));
            }
        }
        let len = a.len();
        let size = i64::try_from(len).unwrap_or(i64::MAX);
        if let Some(min) = s.min_items
            && size < min
        {
            self.invalid(
                name,
                len.to_string(),
                format!("{name} in body should have at least {min} items"),
            );
        }
        if let Some(max) = s.max_items
            && size > max
        {
            self.too_many(name, len, max);
        }
        if s.unique_items && a.iter().enumerate().any(|(i, x)| a[..i].contains(x)) {
            self.invalid(
                name,
                go_quote(""),
                format!("{name} in body shouldn't contain duplicates"),
            );
        }
    }

    fn enum_check(&mut self, v: &Value, s: &Schema, name: &str) {
        let Some(values) = &s.enum_values else {
            return;
        };
        if values.is_empty() || values.iter().any(|e| enum_matches(v, e)) {
            return;
        }
        let supported: Vec<String> = values
            .iter()
            .map(|e| match e {
                Value::String(x) => x.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            })
            .collect();
        let refs: Vec<&str> = supported.iter().map(String::as_str).collect();
        let field = self.field(name);
        self.errs
            .push(FieldError::not_supported(field, go_field_value(v), &refs));
    }

    fn object_checks(
        &mut self,
        m: &Map<String, Value>,
        old: Option<&Map<String, Value>>,
        s: &Schema,
        name: &str,
    ) {
        let size = i64::try_from(m.len()).unwrap_or(i64::MAX);
        if let Some(min) = s.min_properties
            && size < min
        {
            self.invalid(
                name,
                m.len().to_string(),
                format!("{name} in body should have at least {min} properties"),
            );
        }
        if let Some(max) = s.max_properties
            && size > max
        {
            self.too_many(name, m.len(), max);
        }
        let child_name = |k: &str| {
            if name.is_empty() {
                k.to_string()
            } else {
                format!("{name}.{k}")
            }
        };
        match &s.additional {
            Some(a) if !a.allows => {
                for k in m.keys().filter(|k| !s.properties.contains_key(*k)) {
                    self.invalid(
                        name,
                        go_quote(k),
                        format!("{name}.{k} in body is a forbidden property"),
                    );
                }
            }
            Some(a) => {
                if let Some(sub) = &a.schema {
                    for (k, x) in m.iter().filter(|(k, _)| !s.properties.contains_key(*k)) {
                        let prev = old.and_then(|o| o.get(k));
                        self.node(x, prev, sub, &format!("{name}.{k}"));
                    }
                }
            }
            None => {}
        }
        for (k, sub) in &s.properties {
            if let Some(x) = m.get(k) {
                // the root's kind and apiVersion are never ratcheted
                let prev = if name.is_empty() && (k == "kind" || k == "apiVersion") {
                    None
                } else {
                    old.and_then(|o| o.get(k))
                };
                self.node(x, prev, sub, &child_name(k));
            }
        }
        for k in &s.required {
            if !m.contains_key(k) {
                let field = self.field(&format!("{name}.{k}"));
                self.errs.push(FieldError::required(field, ""));
            }
        }
    }
}

/// Whether a value equals an enum entry (numbers by value, as Go converts before comparing).
fn enum_matches(v: &Value, e: &Value) -> bool {
    match (v, e) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => v == e,
    }
}

/// The old item an array item correlates with for ratcheting: by key in a `map` list, by
/// value in a `set`; items of atomic lists do not correlate.
fn correlate_item<'a>(s: &Schema, item: &Value, old: &'a [Value]) -> Option<&'a Value> {
    match s.list_type.as_deref() {
        Some("map") if !s.list_map_keys.is_empty() => old.iter().find(|o| {
            s.list_map_keys
                .iter()
                .all(|k| o.get(k).is_some() && o.get(k) == item.get(k))
        }),
        Some("set") => old.iter().find(|o| *o == item),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
