//! Kubernetes resource quantities (`cpu: 500m`, `memory: 1Gi`) as apimachinery's
//! `resource.Quantity` holds and prints them (`k8s.io/apimachinery/pkg/api/resource`:
//! `quantity.go` `ParseQuantity`, `RoundUp`, `String`/`CanonicalizeBytes`, `AsInt64`;
//! `amount.go` and `math.go` for the two amounts; `suffix.go` for the suffixes).
//!
//! A [`Quantity`] keeps what Go keeps: the amount (an `int64` times a power of ten when that
//! holds the parsed value exactly, else an `inf.Dec` rounded up to nano precision), the
//! [`Format`] of the suffix it was written with, and the string itself when it already was in
//! canonical form. [`Display`](std::fmt::Display) prints that string, or the canonical form
//! Go's `String` builds: no fractional digits, the largest suffix of the same kind that loses
//! nothing.
//!
//! ```
//! use kcm_util::quantity::{Format, Quantity};
//!
//! let half: Quantity = "0.5".parse().unwrap();
//! assert_eq!(half.to_string(), "500m");
//! assert_eq!("1024Mi".parse::<Quantity>().unwrap().to_string(), "1Gi");
//! assert_eq!("1.5Gi".parse::<Quantity>().unwrap().format(), Format::BinarySi);
//!
//! // What kube-apiserver stores for a container's `cpu: 0.0001` (defaulting rounds up to milli).
//! let mut tiny: Quantity = "0.0001".parse().unwrap();
//! assert!(!tiny.round_up(-3));
//! assert_eq!(tiny.to_string(), "1m");
//! ```
//!
//! One limit of ours: Go's `inf.Dec` is unbounded, this one holds 128 bits, so a quantity that
//! needs more than 36 significant digits is refused ([`ParseQuantityError::TooManyDigits`]).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// How a quantity was written, which decides how it is printed back (Go's `resource.Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `12e6`.
    DecimalExponent,
    /// `12Mi` (`12 × 2^20`).
    BinarySi,
    /// `12M` (`12 × 10^6`), `500m`, or no suffix.
    DecimalSi,
}

impl Format {
    /// Go's name of the format: `DecimalExponent`, `BinarySI` or `DecimalSI`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::DecimalExponent => "DecimalExponent",
            Format::BinarySi => "BinarySI",
            Format::DecimalSi => "DecimalSI",
        }
    }
}

/// Go's `inf.Dec`: `(-1)^negative × magnitude × 10^-scale` (the scale counts decimal places,
/// upside-down from [`Amount::Int`]'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dec {
    /// The sign of the unscaled `big.Int` (never set on zero).
    pub negative: bool,
    /// Its magnitude.
    pub magnitude: u128,
    /// The `inf.Scale`.
    pub scale: i32,
}

/// The two forms a Go quantity keeps its value in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Amount {
    /// Go's `int64Amount`: `value × 10^scale`.
    Int {
        /// The unscaled value.
        value: i64,
        /// The power of ten (`-3` for milli).
        scale: i32,
    },
    /// Go's `infDecAmount`, for values the `int64` form cannot hold exactly.
    Dec(Dec),
}

/// Why a string is not a quantity: apimachinery's three errors, and our 128-bit limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseQuantityError {
    /// Go's `ErrFormatWrong`.
    FormatWrong,
    /// Go's `ErrNumeric`.
    Numeric,
    /// Go's `ErrSuffix`.
    Suffix,
    /// More significant digits than 128 bits hold with room to print (Go would accept it).
    TooManyDigits,
}

impl fmt::Display for ParseQuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParseQuantityError::FormatWrong => {
                "quantities must match the regular expression \
                 '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            }
            ParseQuantityError::Numeric => "unable to parse numeric part of quantity",
            ParseQuantityError::Suffix => "unable to parse quantity's suffix",
            ParseQuantityError::TooManyDigits => {
                "quantities of more than 36 significant digits are not supported"
            }
        })
    }
}

