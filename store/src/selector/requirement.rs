//! One selector requirement: key, operator, values (apimachinery `labels.Requirement`).

use std::collections::BTreeMap;
use std::fmt;

use super::error::{FieldError, SelectorError, go_quote, go_string_slice};
use super::labels::Labels;
use super::validation::{is_qualified_name, is_valid_label_value};

/// A selector operator (apimachinery `selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// `!key`
    DoesNotExist,
    /// `key=value`
    Equals,
    /// `key==value`
    DoubleEquals,
    /// `key in (v1,v2)`
    In,
    /// `key!=value`
    NotEquals,
    /// `key notin (v1,v2)`
    NotIn,
    /// `key`
    Exists,
    /// `key>n` (integer comparison)
    GreaterThan,
    /// `key<n` (integer comparison)
    LessThan,
}

impl Operator {
    /// Upstream's string for the operator (`selection.Operator` value).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::DoesNotExist => "!",
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::In => "in",
            Operator::NotEquals => "!=",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One requirement of a [`Selector`](super::Selector), e.g. `tier in (web,db)`.
///
/// ```
/// use std::collections::BTreeMap;
/// use kcm_store::selector::{Operator, Requirement};
/// let r = Requirement::new("tier", Operator::In, ["web", "db"]).unwrap();
/// assert_eq!(r.to_string(), "tier in (db,web)");
/// let labels = BTreeMap::from([("tier".to_string(), "db".to_string())]);
/// assert!(r.matches(&labels));
/// assert!(Requirement::new("tier", Operator::Equals, ["a", "b"]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Builds a validated requirement, like apimachinery's `NewRequirement`: the key must be a
    /// qualified name; `in`/`notin` need at least one value; `=`, `==`, `!=` exactly one;
    /// exists/does-not-exist none; `gt`/`lt` exactly one integer; every value must be a valid
    /// label value. All problems are reported together.
    pub fn new<I>(key: &str, operator: Operator, values: I) -> Result<Requirement, SelectorError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        let mut errs = Vec::new();
        if let Some(e) = validate_label_key(key, "key") {
            errs.push(e);
        }
        let invalid_values = |detail: &str| FieldError {
            field: "values".to_string(),
            value: go_string_slice(&values),
            detail: detail.to_string(),
        };
        match operator {
            Operator::In | Operator::NotIn => {
                if values.is_empty() {
                    errs.push(invalid_values(
                        "for 'in', 'notin' operators, values set can't be empty",
                    ));
                }
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals => {
                if values.len() != 1 {
                    errs.push(invalid_values(
                        "exact-match compatibility requires one single value",
                    ));
                }
            }
            Operator::Exists | Operator::DoesNotExist => {
                if !values.is_empty() {
                    errs.push(invalid_values(
                        "values set must be empty for exists and does not exist",
                    ));
                }
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(invalid_values(
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(FieldError {
                            field: format!("values[{i}]"),
                            value: go_quote(v),
                            detail: "for 'Gt', 'Lt' operators, the value must be an integer"
                                .to_string(),
                        });
                    }
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let errs_v = is_valid_label_value(v);
            if !errs_v.is_empty() {
                errs.push(FieldError {
                    field: format!("values[{i}][{key}]"),
                    value: go_quote(v),
                    detail: errs_v.join("; "),
                });
            }
        }
        if !errs.is_empty() {
            return Err(SelectorError::Invalid(errs));
        }
        Ok(Requirement {
            key: key.to_string(),
            operator,
            values,
        })
    }

    /// An unvalidated requirement (like building `labels.Requirement` directly, as
    /// `SelectorFromValidatedSet` does).
    pub(crate) fn new_unchecked(key: String, operator: Operator, values: Vec<String>) -> Self {
        Requirement {
            key,
            operator,
            values,
        }
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, in the order given.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    fn has_value(&self, v: &str) -> bool {
        self.values.iter().any(|x| x == v)
    }

    /// Whether the labels satisfy this requirement (apimachinery `Requirement.Matches`).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_labels(labels)
    }

    /// Like [`Requirement::matches`] for labels kept in any shape ([`Labels`]).
    pub fn matches_labels<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        let got = labels.get(&self.key);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                got.is_some_and(|v| self.has_value(v))
            }
            Operator::NotIn | Operator::NotEquals => got.is_none_or(|v| !self.has_value(v)),
            Operator::Exists => got.is_some(),
            Operator::DoesNotExist => got.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(Ok(have)) = got.map(|v| v.parse::<i64>()) else {
                    return false;
                };
                let [want] = self.values.as_slice() else {
                    return false;
                };
                let Ok(want) = want.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let op = match self.operator {
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
        };
        f.write_str(op)?;
        let paren = matches!(self.operator, Operator::In | Operator::NotIn);
        if paren {
            f.write_str("(")?;
        }
        if self.values.len() == 1 {
            f.write_str(&self.values[0])?;
        } else {
            let mut sorted: Vec<&str> = self.values.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            f.write_str(&sorted.join(","))?;
        }
        if paren {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// Validates a label key; `field` is the path used in the error.
pub(crate) fn validate_label_key(key: &str, field: &str) -> Option<FieldError> {
    let errs = is_qualified_name(key);
    if errs.is_empty() {
        return None;
    }
    Some(FieldError {
        field: field.to_string(),
        value: go_quote(key),
        detail: errs.join("; "),
    })
}
