//! `ParseQuantity` and its scanner `parseQuantityString` (apimachinery `quantity.go`), with the
//! suffix table of `suffix.go`.

use std::cmp::Ordering;

use super::decimal::{cmp_dec, rescale_up};
use super::{Amount, Dec, Format, ParseQuantityError, Quantity};

/// The largest magnitude a [`Dec`] may have, so that printing (which multiplies by at most 100)
/// cannot overflow.
const MAX_MAGNITUDE: u128 = 10_u128.pow(36);
/// `resource.Nano`: the finest scale of an `int64Amount`, and where an `inf.Dec` is rounded.
const NANO: i32 = -9;
/// Go's `maxInt64Factors`: decimal digits an `int64` always holds.
const MAX_INT64_FACTORS: i32 = 18;

/// `ParseQuantity`.
pub(super) fn parse_quantity(s: &str) -> Result<Quantity, ParseQuantityError> {
    if s.is_empty() {
        return Err(ParseQuantityError::FormatWrong);
    }
    if s == "0" {
        return Ok(Quantity::int(0, 0, Format::DecimalSi, Some(s)));
    }
    let parts = split(s)?;
    let (base, exponent, format) = interpret(parts.suffix)?;
    if let Some(q) = parse_int64(s, &parts, exponent, format)? {
        return Ok(q);
    }
    let (negative, mut magnitude, mut scale) = parse_decimal(parts.value)?;
    if base == 10 {
        scale = scale.saturating_sub(exponent);
    } else {
        let factor = u32::try_from(exponent)
            .ok()
            .and_then(|e| 1_u128.checked_shl(e))
            .ok_or(ParseQuantityError::TooManyDigits)?;
        magnitude = magnitude
            .checked_mul(factor)
            .ok_or(ParseQuantityError::TooManyDigits)?;
    }
    if magnitude != 0 {
        (magnitude, scale) =
            rescale_up(magnitude, scale, -NANO).ok_or(ParseQuantityError::TooManyDigits)?;
    }
    let mut format = format;
    if format == Format::BinarySi {
        let max = Dec {
            negative: false,
            magnitude: i64::MAX as u128,
            scale: 0,
        };
        let one = Dec {
            negative: false,
            magnitude: 1,
            scale: 0,
        };
        let value = Dec {
            negative: false,
            magnitude,
            scale,
        };
        if cmp_dec(value, max) == Ordering::Greater {
            (magnitude, scale) = (max.magnitude, 0);
        } else if magnitude != 0 && cmp_dec(value, one) == Ordering::Less {
            format = Format::DecimalSi;
        }
    }
    if magnitude > MAX_MAGNITUDE {
        return Err(ParseQuantityError::TooManyDigits);
    }
    Ok(Quantity {
        amount: Amount::Dec(Dec {
            negative: negative && magnitude != 0,
            magnitude,
            scale,
        }),
        format,
        cached: None,
    })
}

/// The pieces `parseQuantityString` splits a quantity into.
pub(super) struct Parts<'a> {
    pub(super) positive: bool,
    /// The number with its sign and decimal point, without the suffix.
    pub(super) value: &'a str,
    /// Integer digits without leading zeros (`"0"` when none).
    pub(super) num: &'a str,
    /// Fraction digits.
    pub(super) denom: &'a str,
    pub(super) suffix: &'a str,
}

/// `parseQuantityString`.
pub(super) fn split(s: &str) -> Result<Parts<'_>, ParseQuantityError> {
    let b = s.as_bytes();
    let end = b.len();
    let digits_from =
        |from: usize| from + b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut parts = Parts {
        positive: true,
        value: "",
        num: "",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    match b.first() {
        Some(b'-') => {
            parts.positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        (parts.num, parts.value) = ("0", "0");
        return Ok(parts);
    }
    let num_end = digits_from(pos);
    parts.num = &s[pos..num_end];
    if num_end >= end {
        parts.value = s;
        return Ok(parts);
    }
    if parts.num.is_empty() {
        parts.num = "0";
    }
    pos = num_end;
    if b[pos] == b'.' {
        let denom_end = digits_from(pos + 1);
        parts.denom = &s[pos + 1..denom_end];
        if denom_end >= end {
            parts.value = s;
            return Ok(parts);
        }
        pos = denom_end;
    }
    parts.value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    if digits_from(pos) >= end {
        parts.suffix = &s[suffix_start..];
        return Ok(parts);
    }
    Err(ParseQuantityError::FormatWrong)
}

/// `quantitySuffixer.interpret`: `(base, exponent, format)` of a suffix.
fn interpret(suffix: &str) -> Result<(u32, i32, Format), ParseQuantityError> {
    let decimal = |e| Ok((10, e, Format::DecimalSi));
    let binary = |e| Ok((2, e, Format::BinarySi));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = suffix
                .strip_prefix(['e', 'E'])
                .filter(|r| !r.is_empty())
                .ok_or(ParseQuantityError::Suffix)?;
            let parsed: i64 = rest.parse().map_err(|_| ParseQuantityError::Suffix)?;
            // Go converts with int32(...), keeping the low 32 bits.
            Ok((10, parsed as i32, Format::DecimalExponent))
        }
    }
}

/// The fast path of `ParseQuantity`: the `int64Amount` when the digits fit one exactly at a
/// scale no finer than nano, with the string kept when it is already canonical.
fn parse_int64(
    s: &str,
    p: &Parts<'_>,
    exponent: i32,
    format: Format,
) -> Result<Option<Quantity>, ParseQuantityError> {
    let digits = p.num.len().saturating_add(p.denom.len());
    let digits = i32::try_from(digits).unwrap_or(i32::MAX);
    let (mut scale, mantissa, precision) = match format {
        Format::BinarySi if exponent >= 0 && p.denom.is_empty() => {
            let num_len = i32::try_from(p.num.len()).unwrap_or(i32::MAX);
            let mantissa = 1_i64.checked_shl(exponent.unsigned_abs()).unwrap_or(0);
            (0, mantissa, 15 - num_len - exponent * 3 / 10 - 1)
        }
        Format::BinarySi => (0, 1, -1),
        _ => (exponent, 1, MAX_INT64_FACTORS.saturating_sub(digits)),
    };
    if precision < 0 {
        return Ok(None);
    }
    scale = scale.saturating_sub(i32::try_from(p.denom.len()).unwrap_or(i32::MAX));
    if scale < NANO {
        return Ok(None);
    }
    let shifted = format!("{}{}", p.num, p.denom);
    let value: i64 = shifted.parse().map_err(|_| ParseQuantityError::Numeric)?;
    let Some(mut result) = value.checked_mul(mantissa) else {
        return Ok(None);
    };
    if !p.positive {
        result = -result;
    }
    let canonical = match format {
        Format::BinarySi => exponent % 10 == 0 && value & 0x07 != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    Ok(Some(Quantity::int(
        result,
        scale,
        format,
        canonical.then_some(s),
    )))
}

/// `inf.Dec.SetString` of `[+-]digits[.digits]`: sign, unscaled magnitude, scale.
pub(super) fn parse_decimal(s: &str) -> Result<(bool, u128, i32), ParseQuantityError> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !all_digits {
        return Err(ParseQuantityError::Numeric);
    }
    let mut magnitude: u128 = 0;
    for c in int.bytes().chain(frac.bytes()) {
        magnitude = magnitude
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(c - b'0')))
            .ok_or(ParseQuantityError::TooManyDigits)?;
    }
    let scale = i32::try_from(frac.len()).map_err(|_| ParseQuantityError::TooManyDigits)?;
    Ok((negative, magnitude, scale))
}
