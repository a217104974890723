//! Whether a value fits its type (structured-merge-diff's `typed/validate.go`): scalars of
//! the right kind, no field a struct does not declare, list items that name themselves, and
//! (unless allowed, as for live objects) no two items of an associative list with one name.

use serde_json::{Map, Value};

use super::items::item_element;
use super::{Part, TypeErrors, key_type, part, resolve};
use crate::registry::apply::path::{Path, PathElement};
use crate::registry::apply::schema::{ListType, MapType, Scalar, TypeRef, TypedSchema};
use crate::registry::custom::go_format::go_float;

/// Check `value` against the schema's root type.
pub fn validate(
    schema: &TypedSchema,
    value: &Value,
    allow_duplicates: bool,
) -> Result<(), TypeErrors> {
    let w = Validator {
        schema,
        allow_duplicates,
    };
    w.node(schema.root(), value, &mut Path::default())
        .into_result()
}

struct Validator<'a> {
    schema: &'a TypedSchema,
    allow_duplicates: bool,
}

impl Validator<'_> {
    fn node(&self, tr: &TypeRef, v: &Value, path: &mut Path) -> TypeErrors {
        let atom = match resolve(self.schema, tr, path) {
            Ok(a) => a.deduce(Some(v)),
            Err(e) => return e,
        };
        match part(&atom, tr, path) {
            Ok(Part::Map(m)) => self.map(m, v, path),
            Ok(Part::Scalar(s)) => match scalar_error(s, Some(v), "") {
                Some(msg) => TypeErrors::at(path, msg),
                None => TypeErrors::default(),
            },
            Ok(Part::List(l)) => self.list(l, v, path),
            Err(e) => e,
        }
    }

    fn list(&self, t: &ListType, v: &Value, path: &mut Path) -> TypeErrors {
        let items = match v {
            Value::Null => return TypeErrors::default(),
            Value::Array(items) => items,
            other => {
                return TypeErrors::at(path, format!("expected list, got &{{{}}}", go_v(other)));
            }
        };
        let mut errs = TypeErrors::default();
        let mut seen: Vec<PathElement> = Vec::new();
        for (i, child) in items.iter().enumerate() {
            let pe = if t.atomic {
                PathElement::Index(i as i64)
            } else {
                match item_element(self.schema, t, child) {
                    Ok(pe) => pe,
                    Err(e) => {
                        errs.extend(TypeErrors::at(path, format!("element {i}: {e}")));
                        return errs;
                    }
                }
            };
            if !t.atomic {
                if seen.contains(&pe) && !self.allow_duplicates {
                    errs.extend(TypeErrors::at(
                        path,
                        format!("duplicate entries for key {pe}"),
                    ));
                }
                seen.push(pe.clone());
            }
            path.0.push(pe);
            errs.extend(self.node(&t.element, child, path));
            path.0.pop();
        }
        errs
    }

    fn map(&self, t: &MapType, v: &Value, path: &mut Path) -> TypeErrors {
        let m: &Map<String, Value> = match v {
            Value::Null => return TypeErrors::default(),
            Value::Object(m) => m,
            other => {
                return TypeErrors::at(path, format!("expected map, got &{{{}}}", go_v(other)));
            }
        };
        let mut errs = TypeErrors::default();
        for (key, child) in m {
            path.0.push(PathElement::field(key.as_str()));
            match key_type(t, key) {
                Some(tr) => errs.extend(self.node(&tr, child, path)),
                None => {
                    errs.extend(TypeErrors::at(path, "field not declared in schema"));
                    path.0.pop();
                    // upstream stops at the first undeclared field
                    return errs;
                }
            }
            path.0.pop();
        }
        errs
    }
}

/// Why a value is not a scalar of kind `t` (`None` when it is, or is missing or null);
/// `side` prefixes the message (`lhs: `) in merges and comparisons.
pub(crate) fn scalar_error(t: Scalar, v: Option<&Value>, side: &str) -> Option<String> {
    let v = match v {
        None | Some(Value::Null) => return None,
        Some(v) => v,
    };
    let ok = match t {
        Scalar::Numeric => v.is_number(),
        Scalar::String => v.is_string(),
        Scalar::Boolean => v.is_boolean(),
        Scalar::Untyped => !v.is_array() && !v.is_object(),
    };
    if ok {
        return None;
    }
    Some(match t {
        Scalar::Numeric => format!("{side}expected numeric (int or float), got {}", go_type(v)),
        Scalar::String => format!(
            "{side}expected string, got &value.valueUnstructured{{Value:{}}}",
            go_v(v)
        ),
        Scalar::Boolean => format!("{side}expected boolean, got &{{{}}}", go_v(v)),
        Scalar::Untyped => format!("{side}expected any scalar, got &{{{}}}", go_v(v)),
    })
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value (`[1 2]`, `map[a:1]`).
fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_v).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m.iter().map(|(k, x)| format!("{k}:{}", go_v(x))).collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
