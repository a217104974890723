//! Go-style duration strings (`200ms`, `1.5s`, `1m30s`), as used by pod annotations and fault specs.

use std::time::Duration;

/// A duration string that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {input:?}: {reason}")]
pub struct DurationError {
    /// The text given.
    pub input: String,
    /// Why it was rejected.
    pub reason: &'static str,
}

/// Parse a non-negative Go duration: a sequence of decimal numbers, each with an optional fraction and a
/// unit among `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`. `"0"` alone is accepted, as in Go.
///
/// ```
/// use std::time::Duration;
/// use kcm_testenv::sim::parse_go_duration;
/// assert_eq!(parse_go_duration("1m30s").unwrap(), Duration::from_secs(90));
/// assert_eq!(parse_go_duration("1.5s").unwrap(), Duration::from_millis(1500));
/// assert!(parse_go_duration("10").is_err());
/// ```
pub fn parse_go_duration(input: &str) -> Result<Duration, DurationError> {
    let err = |reason| DurationError {
        input: input.to_string(),
        reason,
    };
    let s = input.trim();
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.starts_with('-') {
        return Err(err("negative durations are not allowed"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(err("empty"));
    }
    let mut total_nanos: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(err("expected a number"));
        }
        let (num, tail) = rest.split_at(num_len);
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let unit_nanos: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(err("missing unit")),
            _ => return Err(err("unknown unit")),
        };
        let (int_part, frac_part) = match num.split_once('.') {
            Some((i, f)) => (i, f),
            None => (num, ""),
        };
        if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
            return Err(err("malformed number"));
        }
        let int: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| err("number too large"))?
        };
        let mut value = int
            .checked_mul(unit_nanos)
            .ok_or_else(|| err("number too large"))?;
        let mut scale = unit_nanos;
        for digit in frac_part.bytes() {
            scale /= 10;
            value += u128::from(digit - b'0') * scale;
        }
        total_nanos = total_nanos
            .checked_add(value)
            .ok_or_else(|| err("number too large"))?;
        rest = tail;
    }
    let secs = u64::try_from(total_nanos / 1_000_000_000).map_err(|_| err("number too large"))?;
    // The remainder is below 1e9 and fits in u32.
    let nanos = (total_nanos % 1_000_000_000) as u32;
    Ok(Duration::new(secs, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases from Go's `time.TestParseDuration` (the non-negative ones).
    #[test]
    fn test_parse_duration() {
        let cases: &[(&str, u64)] = &[
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
            ("13ms", 13_000_000),
            ("14s", 14_000_000_000),
            ("15m", 900_000_000_000),
            ("16h", 57_600_000_000_000),
            ("3h30m", 12_600_000_000_000),
            ("10.5s4m", 250_500_000_000),
            ("1h2m3s4ms5us6ns", 3_723_004_005_006),
            ("39h9m14.425s", 140_954_425_000_000),
            ("52763797000ns", 52_763_797_000),
        ];
        for (input, nanos) in cases {
            let got = parse_go_duration(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(got.as_nanos(), u128::from(*nanos), "{input}");
        }
    }

    /// Error cases from Go's `time.TestParseDuration`, plus negatives (not allowed here).
    #[test]
    fn test_parse_duration_errors() {
        for input in [
            "", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "1.2.3s", "-1s", "10", "x5s",
        ] {
            assert!(
                parse_go_duration(input).is_err(),
                "{input:?} should be rejected"
            );
        }
    }
}