impl std::error::Error for ParseQuantityError {}

/// A parsed quantity. Equality compares values, as Go's `Quantity.Equal` does: `1Gi == 1024Mi`.
#[derive(Debug, Clone)]
pub struct Quantity {
    amount: Amount,
    format: Format,
    /// Go's `s`: the parsed string, kept when it already was canonical.
    cached: Option<String>,
}

/// The largest magnitude a [`Dec`] may have, so that printing (which multiplies by at most 100)
/// cannot overflow.
const MAX_MAGNITUDE: u128 = 10_u128.pow(36);
/// `resource.Nano`: the finest scale of an `int64Amount`, and where an `inf.Dec` is rounded.
const NANO: i32 = -9;
/// Go's `maxInt64Factors`: decimal digits an `int64` always holds.
const MAX_INT64_FACTORS: i32 = 18;

impl Quantity {
    /// `resource.ParseQuantity`: no surrounding whitespace, an optional sign, digits with an
    /// optional decimal point, and a suffix (`Ki`…`Ei`, `n`…`E`, or `e`/`E` and an exponent).
    pub fn parse(s: &str) -> Result<Quantity, ParseQuantityError> {
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

    fn int(value: i64, scale: i32, format: Format, cached: Option<&str>) -> Quantity {
        Quantity {
            amount: Amount::Int { value, scale },
            format,
            cached: cached.map(str::to_string),
        }
    }

    /// The amount as Go holds it.
    pub fn amount(&self) -> Amount {
        self.amount
    }

    /// The format of the suffix the quantity was written with (`BinarySi` becomes `DecimalSi`
    /// for a parsed value strictly between 0 and 1, as Go does).
    pub fn format(&self) -> Format {
        self.format
    }

    /// Go's cached string `s`: the parsed text when it was already canonical.
    pub fn cached(&self) -> Option<&str> {
        self.cached.as_deref()
    }

    /// `Quantity.AsInt64`: the value when it is a whole `int64` held in the `int64` form.
    pub fn as_int64(&self) -> Option<i64> {
        match self.amount {
            Amount::Int { value, scale: 0 } => Some(value),
            Amount::Int { value, scale } if scale > 0 => {
                let factor = 10_i64.checked_pow(u32::try_from(scale).ok()?)?;
                value.checked_mul(factor)
            }
            _ => None,
        }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        match self.amount {
            Amount::Int { value, .. } => value == 0,
            Amount::Dec(d) => d.magnitude == 0,
        }
    }

    /// `Quantity.RoundUp(scale)`: rounds away from zero to `scale` (a power of ten: `-3` is
    /// milli); returns whether nothing was lost. An `int64` amount already that coarse is kept
    /// as it is, string included; an `inf.Dec` is always brought to that scale.
    pub fn round_up(&mut self, scale: i32) -> bool {
        match &mut self.amount {
            Amount::Int { value, scale: own } => {
                if *own >= scale {
                    return true;
                }
                self.cached = None;
                let (rounded, exact) = scale_down_int(*value, scale.saturating_sub(*own));
                (*value, *own) = (rounded, scale);
                exact
            }
            Amount::Dec(d) => {
                self.cached = None;
                match rescale_up(d.magnitude, d.scale, scale.saturating_neg()) {
                    Some((magnitude, new_scale)) => {
                        let exact = cmp_dec(
                            Dec {
                                negative: false,
                                magnitude,
                                scale: new_scale,
                            },
                            Dec {
                                negative: false,
                                ..*d
                            },
                        ) == Ordering::Equal;
                        d.magnitude = magnitude;
                        d.scale = new_scale;
                        d.negative = d.negative && magnitude != 0;
                        exact
                    }
                    // Padding beyond 128 bits: the value is exact as it is.
                    None => true,
                }
            }
        }
    }

    /// The value as a decimal, whichever form holds it.
    fn as_dec(&self) -> Dec {
        match self.amount {
            Amount::Int { value, scale } => Dec {
                negative: value < 0,
                magnitude: u128::from(value.unsigned_abs()),
                scale: scale.saturating_neg(),
            },
            Amount::Dec(d) => d,
        }
    }

    /// `CanonicalizeBytes`: the number and its suffix.
    fn canonical(&self) -> (String, String) {
        if self.is_zero() {
            return ("0".to_string(), String::new());
        }
        let dec = self.as_dec();
        let mut format = self.format;
        let mut whole = None;
        if format == Format::BinarySi {
            let magnitude_only = Dec {
                negative: false,
                ..dec
            };
            let below_1024 = dec_lt(magnitude_only, 1024);
            match rescale_up(dec.magnitude, dec.scale, 0) {
                Some((magnitude, 0)) if !below_1024 && dec_exact(dec, magnitude) => {
                    whole = Some(magnitude);
                }
                _ => format = Format::DecimalSi,
            }
        }
        let sign = if dec.negative { "-" } else { "" };
        if let Some(magnitude) = whole {
            let (number, times) = remove_factors(magnitude, 1024);
            let suffix = match times {
                1 => "Ki",
                2 => "Mi",
                3 => "Gi",
                4 => "Ti",
                5 => "Pi",
                6 => "Ei",
                _ => "",
            };
            return (format!("{sign}{number}"), suffix.to_string());
        }
        let (number, exponent) = canonical_decimal(dec);
        let suffix = match format {
            Format::DecimalExponent if exponent == 0 => String::new(),
            Format::DecimalExponent => format!("e{exponent}"),
            // Go finds no DecimalSI suffix beyond `n`..`E` and then prints none at all.
            _ => match exponent {
                -9 => "n",
                -6 => "u",
                -3 => "m",
                3 => "k",
                6 => "M",
                9 => "G",
                12 => "T",
                15 => "P",
                18 => "E",
                _ => "",
            }
            .to_string(),
        };
        (format!("{sign}{number}"), suffix)
    }
}

impl fmt::Display for Quantity {
    /// Go's `Quantity.String`: the cached string, else the canonical form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.cached {
            return f.write_str(s);
        }
        let (number, suffix) = self.canonical();
        write!(f, "{number}{suffix}")
    }
}

