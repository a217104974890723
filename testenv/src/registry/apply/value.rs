//! Values as structured-merge-diff sees them (`value/value.go`, `value/fields.go`): a total
//! order (numbers first, ints and floats compared numerically, then strings, booleans, lists,
//! maps, null), equality where `1` equals `1.0`, the `%v`-like text of a value in paths
//! (`[name="c"]`), and JSON written byte for byte as Go's `encoding/json` writes it (HTML
//! characters escaped, floats in Go's shortest form), which FieldsV1 keys and manager
//! identifiers need.

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use crate::registry::custom::go_format::go_float;
use kcm_util::go_quote::go_quote;

/// A number as structured-merge-diff holds it: an int64 or a float64.
enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    if a > b {
        Ordering::Greater
    } else if a < b {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// The rank of a value's kind in the order: numbers, strings, booleans, lists, maps, null.
fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

/// The order of two values (`value.Compare`).
pub fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (num(x), num(y)) {
            (Num::Int(i), Num::Int(j)) => i.cmp(&j),
            (Num::Int(i), Num::Float(g)) => float_cmp(i as f64, g),
            (Num::Float(f), Num::Int(j)) => float_cmp(f, j as f64),
            (Num::Float(f), Num::Float(g)) => float_cmp(f, g),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                let c = compare(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => compare_maps(x, y),
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Maps walked in key order: the first key only one side has decides (the side that has
/// it is smaller), then the first differing value; a map that ends first is smaller.
fn compare_maps(x: &Map<String, Value>, y: &Map<String, Value>) -> Ordering {
    let mut xi = x.iter().peekable();
    let mut yi = y.iter().peekable();
    loop {
        match (xi.peek(), yi.peek()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((kx, vx)), Some((ky, vy))) => match kx.cmp(ky) {
                Ordering::Less => return Ordering::Less,
                Ordering::Greater => return Ordering::Greater,
                Ordering::Equal => {
                    let c = compare(vx, vy);
                    if c != Ordering::Equal {
                        return c;
                    }
                    xi.next();
                    yi.next();
                }
            },
        }
    }
}

/// Equality of two values (`value.Equals`): numbers by value, the rest structurally.
pub fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => compare(a, b) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| equals(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equals(v, w)))
        }
        _ => a == b,
    }
}

/// A float64 in `encoding/json`'s exponent form: `1e+21`, `1.5e-7` (Go pads positive
/// exponents to two digits and drops the padding of negative one-digit ones).
fn json_exponent_form(f: f64) -> String {
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < 0 {
        format!("{mantissa}e-{}", -exp)
    } else {
        format!("{mantissa}e+{exp:02}")
    }
}

/// A value as structured-merge-diff prints it in paths (`value.ToString`): strings quoted as
/// Go's `%q`, numbers and booleans as `%v`, lists `[a,b]`, maps `k=v` pairs, `null`.
pub fn to_text(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Number(n) => match num(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float(f),
        },
        Value::String(s) => go_quote(s),
        Value::Bool(b) => b.to_string(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(to_text).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", to_text(v)))
            .collect(),
    }
}

/// Append `s` as a JSON string the way Go's `encoding/json` writes it: `<`, `>`, `&`,
/// U+2028 and U+2029 escaped as `\u....`, control characters as `\n`, `\r`, `\t` or
/// `\u00XX`.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Append a number as Go's `encoding/json` writes an int64 or float64.
fn write_json_number(out: &mut String, n: &Number) {
    match num(n) {
        Num::Int(i) => out.push_str(&i.to_string()),
        Num::Float(f) => {
            let abs = f.abs();
            if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
                out.push_str(&json_exponent_form(f));
            } else {
                out.push_str(&format!("{f}"));
            }
        }
    }
}

/// Append `v` as Go's `encoding/json` writes the unstructured value (map keys sorted).
pub fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_json_number(out, n),
        Value::String(s) => write_json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(out, k);
                out.push(':');
                write_json(out, x);
            }
            out.push('}');
        }
    }
}

/// `v` as Go's `encoding/json` writes it.
pub fn to_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn order_of_kinds_and_numbers() {
        // numbers < strings < booleans < lists < maps < null; ints and floats by value
        let ordered = [
            json!(-1.5),
            json!(1),
            json!(1.5),
            json!(2),
            json!("a"),
            json!("b"),
            json!(false),
            json!(true),
            json!([]),
            json!([1]),
            json!([1, 2]),
            json!([2]),
            json!({}),
            json!({"a": 1}),
            json!({"a": 2}),
            json!({"b": 1}),
            json!(null),
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(compare(a, b), i.cmp(&j), "{a} vs {b}");
            }
        }
        assert_eq!(compare(&json!(1), &json!(1.0)), Ordering::Equal);
        assert!(equals(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!equals(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!equals(&json!("1"), &json!(1)));
    }

    #[test]
    fn text_of_values() {
        let cases = [
            (json!("c"), "\"c\""),
            (json!(80), "80"),
            (json!(2.5), "2.5"),
            (json!(true), "true"),
            (json!(null), "null"),
            (json!([1, "a"]), "[1,\"a\"]"),
            (json!({"a": 1, "b": "x"}), "a=1b=\"x\""),
            (json!(1e22), "1e+22"),
        ];
        for (v, want) in cases {
            assert_eq!(to_text(&v), want);
        }
        assert_eq!(go_quote("a\"b\\\u{1}é"), "\"a\\\"b\\\\\\x01é\"");
    }

    #[test]
    fn json_as_go_writes_it() {
        let cases = [
            (json!("a<b>&c"), r#""a\u003cb\u003e\u0026c""#),
            (json!("line\nnext\u{1}"), r#""line\nnext\u0001""#),
            (
                json!({"b": 1, "a": [true, null]}),
                r#"{"a":[true,null],"b":1}"#,
            ),
            (json!(1.5), "1.5"),
            (json!(3.0), "3"),
            (json!(1e21), "1e+21"),
            (json!(1.5e-7), "1.5e-7"),
            (json!(0.000001), "0.000001"),
            (json!(-12), "-12"),
        ];
        for (v, want) in cases {
            assert_eq!(to_json(&v), want);
        }
    }
}
