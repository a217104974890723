//! Parsing: the table cases of apimachinery v0.37.2 `pkg/api/resource/quantity_test.go`
//! `TestParseQuantityString`, `TestQuantityParse` and `TestParseQuantity`, run against
//! [`Quantity::parse`].

use std::cmp::Ordering;

use super::decimal::cmp_dec;
use super::parse::{parse_decimal, split};
use super::*;

use Format::{BinarySi, DecimalExponent, DecimalSi};

/// Upstream's `decQuantity(i, exponent, format)`: `i × 10^exponent` in the `inf.Dec` form.
pub(super) fn dec_q(i: i128, exponent: i32, format: Format) -> Quantity {
    Quantity {
        amount: Amount::Dec(Dec {
            negative: i < 0,
            magnitude: i.unsigned_abs(),
            scale: -exponent,
        }),
        format,
        cached: None,
    }
}

/// The same value moved to the `inf.Dec` form (upstream's `AsDec()` before an operation).
pub(super) fn as_dec_form(q: &Quantity) -> Quantity {
    Quantity {
        amount: Amount::Dec(q.as_dec()),
        format: q.format,
        cached: q.cached.clone(),
    }
}

pub(super) fn parse(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

pub(super) fn neg(q: &Quantity) -> Quantity {
    let d = q.as_dec();
    Quantity {
        amount: Amount::Dec(Dec {
            negative: !d.negative && d.magnitude != 0,
            ..d
        }),
        format: q.format,
        cached: None,
    }
}

#[test]
fn parse_quantity_string() {
    let cases = [
        ("0.025Ti", true, "0.025", "0", "025", "Ti"),
        ("1.025Ti", true, "1.025", "1", "025", "Ti"),
        ("-1.025Ti", false, "-1.025", "1", "025", "Ti"),
        (".", true, ".", "0", "", ""),
        ("-.", false, "-.", "0", "", ""),
        ("1E-3", true, "1", "1", "", "E-3"),
    ];
    for (input, positive, value, num, denom, suffix) in cases {
        let p = split(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(
            (p.positive, p.value, p.num, p.denom, p.suffix),
            (positive, value, num, denom, suffix),
            "{input}"
        );
    }
}

#[test]
fn quantity_parse() {
    assert_eq!(Quantity::parse(""), Err(ParseQuantityError::FormatWrong));
    let max = dec_q(i128::from(i64::MAX), 0, BinarySi);
    let cases = [
        ("0", dec_q(0, 0, DecimalSi)),
        ("0n", dec_q(0, 0, DecimalSi)),
        ("0u", dec_q(0, 0, DecimalSi)),
        ("0m", dec_q(0, 0, DecimalSi)),
        ("0Ki", dec_q(0, 0, BinarySi)),
        ("0k", dec_q(0, 0, DecimalSi)),
        ("0Mi", dec_q(0, 0, BinarySi)),
        ("0M", dec_q(0, 0, DecimalSi)),
        ("0Gi", dec_q(0, 0, BinarySi)),
        ("0G", dec_q(0, 0, DecimalSi)),
        ("0Ti", dec_q(0, 0, BinarySi)),
        ("0T", dec_q(0, 0, DecimalSi)),
        // Quantity less numbers are allowed
        ("1", dec_q(1, 0, DecimalSi)),
        // Binary suffixes
        ("1Ki", dec_q(1024, 0, BinarySi)),
        ("8Ki", dec_q(8 * 1024, 0, BinarySi)),
        ("7Mi", dec_q(7 << 20, 0, BinarySi)),
        ("6Gi", dec_q(6 << 30, 0, BinarySi)),
        ("5Ti", dec_q(5 << 40, 0, BinarySi)),
        ("4Pi", dec_q(4 << 50, 0, BinarySi)),
        ("3Ei", dec_q(3 << 60, 0, BinarySi)),
        ("10Ti", dec_q(10 << 40, 0, BinarySi)),
        ("100Ti", dec_q(100 << 40, 0, BinarySi)),
        // Decimal suffixes
        ("5n", dec_q(5, -9, DecimalSi)),
        ("4u", dec_q(4, -6, DecimalSi)),
        ("3m", dec_q(3, -3, DecimalSi)),
        ("9", dec_q(9, 0, DecimalSi)),
        ("8k", dec_q(8, 3, DecimalSi)),
        ("50k", dec_q(5, 4, DecimalSi)),
        ("7M", dec_q(7, 6, DecimalSi)),
        ("6G", dec_q(6, 9, DecimalSi)),
        ("5T", dec_q(5, 12, DecimalSi)),
        ("40T", dec_q(4, 13, DecimalSi)),
        ("300T", dec_q(3, 14, DecimalSi)),
        ("2P", dec_q(2, 15, DecimalSi)),
        ("1E", dec_q(1, 18, DecimalSi)),
        // Decimal exponents
        ("1E-3", dec_q(1, -3, DecimalExponent)),
        ("1e3", dec_q(1, 3, DecimalExponent)),
        ("1E6", dec_q(1, 6, DecimalExponent)),
        ("1e9", dec_q(1, 9, DecimalExponent)),
        ("1E12", dec_q(1, 12, DecimalExponent)),
        ("1e15", dec_q(1, 15, DecimalExponent)),
        ("1E18", dec_q(1, 18, DecimalExponent)),
        // Nonstandard but still parsable
        ("1e14", dec_q(1, 14, DecimalExponent)),
        ("1e13", dec_q(1, 13, DecimalExponent)),
        ("1e3", dec_q(1, 3, DecimalExponent)),
        ("100.035k", dec_q(100035, 0, DecimalSi)),
        // Things that look like floating point
        ("0.001", dec_q(1, -3, DecimalSi)),
        ("0.0005k", dec_q(5, -1, DecimalSi)),
        ("0.005", dec_q(5, -3, DecimalSi)),
        ("0.05", dec_q(5, -2, DecimalSi)),
        ("0.5", dec_q(5, -1, DecimalSi)),
        ("0.00050k", dec_q(5, -1, DecimalSi)),
        ("0.00500", dec_q(5, -3, DecimalSi)),
        ("0.05000", dec_q(5, -2, DecimalSi)),
        ("0.50000", dec_q(5, -1, DecimalSi)),
        ("0.5e0", dec_q(5, -1, DecimalExponent)),
        ("0.5e-1", dec_q(5, -2, DecimalExponent)),
        ("0.5e-2", dec_q(5, -3, DecimalExponent)),
        ("0.5e0", dec_q(5, -1, DecimalExponent)),
        ("10.035M", dec_q(10035, 3, DecimalSi)),
        ("1.2e3", dec_q(12, 2, DecimalExponent)),
        ("1.3E+6", dec_q(13, 5, DecimalExponent)),
        ("1.40e9", dec_q(14, 8, DecimalExponent)),
        ("1.53E12", dec_q(153, 10, DecimalExponent)),
        ("1.6e15", dec_q(16, 14, DecimalExponent)),
        ("1.7E18", dec_q(17, 17, DecimalExponent)),
        ("9.01", dec_q(901, -2, DecimalSi)),
        ("8.1k", dec_q(81, 2, DecimalSi)),
        ("7.123456M", dec_q(7123456, 0, DecimalSi)),
        ("6.987654321G", dec_q(6987654321, 0, DecimalSi)),
        ("5.444T", dec_q(5444, 9, DecimalSi)),
        ("40.1T", dec_q(401, 11, DecimalSi)),
        ("300.2T", dec_q(3002, 11, DecimalSi)),
        ("2.5P", dec_q(25, 14, DecimalSi)),
        ("1.01E", dec_q(101, 16, DecimalSi)),
        // Things that saturate/round
        ("3.001n", dec_q(4, -9, DecimalSi)),
        ("1.1E-9", dec_q(2, -9, DecimalExponent)),
        ("0.0000000001", dec_q(1, -9, DecimalSi)),
        ("0.0000000005", dec_q(1, -9, DecimalSi)),
        ("0.00000000050", dec_q(1, -9, DecimalSi)),
        ("0.5e-9", dec_q(1, -9, DecimalExponent)),
        ("0.9n", dec_q(1, -9, DecimalSi)),
        ("0.00000012345", dec_q(124, -9, DecimalSi)),
        ("0.00000012354", dec_q(124, -9, DecimalSi)),
        ("9Ei", max.clone()),
        ("9223372036854775807Ki", max),
        ("12E", dec_q(12, 18, DecimalSi)),
        // We'll accept fractional binary stuff, too.
        ("100.035Ki", dec_q(10243584, -2, BinarySi)),
        ("0.5Mi", dec_q(1 << 19, 0, BinarySi)),
        ("0.05Gi", dec_q(536870912, -1, BinarySi)),
        ("0.025Ti", dec_q(274877906944, -1, BinarySi)),
        // Things written by trolls
        ("0.000000000001Ki", dec_q(2, -9, DecimalSi)), // rounds up, changes format
        (".001", dec_q(1, -3, DecimalSi)),
        (".0001k", dec_q(100, -3, DecimalSi)),
        ("1.", dec_q(1, 0, DecimalSi)),
        ("1.G", dec_q(1, 9, DecimalSi)),
    ];
    for (input, want) in &cases {
        let got = parse(input);
        assert_eq!(&got, want, "{input}: got {got}, want {want}");
        assert_eq!(got.format(), want.format(), "{input}");
        // An int64 amount at a whole scale answers AsInt64 as the expected value does.
        if let (Some(want_int), Amount::Int { scale, .. }) = (want_value_i64(want), got.amount())
            && scale >= 0
        {
            assert_eq!(got.as_int64(), Some(want_int), "{input}");
        }
        assert_eq!(as_dec_form(&got).as_int64(), None, "{input}: inf.Dec form");
        // The decomposed input parses to the same value.
        let p = split(input).expect("splits");
        let sign = if p.positive { "" } else { "-" };
        let dot = if p.denom.is_empty() { "" } else { "." };
        let rebuilt = format!("{sign}{}{dot}{}{}", p.num, p.denom, p.suffix);
        assert_eq!(&parse(&rebuilt), &got, "{input} rebuilt as {rebuilt}");
        // Negated and with an explicit +.
        let negated = parse(&format!("-{input}"));
        assert_eq!(negated, neg(want), "-{input}");
        assert_eq!(negated.format(), want.format(), "-{input}");
        let plus = parse(&format!("+{input}"));
        assert_eq!((&plus, plus.format()), (want, want.format()), "+{input}");
    }
    let invalid = [
        "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-",
        // trailing whitespace is forbidden
        " 1", "1 ",
    ];
    for input in invalid {
        assert!(Quantity::parse(input).is_err(), "{input} parsed");
    }
}

/// The expected value as an `int64`, when it is a whole number.
fn want_value_i64(q: &Quantity) -> Option<i64> {
    let d = q.as_dec();
    if d.scale > 0 {
        return None;
    }
    let factor = 10_i128.checked_pow(d.scale.unsigned_abs())?;
    let v = i128::try_from(d.magnitude).ok()?.checked_mul(factor)?;
    i64::try_from(if d.negative { -v } else { v }).ok()
}

/// `TestParseQuantity`: (input, AsInt64, the value as a decimal, canonical form when not the
/// input itself).
#[test]
fn parse_quantity_limits() {
    const MAX: i64 = 1_000_000_000_000_000_000;
    let cases: &[(&str, Option<i64>, &str, &str)] = &[
        // min/max 18 digits
        (
            "-999999999999999999",
            Some(-999999999999999999),
            "-999999999999999999",
            "",
        ),
        (
            "999999999999999999",
            Some(999999999999999999),
            "999999999999999999",
            "",
        ),
        (
            "-999999999999999999.0",
            None,
            "-999999999999999999",
            "-999999999999999999",
        ),
        (
            "999999999999999999.0",
            None,
            "999999999999999999",
            "999999999999999999",
        ),
        (
            "-999999999999999999.1",
            None,
            "-999999999999999999.1",
            "-999999999999999999100m",
        ),
        (
            "999999999999999999.1",
            None,
            "999999999999999999.1",
            "999999999999999999100m",
        ),
        // min/max 19 digits
        ("-9999999999999999999", None, "-9999999999999999999", ""),
        ("9999999999999999999", None, "9999999999999999999", ""),
        ("-1E", Some(-MAX), "-1000000000000000000", ""),
        ("1E", Some(MAX), "1000000000000000000", ""),
        ("-1000000000000000000", None, "-1000000000000000000", "-1E"),
        ("1000000000000000000", None, "1000000000000000000", "1E"),
        (
            "-9999999999999999999.0",
            None,
            "-9999999999999999999",
            "-9999999999999999999",
        ),
        (
            "9999999999999999999.0",
            None,
            "9999999999999999999",
            "9999999999999999999",
        ),
        ("-1.0E", Some(-MAX), "-1000000000000000000", "-1E"),
        ("1.0E", Some(MAX), "1000000000000000000", "1E"),
        (
            "-1000000000000000000.0",
            None,
            "-1000000000000000000",
            "-1E",
        ),
        ("1000000000000000000.0", None, "1000000000000000000", "1E"),
        (
            "-9999999999999999999000m",
            None,
            "-9999999999999999999",
            "-9999999999999999999",
        ),
        (
            "9999999999999999999000m",
            None,
            "9999999999999999999",
            "9999999999999999999",
        ),
        (
            "-9999999999999999999.1",
            None,
            "-9999999999999999999.1",
            "-9999999999999999999100m",
        ),
        (
            "9999999999999999999.1",
            None,
            "9999999999999999999.1",
            "9999999999999999999100m",
        ),
        (
            "-1.0000000000000000001E",
            None,
            "-1000000000000000000.1",
            "-1000000000000000000100m",
        ),
        (
            "1.0000000000000000001E",
            None,
            "1000000000000000000.1",
            "1000000000000000000100m",
        ),
        (
            "-1000000000000000000.1",
            None,
            "-1000000000000000000.1",
            "-1000000000000000000100m",
        ),
        (
            "1000000000000000000.1",
            None,
            "1000000000000000000.1",
            "1000000000000000000100m",
        ),
        (
            "-1.000000000000000001E",
            None,
            "-1000000000000000001",
            "-1000000000000000001",
        ),
        (
            "1.000000000000000001E",
            None,
            "1000000000000000001",
            "1000000000000000001",
        ),
        ("-1000000000000000001", None, "-1000000000000000001", ""),
        ("1000000000000000001", None, "1000000000000000001", ""),
        // min/max 20 digits
        ("-10E", None, "-10000000000000000000", ""),
        ("10E", None, "10000000000000000000", ""),
        (
            "-10000000000000000000",
            None,
            "-10000000000000000000",
            "-10E",
        ),
        ("10000000000000000000", None, "10000000000000000000", "10E"),
        ("-10.0E", None, "-10000000000000000000", "-10E"),
        ("10.0E", None, "10000000000000000000", "10E"),
        (
            "-10000000000000000000.0",
            None,
            "-10000000000000000000",
            "-10E",
        ),
        (
            "10000000000000000000.0",
            None,
            "10000000000000000000",
            "10E",
        ),
        (
            "-10000000000000000000000m",
            None,
            "-10000000000000000000",
            "-10E",
        ),
        (
            "10000000000000000000000m",
            None,
            "10000000000000000000",
            "10E",
        ),
        (
            "-10.0000000000000000001E",
            None,
            "-10000000000000000000.1",
            "-10000000000000000000100m",
        ),
        (
            "10.0000000000000000001E",
            None,
            "10000000000000000000.1",
            "10000000000000000000100m",
        ),
        (
            "-10000000000000000000.1",
            None,
            "-10000000000000000000.1",
            "-10000000000000000000100m",
        ),
        (
            "10000000000000000000.1",
            None,
            "10000000000000000000.1",
            "10000000000000000000100m",
        ),
        (
            "-10.000000000000000001E",
            None,
            "-10000000000000000001",
            "-10000000000000000001",
        ),
        (
            "10.000000000000000001E",
            None,
            "10000000000000000001",
            "10000000000000000001",
        ),
        ("-10000000000000000001", None, "-10000000000000000001", ""),
        ("10000000000000000001", None, "10000000000000000001", ""),
        // min/max int64 - 1
        ("-9223372036854775809", None, "-9223372036854775809", ""),
        ("9223372036854775806", None, "9223372036854775806", ""),
        (
            "-9223372036854775809.0",
            None,
            "-9223372036854775809",
            "-9223372036854775809",
        ),
        (
            "9223372036854775806.0",
            None,
            "9223372036854775806",
            "9223372036854775806",
        ),
        (
            "-9223372036854775809000m",
            None,
            "-9223372036854775809",
            "-9223372036854775809",
        ),
        (
            "9223372036854775806000m",
            None,
            "9223372036854775806",
            "9223372036854775806",
        ),
        (
            "-9223372036854775809.1",
            None,
            "-9223372036854775809.1",
            "-9223372036854775809100m",
        ),
        (
            "9223372036854775806.1",
            None,
            "9223372036854775806.1",
            "9223372036854775806100m",
        ),
        // min/max int64
        ("-9223372036854775808", None, "-9223372036854775808", ""),
        ("9223372036854775807", None, "9223372036854775807", ""),
        (
            "-9223372036854775808.0",
            None,
            "-9223372036854775808",
            "-9223372036854775808",
        ),
        (
            "9223372036854775807.0",
            None,
            "9223372036854775807",
            "9223372036854775807",
        ),
        (
            "-9223372036854775808000m",
            None,
            "-9223372036854775808",
            "-9223372036854775808",
        ),
        (
            "9223372036854775807000m",
            None,
            "9223372036854775807",
            "9223372036854775807",
        ),
        (
            "-9223372036854775808.1",
            None,
            "-9223372036854775808.1",
            "-9223372036854775808100m",
        ),
        (
            "9223372036854775807.1",
            None,
            "9223372036854775807.1",
            "9223372036854775807100m",
        ),
        // min/max int64 + 1
        ("-9223372036854775807", None, "-9223372036854775807", ""),
        ("9223372036854775808", None, "9223372036854775808", ""),
        (
            "-9223372036854775807.0",
            None,
            "-9223372036854775807",
            "-9223372036854775807",
        ),
        (
            "9223372036854775808.0",
            None,
            "9223372036854775808",
            "9223372036854775808",
        ),
        (
            "-9223372036854775807000m",
            None,
            "-9223372036854775807",
            "-9223372036854775807",
        ),
        (
            "9223372036854775808000m",
            None,
            "9223372036854775808",
            "9223372036854775808",
        ),
        (
            "-9223372036854775807.1",
            None,
            "-9223372036854775807.1",
            "-9223372036854775807100m",
        ),
        (
            "9223372036854775808.1",
            None,
            "9223372036854775808.1",
            "9223372036854775808100m",
        ),
    ];
    for (input, as_int64, value, canonical) in cases {
        let q = parse(input);
        assert_eq!(q.as_int64(), *as_int64, "{input}: AsInt64");
        let (negative, magnitude, scale) = parse_decimal(value).expect("a decimal");
        let want = Dec {
            negative,
            magnitude,
            scale,
        };
        assert_eq!(cmp_dec(q.as_dec(), want), Ordering::Equal, "{input}: value");
        let canonical = if canonical.is_empty() {
            input
        } else {
            canonical
        };
        assert_eq!(q.to_string(), *canonical, "{input}: canonical");
    }
}