impl FromStr for Quantity {
    type Err = ParseQuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        cmp_dec(self.as_dec(), other.as_dec()) == Ordering::Equal
    }
}

impl Eq for Quantity {}

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

/// `parseQuantityString`.
fn split(s: &str) -> Result<Parts<'_>, ParseQuantityError> {
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
fn parse_decimal(s: &str) -> Result<(bool, u128, i32), ParseQuantityError> {
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

/// `inf.Dec.Round(x, target, inf.RoundUp)` of a magnitude: the same value at `target` decimal
/// places, rounded away from zero. `None` when padding overflows 128 bits.
fn rescale_up(magnitude: u128, scale: i32, target: i32) -> Option<(u128, i32)> {
    if scale <= target {
        let factor = 10_u128.checked_pow(u32::try_from(target - scale).ok()?)?;
        return Some((magnitude.checked_mul(factor)?, target));
    }
    let Some(divisor) = 10_u128.checked_pow(u32::try_from(scale - target).ok()?) else {
        return Some((u128::from(magnitude != 0), target));
    };
    let quotient = magnitude / divisor;
    let rounded = quotient + u128::from(!magnitude.is_multiple_of(divisor));
    Some((rounded, target))
}

/// `negativeScaleInt64`: `value / 10^by`, rounded away from zero, and whether it was exact.
fn scale_down_int(value: i64, by: i32) -> (i64, bool) {
    let mut result = value;
    let mut fraction = false;
    for _ in 0..by {
        fraction |= result % 10 != 0;
        result /= 10;
        if result == 0 {
            return match (fraction, value > 0) {
                (false, _) => (0, true),
                (true, true) => (1, false),
                (true, false) => (-1, false),
            };
        }
    }
    if fraction {
        result += if value > 0 { 1 } else { -1 };
    }
    (result, !fraction)
}

/// Whether the whole number `magnitude` is exactly the value of `dec` (ignoring its sign).
fn dec_exact(dec: Dec, magnitude: u128) -> bool {
    let whole = Dec {
        negative: false,
        magnitude,
        scale: 0,
    };
    cmp_dec(
        whole,
        Dec {
            negative: false,
            ..dec
        },
    ) == Ordering::Equal
}

/// Whether a non-negative `dec` is below the whole number `n`.
fn dec_lt(dec: Dec, n: u128) -> bool {
    let bound = Dec {
        negative: false,
        magnitude: n,
        scale: 0,
    };
    cmp_dec(dec, bound) == Ordering::Less
}

/// `removeInt64Factors`/`removeBigIntFactors` of a magnitude: `(m, times)` with
/// `magnitude == m × base^times`.
fn remove_factors(mut magnitude: u128, base: u128) -> (u128, i32) {
    let mut times = 0;
    while magnitude >= base && magnitude.is_multiple_of(base) {
        magnitude /= base;
        times += 1;
    }
    (magnitude, times)
}

/// `AsCanonicalBytes`: the digits and a base-10 exponent that is a multiple of 3.
fn canonical_decimal(dec: Dec) -> (u128, i32) {
    let (mut number, times) = remove_factors(dec.magnitude, 10);
    let mut exponent = times.saturating_sub(dec.scale);
    while exponent % 3 != 0 {
        // At most two steps of ×10 on a magnitude of at most 10^36.
        number = number.saturating_mul(10);
        exponent -= 1;
    }
    (number, exponent)
}

/// Compares two decimals by value.
fn cmp_dec(a: Dec, b: Dec) -> Ordering {
    let sign = |d: Dec| match (d.magnitude, d.negative) {
        (0, _) => 0,
        (_, true) => -1,
        (_, false) => 1,
    };
    let (sa, sb) = (sign(a), sign(b));
    if sa != sb || sa == 0 {
        return sa.cmp(&sb);
    }
    let magnitudes = cmp_magnitude(a, b);
    if sa < 0 {
        magnitudes.reverse()
    } else {
        magnitudes
    }
}

/// Compares `|a|` and `|b|` (both non-zero): the one with more digits before the point is
/// larger, else the digits decide once both have the same number of places.
fn cmp_magnitude(a: Dec, b: Dec) -> Ordering {
    let (ma, ea) = remove_factors(a.magnitude, 10);
    let (mb, eb) = remove_factors(b.magnitude, 10);
    // value = m × 10^(e - scale); digits(m) + e - scale is the position of the leading digit.
    let exp_a = i64::from(ea) - i64::from(a.scale);
    let exp_b = i64::from(eb) - i64::from(b.scale);
    let lead_a = exp_a + i64::from(digit_count(ma));
    let lead_b = exp_b + i64::from(digit_count(mb));
    if lead_a != lead_b {
        return lead_a.cmp(&lead_b);
    }
    // Same leading position: align the exponents by padding the one with the larger exponent;
    // the padding is at most the digit count difference, so it stays within 128 bits.
    match exp_a.cmp(&exp_b) {
        Ordering::Equal => ma.cmp(&mb),
        Ordering::Greater => pad(ma, exp_a - exp_b).cmp(&mb),
        Ordering::Less => ma.cmp(&pad(mb, exp_b - exp_a)),
    }
}

fn digit_count(mut n: u128) -> u32 {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

fn pad(n: u128, by: i64) -> u128 {
    u32::try_from(by)
        .ok()
        .and_then(|by| 10_u128.checked_pow(by))
        .map_or(u128::MAX, |f| n.saturating_mul(f))
}

#[cfg(test)]
#[path = "quantity_tests.rs"]
mod tests;
