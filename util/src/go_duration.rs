//! Go duration strings, as Go's `time.ParseDuration` reads them (`300ms`, `1.5h`, `2h45m`,
//! `12h0m0s`) and `Duration.String` prints them.
//!
//! The grammar is Go's exactly: an optional sign, then one or more decimal numbers (with an
//! optional fraction), each followed by a unit among `ns`, `us` (`µs`, `μs`), `ms`, `s`, `m`,
//! `h`; `"0"` alone needs no unit; no white space anywhere; at most `i64::MAX` nanoseconds;
//! fractions scaled as Go scales them. Errors are Go's texts (`time: invalid duration "…"`).
//! Negative durations are rejected (Go accepts them; `std::time::Duration` cannot hold them),
//! except a negative zero, which Go reads as zero.

use std::fmt;
use std::time::Duration;

/// A duration string `time.ParseDuration` would reject (or a negative one); its text is Go's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDurationError {
    message: String,
}

impl ParseDurationError {
    fn new(message: String) -> Self {
        ParseDurationError { message }
    }
}

impl fmt::Display for ParseDurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseDurationError {}

/// Parses a non-negative Go duration string; the error says what is wrong, in Go's words.
///
/// ```
/// use std::time::Duration;
/// use kcm_util::go_duration::parse_go_duration;
/// assert_eq!(parse_go_duration("1.5s"), Ok(Duration::from_millis(1500)));
/// assert_eq!(
///     parse_go_duration("1d").unwrap_err().to_string(),
///     r#"time: unknown unit "d" in duration "1d""#
/// );
/// ```
pub fn parse_go_duration(input: &str) -> Result<Duration, ParseDurationError> {
    let invalid = || ParseDurationError::new(format!("time: invalid duration {input:?}"));
    let (negative, s) = match input.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, input.strip_prefix('+').unwrap_or(input)),
    };
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total_nanos: u128 = 0;
    let mut s = s;
    while !s.is_empty() {
        let number_len = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let number = &s[..number_len];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(invalid());
        }
        s = &s[number_len..];
        let unit_len = s
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(s.len());
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        let nanos_per_unit: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60 * 1_000_000_000,
            "h" => 3600 * 1_000_000_000,
            "" => {
                return Err(ParseDurationError::new(format!(
                    "time: missing unit in duration {input:?}"
                )));
            }
            other => {
                return Err(ParseDurationError::new(format!(
                    "time: unknown unit {other:?} in duration {input:?}"
                )));
            }
        };
        let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| invalid())?
        };
        let nanos = whole.checked_mul(nanos_per_unit).ok_or_else(invalid)?;
        // Like Go: the fraction's digits as an integer over a power of ten (digits past
        // overflow are ignored), scaled in floating point and truncated.
        let (mut digits, mut scale) = (0u64, 1f64);
        for digit in frac.bytes() {
            if digits > (1u64 << 63) / 10 {
                break;
            }
            digits = digits * 10 + u64::from(digit - b'0');
            scale *= 10.0;
        }
        let fraction = (digits as f64 * (nanos_per_unit as f64 / scale)) as u128;
        // Checked: a whole part just below u128::MAX plus its fraction must not wrap around
        // to a small duration.
        total_nanos = nanos
            .checked_add(fraction)
            .and_then(|n| total_nanos.checked_add(n))
            .ok_or_else(invalid)?;
    }
    if total_nanos > i64::MAX as u128 {
        return Err(invalid());
    }
    if negative && total_nanos > 0 {
        return Err(ParseDurationError::new(format!(
            "negative duration {input:?} is not allowed"
        )));
    }
    Ok(Duration::from_nanos(total_nanos as u64))
}

