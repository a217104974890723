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
///
/// The result is upstream's `int32(value)` of [`scaled_value_go_int`]: a percentage scaled past
/// the `i32` range wraps around as Go's conversion does (validation bounds only `maxUnavailable`
/// to 100%, so a huge `maxSurge` percentage is accepted by the API server).
pub(crate) fn scaled_value_from_int_or_percent(
    value: Option<&IntOrString>,
    total: i32,
    round_up: bool,
) -> Result<i32, DeploymentError> {
    scaled_value_go_int(value, total, round_up).map(|v| v as i32)
}

/// apimachinery's `GetScaledValueFromIntOrPercent` exactly, in Go's 64-bit `int`: a percentage's
/// `ceil`/`floor` converted like Go's `int(float64)` on amd64 (out of range gives `i64::MIN`).
pub(crate) fn scaled_value_go_int(
    value: Option<&IntOrString>,
    total: i32,
    round_up: bool,
) -> Result<i64, DeploymentError> {
    match value {
        None => Err(DeploymentError::NilIntOrString),
        Some(IntOrString::Int(n)) => Ok(i64::from(*n)),
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
            Ok(go_float_to_int(scaled))
        }
    }
}

/// Go's `int(x)` for a float64 on amd64: truncation when `x` fits, `i64::MIN` otherwise.
fn go_float_to_int(x: f64) -> i64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if (-TWO_POW_63..TWO_POW_63).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// Like [`scaled_value_go_int`] with `None` treated as `Int(0)`.
pub(crate) fn scaled_value_or_zero_go_int(
    value: Option<&IntOrString>,
    total: i32,
    round_up: bool,
) -> Result<i64, DeploymentError> {
    let zero = IntOrString::Int(0);
    scaled_value_go_int(Some(value.unwrap_or(&zero)), total, round_up)
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
        assert_eq!(scaled_value_or_zero_go_int(None, 10, true), Ok(0));
    }

    /// Found by `src/plan/rollout_math_proptests.rs`: percentages scaled past `i32` saturated at
    /// `i32::MAX` where upstream's `int32(int)` wraps (`maxSurge: 99999999999%` of 10 replicas
    /// made `replicas + maxSurge` negative here and 1,410,065,418 upstream).
    #[test]
    fn huge_percentages_wrap_like_go() {
        let cases: &[(&str, i32, bool, i64, i32)] = &[
            ("99999999999%", 10, true, 10_000_000_000, 1_410_065_408),
            ("429496729600%", 1, true, 4_294_967_296, 0),
            ("-99999999999%", 10, false, -10_000_000_000, -1_410_065_408),
            ("9223372036854775807%", 1000, true, i64::MIN, 0),
        ];
        for (v, total, up, go_int, go_int32) in cases {
            assert_eq!(
                scaled_value_go_int(Some(&s(v)), *total, *up),
                Ok(*go_int),
                "{v}"
            );
            assert_eq!(
                scaled_value_from_int_or_percent(Some(&s(v)), *total, *up),
                Ok(*go_int32),
                "{v}"
            );
        }
    }
}
