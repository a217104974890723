//! The Go internals of the API types whose JSON form differs from their Go layout, rebuilt from
//! JSON as a JSON object keyed by the Go field names (the keys `upstream/cmd/spewtable` gives
//! the fields of these types), for the go-spew replay of [`spew`](super::spew).
//!
//! * `resource.Quantity` `{i {value scale} d {Dec} s Format}`: what `resource.ParseQuantity`
//!   builds from the string, including the cached string `s` it keeps for some inputs and the
//!   `inf.Dec` form (a `big.Int` of 64-bit words at scale 9) it falls back to for values an
//!   `int64` with a decimal scale cannot hold exactly. The API server serves quantities in
//!   canonical form, and upstream's controller parses that canonical string (from protobuf), so
//!   the canonical string is what must be parsed here.
//! * `intstr.IntOrString` `{Type IntVal StrVal}`.
//! * `metav1.Time` `{Time {wall ext loc}}`: null is the zero time; a timestamp decoded by Go is
//!   in `time.Local`, whose internals go-spew prints. They are written here as Go has them when
//!   its local zone is the UTC fallback (`TZ=UTC`, or no zone data): a kube-controller-manager
//!   with another local zone hashes templates that carry a timestamp differently (templates
//!   normally carry none: `creationTimestamp: null`). Sub-second parts are not served in JSON
//!   and count as zero.
//! * `metav1.FieldsV1` `{Raw}`: Go keeps the bytes the client sent, which the JSON served no
//!   longer shows; written as the compact serialization (best effort, not checked against Go).

use serde_json::{Value, json};

use super::quantity::{ParsedQuantity, parse_quantity};
use super::spew_layout::Json;

/// Seconds from 0001-01-01 to 1970-01-01, Go's `unixToInternal`.
const UNIX_TO_INTERNAL: i64 = 62_135_596_800;

/// The Go value behind `v` for a type whose JSON form is `json`.
pub fn go_internals(json: Json, v: &Value) -> Value {
    match json {
        Json::Plain => v.clone(),
        Json::Quantity => v.as_str().map_or(Value::Null, quantity),
        Json::IntOrString => match v {
            Value::String(s) => json!({"Type": 1, "StrVal": s}),
            Value::Number(n) => json!({"Type": 0, "IntVal": n}),
            _ => Value::Null,
        },
        Json::Time => v
            .as_str()
            .and_then(unix_seconds)
            .map_or(Value::Null, |secs| {
                json!({"Time": {
                    "wall": 0,
                    "ext": secs.saturating_add(UNIX_TO_INTERNAL),
                    "loc": {"name": "UTC"},
                }})
            }),
        Json::FieldsV1 => {
            let raw: Vec<Value> = serde_json::to_vec(v)
                .unwrap_or_default()
                .into_iter()
                .map(Value::from)
                .collect();
            json!({ "Raw": raw })
        }
    }
}

fn quantity(s: &str) -> Value {
    let Some(q) = parse_quantity(s) else {
        return Value::Null;
    };
    let ParsedQuantity {
        value,
        scale,
        dec,
        cached,
        format,
    } = q;
    let dec = dec.map_or(Value::Null, |d| {
        let words: Vec<Value> = [d.abs as u64, (d.abs >> 64) as u64]
            .into_iter()
            .take(if d.abs >> 64 != 0 {
                2
            } else {
                usize::from(d.abs != 0)
            })
            .map(Value::from)
            .collect();
        json!({"unscaled": {"neg": d.neg, "abs": words}, "scale": d.scale})
    });
    json!({
        "i": {"value": value, "scale": scale},
        "d": {"Dec": dec},
        "s": if cached { s } else { "" },
        "Format": format,
    })
}

/// Seconds since the Unix epoch of an RFC 3339 timestamp (`2024-05-01T10:00:00Z`, optional
/// fraction ignored as Go's JSON form of `metav1.Time` has none, optional numeric offset).
fn unix_seconds(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return None,
            };
            let hh: i64 = rest.get(1..3)?.parse().ok()?;
            let mm: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (hh * 3600 + mm * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_seconds_of_timestamps() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_seconds("2024-02-29T12:34:56Z"), Some(1_709_210_096));
        assert_eq!(
            unix_seconds("2024-02-29T14:34:56+02:00"),
            Some(1_709_210_096)
        );
        assert_eq!(unix_seconds("2024-02-29T12:34:56.5Z"), Some(1_709_210_096));
        assert_eq!(unix_seconds("garbage"), None);
    }
}
