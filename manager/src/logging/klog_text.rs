//! klog's text format (the default of kube-controller-manager):
//! `I1124 10:00:00.000000    1234 app.rs:42] "starting controllers" controllers="[...]"`:
//! severity letter, month and day, local time to the microsecond, process id right-aligned in
//! 7 columns, file:line, then the quoted message and `key=value` pairs (strings quoted Go-style,
//! numbers and booleans bare).

use std::fmt::Write as _;

use tracing::Metadata;

use super::fields::{Fields, Value, short_file};
use super::format::LineFormat;

/// The klog text format.
#[derive(Debug, Default, Clone, Copy)]
pub struct KlogText;

impl LineFormat for KlogText {
    fn line(&self, metadata: &Metadata<'_>, fields: &Fields) -> String {
        let now = jiff::Zoned::now();
        format_line(
            severity(metadata.level()),
            &now.strftime("%m%d %H:%M:%S%.6f").to_string(),
            std::process::id(),
            short_file(metadata),
            metadata.line().unwrap_or(0),
            fields,
        )
    }
}

/// klog's severity letter: I, W, E (debug and trace are info at a higher `-v`).
fn severity(level: &tracing::Level) -> char {
    match *level {
        tracing::Level::ERROR => 'E',
        tracing::Level::WARN => 'W',
        _ => 'I',
    }
}

/// One log line without the trailing newline.
pub fn format_line(
    severity: char,
    time: &str,
    pid: u32,
    file: &str,
    line: u32,
    fields: &Fields,
) -> String {
    let mut out = format!("{severity}{time} {pid:>7} {file}:{line}] ");
    out.push_str(&go_quote(&fields.message));
    for (key, value) in &fields.pairs {
        out.push(' ');
        out.push_str(key);
        out.push('=');
        match value {
            Value::Str(s) => out.push_str(&go_quote(s)),
            Value::I64(n) => {
                let _ = write!(out, "{n}");
            }
            Value::U64(n) => {
                let _ = write!(out, "{n}");
            }
            Value::F64(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Bool(b) => {
                let _ = write!(out, "{b}");
            }
        }
    }
    out
}

pub(crate) use kcm_util::go_quote::go_quote;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_klogs_header_and_key_values() {
        let fields = Fields {
            message: "starting controllers".into(),
            pairs: vec![
                (
                    "controllers",
                    Value::Str("[\"deployment-controller\"]".into()),
                ),
                ("workers", Value::U64(5)),
                ("leader", Value::Bool(true)),
                ("err", Value::Str("line one\nline two".into())),
            ],
        };
        assert_eq!(
            format_line('I', "1124 10:00:00.000000", 1234, "app.rs", 42, &fields),
            "I1124 10:00:00.000000    1234 app.rs:42] \"starting controllers\" \
             controllers=\"[\\\"deployment-controller\\\"]\" workers=5 leader=true \
             err=\"line one\\nline two\""
        );
        let bare = Fields {
            message: "m".into(),
            pairs: vec![],
        };
        assert_eq!(
            format_line('E', "0101 00:00:00.000001", 7, "x.rs", 1, &bare),
            "E0101 00:00:00.000001       7 x.rs:1] \"m\""
        );
    }

    #[test]
    fn quoting_follows_go() {
        assert_eq!(go_quote("plain"), "\"plain\"");
        assert_eq!(go_quote("a\"b\\c\td\u{1}"), "\"a\\\"b\\\\c\\td\\x01\"");
        assert_eq!(go_quote("µs"), "\"µs\"");
    }
}
