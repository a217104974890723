//! The arithmetic of the two amounts on 128-bit magnitudes (apimachinery `amount.go`,
//! `math.go`, and the parts of `inf.Dec` they use): rounding away from zero, removing factors,
//! the canonical mantissa and exponent, comparison.

use std::cmp::Ordering;

use super::Dec;

/// `inf.Dec.Round(x, target, inf.RoundUp)` of a magnitude: the same value at `target` decimal
/// places, rounded away from zero. `None` when padding overflows 128 bits.
pub(super) fn rescale_up(magnitude: u128, scale: i32, target: i32) -> Option<(u128, i32)> {
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
pub(super) fn scale_down_int(value: i64, by: i32) -> (i64, bool) {
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
pub(super) fn dec_exact(dec: Dec, magnitude: u128) -> bool {
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
pub(super) fn dec_lt(dec: Dec, n: u128) -> bool {
    let bound = Dec {
        negative: false,
        magnitude: n,
        scale: 0,
    };
    cmp_dec(dec, bound) == Ordering::Less
}

/// `removeInt64Factors`/`removeBigIntFactors` of a magnitude: `(m, times)` with
/// `magnitude == m × base^times`.
pub(super) fn remove_factors(mut magnitude: u128, base: u128) -> (u128, i32) {
    let mut times = 0;
    while magnitude >= base && magnitude.is_multiple_of(base) {
        magnitude /= base;
        times += 1;
    }
    (magnitude, times)
}

/// `AsCanonicalBytes`: the digits and a base-10 exponent that is a multiple of 3.
pub(super) fn canonical_decimal(dec: Dec) -> (u128, i32) {
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
pub(super) fn cmp_dec(a: Dec, b: Dec) -> Ordering {
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
