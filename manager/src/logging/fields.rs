//! An event's fields as ordered key/value pairs, the shape both of kcm's log formats print.

use std::fmt;

use tracing::field::{Field, Visit};

/// A field value, kept typed so that numbers and booleans print unquoted.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string (also anything logged with `%` or `?`).
    Str(String),
    /// A signed integer.
    I64(i64),
    /// An unsigned integer.
    U64(u64),
    /// A float.
    F64(f64),
    /// A boolean.
    Bool(bool),
}

/// The message and the other fields of one event, in the order they were written. tracing's
/// `error` key is renamed `err`, klog's and component-base's name for it.
#[derive(Debug, Default)]
pub struct Fields {
    /// The event's message.
    pub message: String,
    /// The other fields.
    pub pairs: Vec<(&'static str, Value)>,
}

impl Fields {
    fn push(&mut self, field: &Field, value: Value) {
        match field.name() {
            "message" => {
                self.message = match value {
                    Value::Str(s) => s,
                    other => format!("{other:?}"),
                }
            }
            "error" => self.pairs.push(("err", value)),
            name => self.pairs.push((name, value)),
        }
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, Value::Str(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, Value::Str(value.to_string()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, Value::I64(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.push(field, Value::U64(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, Value::F64(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, Value::Bool(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.push(field, Value::Str(crate::error_chain::display(value)));
    }
}

/// The klog verbosity an event was logged at: info 0, debug 2 (kcm's `-v=2` writes), trace 5.
pub fn verbosity(level: &tracing::Level) -> u8 {
    match *level {
        tracing::Level::TRACE => 5,
        tracing::Level::DEBUG => 2,
        _ => 0,
    }
}

/// The file name (without folders) of the code that logged.
pub fn short_file<'a>(metadata: &tracing::Metadata<'a>) -> &'a str {
    let file = metadata.file().unwrap_or("???");
    file.rsplit('/').next().unwrap_or(file)
}
