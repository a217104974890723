//! The in-memory form `resource.ParseQuantity` (apimachinery v0.37) gives a quantity string: an
//! `int64Amount` (`value × 10^scale`) when that holds it exactly, else an `inf.Dec`; plus the
//! string itself, cached when it is already canonical, and the format of the suffix.

/// The fields of a parsed Go `resource.Quantity` that go-spew prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedQuantity {
    /// `i.value`.
    pub value: i64,
    /// `i.scale` (a power of ten).
    pub scale: i32,
    /// `d.Dec`, when set (then `value` and `scale` are zero).
    pub dec: Option<Dec>,
    /// Whether the parsed string is kept as `s`.
    pub cached: bool,
    /// `Format`: `DecimalSI`, `BinarySI` or `DecimalExponent`.
    pub format: &'static str,
}

/// An `inf.Dec`: `(-1)^neg × abs × 10^-scale`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dec {
    /// The sign of the unscaled `big.Int`.
    pub neg: bool,
    /// Its magnitude (Go keeps it as little-endian 64-bit words).
    pub abs: u128,
    /// The `inf.Scale`.
    pub scale: i32,
}

const DECIMAL_SI: &str = "DecimalSI";
const BINARY_SI: &str = "BinarySI";
const DECIMAL_EXPONENT: &str = "DecimalExponent";
/// Decimal digits an `int64` always holds.
const MAX_INT64_FACTORS: i32 = 18;
/// `resource.Nano`, the smallest scale of an `int64Amount`.
const NANO: i32 = -9;

/// The pieces `parseQuantityString` splits a quantity into.
struct Parts<'a> {
    positive: bool,
    /// The number with its sign and decimal point, without the suffix.
    value: &'a str,
    /// Integer digits without leading zeros (`"0"` when none).
    num: &'a str,
    /// Fraction digits.
    denom: &'a str,
    suffix: &'a str,
}

fn split(s: &str) -> Option<Parts<'_>> {
    let b = s.as_bytes();
    let end = b.len();
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
        parts.num = "0";
        parts.value = "0";
        return Some(parts);
    }
    let digits = |from: usize| from + b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let num_end = digits(pos);
    parts.num = &s[pos..num_end];
    if num_end >= end {
        parts.value = s;
        return Some(parts);
    }
    if parts.num.is_empty() {
        parts.num = "0";
    }
    pos = num_end;
    if b[pos] == b'.' {
        pos += 1;
        let denom_end = digits(pos);
        parts.denom = &s[pos..denom_end];
        if denom_end >= end {
            parts.value = s;
            return Some(parts);
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
    if digits(pos.min(end)) >= end {
        parts.suffix = &s[suffix_start..];
        return Some(parts);
    }
    None
}

/// `(base, exponent, format)` of a suffix.
fn interpret(suffix: &str) -> Option<(u32, i32, &'static str)> {
    let decimal = |e| Some((10, e, DECIMAL_SI));
    let binary = |e| Some((2, e, BINARY_SI));
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
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))
                .filter(|r| !r.is_empty())?;
            let parsed: i64 = rest.parse().ok()?;
            // Go converts the parsed int64 with int32(...), keeping the low 32 bits.
            Some((10, parsed as i32, DECIMAL_EXPONENT))
        }
    }
}

/// Parses `s` as `resource.ParseQuantity` does; `None` where Go fails (or, for the `inf.Dec`
/// form only, where the magnitude exceeds 128 bits).
pub fn parse_quantity(s: &str) -> Option<ParsedQuantity> {
    if s.is_empty() {
        return None;
    }
    if s == "0" {
        return Some(int_amount(0, 0, true, DECIMAL_SI));
    }
    let p = split(s)?;
    let (base, exponent, mut format) = interpret(p.suffix)?;
    let digits = i32::try_from(p.num.len() + p.denom.len()).ok()?;
    let mut scale = 0;
    let mut mantissa: i64 = 1;
    let precision = if format == BINARY_SI {
        if exponent >= 0 && p.denom.is_empty() {
            mantissa = 1_i64.checked_shl(u32::try_from(exponent).ok()?)?;
            let num_len = i32::try_from(p.num.len()).ok()?;
            15 - num_len - exponent * 3 / 10 - 1
        } else {
            -1
        }
    } else {
        scale = exponent;
        MAX_INT64_FACTORS.saturating_sub(digits)
    };
    if precision >= 0 {
        scale = scale.saturating_sub(i32::try_from(p.denom.len()).ok()?);
        if scale >= NANO {
            let shifted = format!("{}{}", p.num, p.denom);
            let value: i64 = shifted.parse().ok()?;
            if let Some(mut result) = value.checked_mul(mantissa) {
                if !p.positive {
                    result = -result;
                }
                let cached = if format == BINARY_SI {
                    exponent % 10 == 0 && value & 0x07 != 0
                } else {
                    scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
                };
                return Some(int_amount(result, scale, cached, format));
            }
        }
    }
    let (negative, mut abs, mut dec_scale) = parse_decimal(p.value)?;
    if base == 10 {
        dec_scale = dec_scale.checked_sub(exponent)?;
    } else {
        abs = abs.checked_mul(1_u128.checked_shl(u32::try_from(exponent).ok()?)?)?;
    }
    if abs != 0 {
        (abs, dec_scale) = round_up_to_nano(abs, dec_scale)?;
    }
    const MAX_INT64: u128 = i64::MAX as u128;
    if format == BINARY_SI {
        // Compare abs × 10^-dec_scale (dec_scale is 9 here unless abs is zero) with the limits.
        let unit = 10_u128.checked_pow(u32::try_from(dec_scale).unwrap_or(0))?;
        if abs > MAX_INT64.checked_mul(unit)? {
            (abs, dec_scale) = (MAX_INT64, 0);
        } else if abs != 0 && abs < unit {
            format = DECIMAL_SI;
        }
    }
    Some(ParsedQuantity {
        value: 0,
        scale: 0,
        dec: Some(Dec {
            neg: negative && abs != 0,
            abs,
            scale: dec_scale,
        }),
        cached: false,
        format,
    })
}

