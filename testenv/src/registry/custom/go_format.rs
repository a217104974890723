//! Values printed as Go prints them in kube-apiserver's messages: `%v` of a float64 (`1.5`,
//! `1e+06`), and a `field.Error`'s bad value (`%q` strings, `%v` numbers, JSON otherwise).

use serde_json::Value;

use crate::registry::api_status::go_quote;

/// Go's `%v` of a float64: the shortest digits, in `%e` form when the exponent is below -4 or
/// at least 6 (`1e+06`, `1.5e-05`), else as a decimal (`100000`, `0.25`).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `1.23456789e8`, `1e-5`
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// A JSON number as Go's `%v` prints the decoded value (int64, or float64 for the rest).
pub fn go_number(n: &serde_json::Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => go_float(n.as_f64().unwrap_or(0.0)),
    }
}

/// A value as a `field.Error` prints its bad value: strings quoted, numbers and booleans as
/// `%v`, anything else as JSON (`null`, `[1,2]`, `{"a":1}`).
pub fn go_field_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Number(n) => go_number(n),
        Value::Bool(b) => b.to_string(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_as_go_prints_them() {
        let cases = [
            (1.5, "1.5"),
            (10.0, "10"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (123456789.0, "1.23456789e+08"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (0.0, "0"),
        ];
        for (f, want) in cases {
            assert_eq!(go_float(f), want, "{f}");
        }
    }

    #[test]
    fn field_values() {
        assert_eq!(go_field_value(&json!("a")), "\"a\"");
        assert_eq!(go_field_value(&json!(3)), "3");
        assert_eq!(go_field_value(&json!(2.5)), "2.5");
        assert_eq!(go_field_value(&json!(null)), "null");
        assert_eq!(go_field_value(&json!([1, "x"])), "[1,\"x\"]");
    }
}
