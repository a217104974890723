//! `IntOrString` scaling, as apimachinery's `GetScaledValueFromIntOrPercent`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::error::DeploymentError;

/// Resolves an absolute or percentage value against `total`.
///
/// * `Int(n)` -> `n` (unchanged, never clamped);
/// * `String("N%")` -> `ceil(N * total / 100)` when `round_up`, else `floor(...)` (f64 math, like
///   upstream); `N` is parsed like Go's `strconv.Atoi` (optional sign, decimal digits);
/// * any other string -> [`DeploymentError::InvalidIntOrPercent`];
/// * `None` -> [`DeploymentError::NilIntOrString`].
pub fn scaled_value_from_int_or_percent(
    value: Option<&IntOrString>,
    total: i32,
    round_up: bool,
) -> Result<i32, DeploymentError> {
    match value {
        None => Err(DeploymentError::NilIntOrString),
        Some(IntOrString::Int(n)) => Ok(*n),
        Some(IntOrString::String(s)) => {
            let Some(digits) = s.strip_suffix('%') else {
                return Err(DeploymentError::InvalidIntOrPercent {
                    reason: "invalid type: string is not a percentage".to_string(),
                });
            };
            let v: i64 = digits
                .parse()
                .map_err(|e| DeploymentError::InvalidIntOrPercent {
                    reason: format!("invalid value {s:?}: {e}"),
                })?;
            let scaled = v as f64 * f64::from(total) / 100.0;
            let scaled = if round_up {
                scaled.ceil()
            } else {
                scaled.floor()
            };
            // Saturating conversion; validation keeps percentages within 0..=100 anyway.
            Ok(scaled as i32)
        }
    }
}

/// Like [`scaled_value_from_int_or_percent`] with `None` treated as `Int(0)`
/// (upstream's `intstrutil.ValueOrDefault(v, FromInt32(0))`).
pub fn scaled_value_or_zero(
    value: Option<&IntOrString>,
    total: i32,
    round_up: bool,
) -> Result<i32, DeploymentError> {
    let zero = IntOrString::Int(0);
    scaled_value_from_int_or_percent(Some(value.unwrap_or(&zero)), total, round_up)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> IntOrString {
        IntOrString::String(v.to_string())
    }

    #[test]
    fn get_scaled_value_from_int_or_percent() {
        let cases: Vec<(Option<IntOrString>, i32, bool, Result<i32, ()>)> = vec![
            (Some(IntOrString::Int(3)), 10, true, Ok(3)),
            (Some(IntOrString::Int(30)), 10, false, Ok(30)),
            (Some(s("25%")), 10, true, Ok(3)),
            (Some(s("25%")), 10, false, Ok(2)),
            (Some(s("39%")), 10, true, Ok(4)),
            (Some(s("39%")), 10, false, Ok(3)),
            (Some(s("100%")), 5, false, Ok(5)),
            (Some(s("0%")), 0, true, Ok(0)),
            (Some(s("oops")), 10, true, Err(())),
            (Some(s("x%")), 10, true, Err(())),
            (None, 10, true, Err(())),
        ];
        for (value, total, up, want) in cases {
            let got = scaled_value_from_int_or_percent(value.as_ref(), total, up).map_err(|_| ());
            assert_eq!(got, want, "{value:?} of {total} (round up {up})");
        }
        assert_eq!(scaled_value_or_zero(None, 10, true), Ok(0));
    }
}
