//! Selector errors, worded like apimachinery's (`field.Error`, aggregated).

use std::fmt;

/// One validation failure, formatted like apimachinery's `field.Error` of type
/// "Invalid value": `values[0][app]: Invalid value: "a b": <detail>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Field path, e.g. `key` or `values[0][app]` (may be empty, as upstream's parser).
    pub field: String,
    /// The offending value, already formatted the way Go's `%q` / `%#v` prints it.
    pub value: String,
    /// What is wrong.
    pub detail: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: Invalid value: {}", self.field, self.value)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Error building or parsing a [`Selector`](super::Selector).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// A syntax error in a selector string, e.g. `found ',', expected: identifier after ','`.
    #[error("{0}")]
    Syntax(String),
    /// Parsing a requirement failed (upstream prefixes such errors this way).
    #[error("unable to parse requirement: {0}")]
    Requirement(Box<SelectorError>),
    /// Key/value/operator validation failed (one or more field errors, aggregated
    /// like apimachinery's `ErrorList.ToAggregate()`).
    #[error("{}", aggregate(.0))]
    Invalid(Vec<FieldError>),
    /// A `LabelSelector` expression with an operator other than In/NotIn/Exists/DoesNotExist.
    #[error("{0:?} is not a valid label selector operator")]
    InvalidOperator(String),
}

fn aggregate(errs: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        let m = e.to_string();
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    match seen.len() {
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

pub(crate) use kcm_util::go_quote::go_quote;

/// Formats a string slice like Go's `%#v` of a `[]string`: `[]string{"a", "b"}`.
pub(crate) fn go_string_slice(v: &[String]) -> String {
    let inner: Vec<String> = v.iter().map(|s| go_quote(s)).collect();
    format!("[]string{{{}}}", inner.join(", "))
}
