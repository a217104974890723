//! component-base's JSON log format (`--logging-format=json`), one object a line:
//! `{"ts":1700000000000.123,"caller":"app.rs:42","msg":"...","v":0,"key":"value"}`. `ts` is
//! milliseconds since the epoch; info lines carry their verbosity `v`; error lines carry no
//! `v` and put `err` last, as zapr does.

use tracing::Metadata;

use super::fields::{Fields, Value, short_file, verbosity};
use super::format::LineFormat;

/// component-base's JSON format.
#[derive(Debug, Default, Clone, Copy)]
pub struct Json;

impl LineFormat for Json {
    fn line(&self, metadata: &Metadata<'_>, fields: &Fields) -> String {
        let ts = jiff::Timestamp::now().as_nanosecond() as f64 / 1e6;
        let caller = format!("{}:{}", short_file(metadata), metadata.line().unwrap_or(0));
        let v = (*metadata.level() != tracing::Level::ERROR).then(|| verbosity(metadata.level()));
        format_line(ts, &caller, v, fields)
    }
}

fn json_value(value: &Value) -> serde_json::Value {
    match value {
        Value::Str(s) => serde_json::Value::from(s.as_str()),
        Value::I64(n) => serde_json::Value::from(*n),
        Value::U64(n) => serde_json::Value::from(*n),
        Value::F64(n) => serde_json::Value::from(*n),
        Value::Bool(b) => serde_json::Value::from(*b),
    }
}

fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// One log line without the trailing newline; `v` is `None` for errors.
pub fn format_line(ts: f64, caller: &str, v: Option<u8>, fields: &Fields) -> String {
    let mut out = format!(
        "{{\"ts\":{ts:.3},\"caller\":{},\"msg\":{}",
        quoted(caller),
        quoted(&fields.message)
    );
    if let Some(v) = v {
        out.push_str(&format!(",\"v\":{v}"));
    }
    let (errs, others): (Vec<_>, Vec<_>) = fields
        .pairs
        .iter()
        .partition(|(key, _)| v.is_none() && *key == "err");
    for (key, value) in others.into_iter().chain(errs) {
        out.push_str(&format!(",{}:{}", quoted(key), json_value(value)));
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_component_bases_keys() {
        let fields = Fields {
            message: "wrong namespace".into(),
            pairs: vec![
                ("err", Value::Str("invalid namespace:default".into())),
                ("ns", Value::Str("default".into())),
                ("podnum", Value::I64(2)),
            ],
        };
        assert_eq!(
            format_line(1700000000000.125, "app.rs:7", None, &fields),
            r#"{"ts":1700000000000.125,"caller":"app.rs:7","msg":"wrong namespace","ns":"default","podnum":2,"err":"invalid namespace:default"}"#
        );
        assert_eq!(
            format_line(1.5, "a.rs:1", Some(2), &fields),
            r#"{"ts":1.500,"caller":"a.rs:1","msg":"wrong namespace","v":2,"err":"invalid namespace:default","ns":"default","podnum":2}"#
        );
        let line = format_line(1.0, "a.rs:1", Some(0), &Fields::default());
        let parsed: serde_json::Value = serde_json::from_str(&line).expect("valid JSON");
        assert_eq!(parsed["v"], 0);
    }
}
