//! `resource.Quantity` canonical form (apimachinery `Quantity.CanonicalizeBytes`), with the
//! defaulting round-up to milli precision (`SetDefaults_ResourceList`).
//!
//! The stored form matters: the Deployment controller hashes the stored pod template, so
//! `cpu: 0.5` must be stored as `500m` and `memory: 1024Mi` as `1Gi`, exactly as upstream.

/// How the quantity was written, which decides how it is printed back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `Ki`, `Mi`, ...
    BinarySi,
    /// `m`, `k`, `M`, ... or no suffix
    DecimalSi,
    /// `1e3`
    DecimalExponent,
}

fn binary_power(s: &str) -> Option<u32> {
    Some(match s {
        "Ki" => 1,
        "Mi" => 2,
        "Gi" => 3,
        "Ti" => 4,
        "Pi" => 5,
        "Ei" => 6,
        _ => return None,
    })
}

fn decimal_exp(s: &str) -> Option<i32> {
    Some(match s {
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "" => 0,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        _ => return None,
    })
}

/// Parse into (negative, mantissa, base-10 exponent, format).
fn parse(s: &str) -> Option<(bool, i128, i32, Format)> {
    let s = s.trim();
    let (neg, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (num, suffix) = rest.split_at(num_end);
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return None;
    }
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 30 {
        return None;
    }
    let mut mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let mut exp = -i32::try_from(frac_part.len()).ok()?;
    let format = if let Some(p) = binary_power(suffix) {
        for _ in 0..p {
            mantissa = mantissa.checked_mul(1024)?;
        }
        Format::BinarySi
    } else if let Some(e) = decimal_exp(suffix) {
        exp += e;
        Format::DecimalSi
    } else if let Some(e) = suffix.strip_prefix(['e', 'E']) {
        exp += e.parse::<i32>().ok()?;
        Format::DecimalExponent
    } else {
        return None;
    };
    Some((neg, mantissa, exp, format))
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// The canonical string of a quantity after rounding up to milli precision, or `None`
/// when it does not parse (the original is then kept).
pub fn canonical(s: &str) -> Option<String> {
    let (neg, mut m, mut e, format) = parse(s)?;
    // round up (away from zero) to milli precision
    if e < -3 {
        let shift = u32::try_from(-3 - e).ok()?;
        let d = pow10(shift)?;
        let q = m / d;
        m = if m % d != 0 { q + 1 } else { q };
        e = -3;
    }
    if m == 0 {
        return Some("0".to_string());
    }
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    let sign = if neg { "-" } else { "" };
    let mut format = format;
    if format == Format::BinarySi {
        // the integer value, if it is one
        let int_value = if e >= 0 {
            m.checked_mul(pow10(u32::try_from(e).ok()?)?)
        } else {
            None
        };
        match int_value {
            Some(v) if v >= 1024 => {
                let mut v = v;
                let mut k = 0;
                while k < 6 && v % 1024 == 0 {
                    v /= 1024;
                    k += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][k];
                return Some(format!("{sign}{v}{suffix}"));
            }
            _ => format = Format::DecimalSi,
        }
    }
    let e3 = e.div_euclid(3) * 3;
    let e3 = e3.min(18);
    let number = m.checked_mul(pow10(u32::try_from(e - e3).ok()?)?)?;
    let suffix = match format {
        Format::DecimalExponent => {
            if e3 == 0 {
                String::new()
            } else {
                format!("e{e3}")
            }
        }
        _ => match e3 {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            _ => "E",
        }
        .to_string(),
    };
    Some(format!("{sign}{number}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        // after upstream quantity_test.go TestQuantityParse/TestQuantityString cases
        for (input, want) in [
            ("0", "0"),
            ("0.5", "500m"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("100m", "100m"),
            ("2000", "2k"),
            ("100", "100"),
            ("1", "1"),
            ("1.5", "1500m"),
            ("0.0001", "1m"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("1.5Gi", "1536Mi"),
            ("512Ki", "512Ki"),
            ("100Mi", "100Mi"),
            ("1Ki", "1Ki"),
            ("0.5Ki", "512"),
            ("128M", "128M"),
            ("1000M", "1G"),
            ("1e3", "1e3"),
            ("1E6", "1e6"),
            ("12e2", "1200"),
            ("-1", "-1"),
            ("-0.5", "-500m"),
            ("10G", "10G"),
        ] {
            assert_eq!(canonical(input).as_deref(), Some(want), "{input}");
        }
        assert_eq!(canonical("abc"), None);
        assert_eq!(canonical("1Xi"), None);
    }
}