fn int_amount(value: i64, scale: i32, cached: bool, format: &'static str) -> ParsedQuantity {
    ParsedQuantity {
        value,
        scale,
        dec: None,
        cached,
        format,
    }
}

/// `inf.Dec.SetString` of `[+-]digits[.digits]`: sign, unscaled magnitude, scale.
fn parse_decimal(s: &str) -> Option<(bool, u128, i32)> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut abs: u128 = 0;
    for c in int.bytes().chain(frac.bytes()) {
        if !c.is_ascii_digit() {
            return None;
        }
        abs = abs.checked_mul(10)?.checked_add(u128::from(c - b'0'))?;
    }
    Some((negative, abs, i32::try_from(frac.len()).ok()?))
}

/// `inf.Dec.Round(x, 9, inf.RoundUp)` of a positive magnitude.
fn round_up_to_nano(abs: u128, scale: i32) -> Option<(u128, i32)> {
    const TARGET: i32 = 9;
    if scale <= TARGET {
        let factor = 10_u128.checked_pow(u32::try_from(TARGET - scale).ok()?)?;
        return Some((abs.checked_mul(factor)?, TARGET));
    }
    let Some(divisor) = 10_u128.checked_pow(u32::try_from(scale - TARGET).ok()?) else {
        return Some((1, TARGET));
    };
    let quotient = abs / divisor;
    let rounded = if !abs.is_multiple_of(divisor) {
        quotient + 1
    } else {
        quotient
    };
    Some((rounded, TARGET))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> (i64, i32, bool, &'static str) {
        let q = parse_quantity(s).expect(s);
        assert_eq!(q.dec, None, "{s}");
        (q.value, q.scale, q.cached, q.format)
    }

    #[test]
    fn int64_amounts() {
        assert_eq!(int("0"), (0, 0, true, DECIMAL_SI));
        assert_eq!(int("500m"), (500, -3, true, DECIMAL_SI));
        assert_eq!(int("0.5"), (5, -1, false, DECIMAL_SI));
        assert_eq!(int("1Gi"), (1 << 30, 0, true, BINARY_SI));
        assert_eq!(int("8Gi"), (8 << 30, 0, false, BINARY_SI));
        assert_eq!(int("1000"), (1000, 0, false, DECIMAL_SI));
        assert_eq!(int("1e3"), (1, 3, true, DECIMAL_EXPONENT));
        assert_eq!(int("-2"), (-2, 0, true, DECIMAL_SI));
        assert_eq!(int("1n"), (1, -9, true, DECIMAL_SI));
    }

    #[test]
    fn dec_amounts() {
        let q = parse_quantity("1Pi").expect("1Pi");
        let d = q.dec.expect("inf.Dec form");
        assert_eq!(
            (d.neg, d.abs, d.scale),
            (false, (1_u128 << 50) * 1_000_000_000, 9)
        );
        assert_eq!(q.format, BINARY_SI);
        let d = parse_quantity("0.0000000001")
            .and_then(|q| q.dec)
            .expect("dec");
        assert_eq!((d.abs, d.scale), (1, 9));
    }

    #[test]
    fn rejects_what_go_rejects() {
        for s in ["", "abc", "1x", "1.5.5", "--1", "e"] {
            assert_eq!(parse_quantity(s), None, "{s}");
        }
    }
}
