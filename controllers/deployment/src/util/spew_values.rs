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

use k8s_openapi::jiff::Timestamp;
use kcm_util::quantity::{Amount, Quantity};
use serde_json::{Value, json};

use super::spew_layout::Json;

/// Seconds from 0001-01-01 to 1970-01-01, Go's `unixToInternal`.
const UNIX_TO_INTERNAL: i64 = 62_135_596_800;

/// The Go value behind `v` for a type whose JSON form is `json`.
pub(crate) fn go_internals(json: Json, v: &Value) -> Value {
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
    let Ok(q) = Quantity::parse(s) else {
        return Value::Null;
    };
    let (int, dec) = match q.amount() {
        Amount::Int { value, scale } => ((value, scale), Value::Null),
        Amount::Dec(d) => {
            // A `big.Int`'s magnitude: little-endian 64-bit words, none for zero.
            let words: Vec<Value> = [d.magnitude as u64, (d.magnitude >> 64) as u64]
                .into_iter()
                .take(if d.magnitude >> 64 != 0 {
                    2
                } else {
                    usize::from(d.magnitude != 0)
                })
                .map(Value::from)
                .collect();
            let dec = json!({"unscaled": {"neg": d.negative, "abs": words}, "scale": d.scale});
            ((0, 0), dec)
        }
    };
    json!({
        "i": {"value": int.0, "scale": int.1},
        "d": {"Dec": dec},
        "s": q.cached().unwrap_or_default(),
        "Format": q.format().as_str(),
    })
}

/// Seconds since the Unix epoch of an RFC 3339 timestamp (`2024-05-01T10:00:00Z`, with an
/// optional fraction, which Go's JSON form of `metav1.Time` never has, and offset).
fn unix_seconds(s: &str) -> Option<i64> {
    s.parse::<Timestamp>().ok().map(|t| t.as_second())
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