/// Formats a duration the way Go's `Duration.String` does (`12h0m0s`, `1.5s`, `300ms`).
///
/// ```
/// use std::time::Duration;
/// use kcm_util::go_duration::format_go_duration;
/// assert_eq!(format_go_duration(Duration::from_secs(43_200)), "12h0m0s");
/// ```
pub fn format_go_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    if nanos < 1_000_000_000 {
        let (value, unit) = if nanos < 1_000 {
            return format!("{nanos}ns");
        } else if nanos < 1_000_000 {
            (nanos as f64 / 1e3, "µs")
        } else {
            (nanos as f64 / 1e6, "ms")
        };
        return format!("{}{unit}", trim_float(value));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = (nanos / 60_000_000_000) % 60;
    let seconds = (nanos % 60_000_000_000) as f64 / 1e9;
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    out.push_str(&format!("{}s", trim_float(seconds)));
    out
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `time` package tests (`parseDurationTests`), the non-negative cases.
    #[test]
    fn parses_go_durations() {
        let ok: &[(&str, u64)] = &[
            ("0", 0),
            ("5s", 5_000_000_000),
            ("30s", 30_000_000_000),
            ("1478s", 1_478_000_000_000),
            ("+5s", 5_000_000_000),
            ("5.0s", 5_000_000_000),
            ("5.6s", 5_600_000_000),
            ("5.s", 5_000_000_000),
            (".5s", 500_000_000),
            ("1.0s", 1_000_000_000),
            ("1.00s", 1_000_000_000),
            ("1.004s", 1_004_000_000),
            ("1.0040s", 1_004_000_000),
            ("100.00100s", 100_001_000_000),
            ("10ns", 10),
            ("11us", 11_000),
            ("12µs", 12_000),
            ("12μs", 12_000),
            ("13ms", 13_000_000),
            ("14s", 14_000_000_000),
            ("15m", 900_000_000_000),
            ("16h", 57_600_000_000_000),
            ("3h30m", 12_600_000_000_000),
            ("10.5s4m", 250_500_000_000),
            ("1h2m3s4ms5us6ns", 3_723_004_005_006),
            ("39h9m14.425s", 140_954_425_000_000),
            ("52763797000ns", 52_763_797_000),
            ("0.3333333333333333333h", 1_200_000_000_000),
            ("12h0m0s", 43_200_000_000_000),
            // Go accepts a negative zero in any spelling.
            ("-0", 0),
            ("-0s", 0),
            ("-0.0h0m", 0),
        ];
        for (input, nanos) in ok {
            assert_eq!(
                parse_go_duration(input),
                Ok(Duration::from_nanos(*nanos)),
                "{input}"
            );
        }
    }

    /// Go's error cases, past `i64::MAX` nanoseconds, and the negatives we refuse.
    #[test]
    fn rejects_malformed_durations() {
        for bad in [
            "", "3", "10", "-", "s", ".", "-.", ".s", "+.s", "1d", "x5s", "3000000h", "-5s", "-1s",
            "1.2.3s", "--0", "-+1s", "+-1s", "++1s", " 5s", "5s ",
        ] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?} must fail");
        }
        assert_eq!(
            parse_go_duration("3").map_err(|e| e.to_string()),
            Err(r#"time: missing unit in duration "3""#.to_string())
        );
        assert_eq!(
            parse_go_duration("-5s").map_err(|e| e.to_string()),
            Err(r#"negative duration "-5s" is not allowed"#.to_string())
        );
    }

    #[test]
    fn formats_like_go() {
        let cases: &[(u64, &str)] = &[
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1µs"),
            (2_200_000, "2.2ms"),
            (3_300_000_000, "3.3s"),
            (240_000_000_000, "4m0s"),
            (43_200_000_000_000, "12h0m0s"),
            (4_500_000_000_000, "1h15m0s"),
            // the kubelet's back-off texts (`back-off 1m20s restarting failed container`)
            (500_000_000, "500ms"),
            (10_000_000_000, "10s"),
            (80_000_000_000, "1m20s"),
            (300_000_000_000, "5m0s"),
            (1_500_000_000, "1.5s"),
            (3_600_000_000_000, "1h0m0s"),
        ];
        for (nanos, want) in cases {
            assert_eq!(format_go_duration(Duration::from_nanos(*nanos)), *want);
        }
    }
}
