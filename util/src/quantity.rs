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

use decimal::{
    canonical_decimal, cmp_dec, dec_exact, dec_lt, remove_factors, rescale_up, scale_down_int,
};
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

impl Quantity {
    /// `resource.ParseQuantity`: no surrounding whitespace, an optional sign, digits with an
    /// optional decimal point, and a suffix (`Ki`…`Ei`, `n`…`E`, or `e`/`E` and an exponent).
    pub fn parse(s: &str) -> Result<Quantity, ParseQuantityError> {
        parse::parse_quantity(s)
    }

    pub(crate) fn int(value: i64, scale: i32, format: Format, cached: Option<&str>) -> Quantity {
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
    pub(crate) fn as_dec(&self) -> Dec {
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

mod decimal;
mod parse;

#[cfg(test)]
mod format_tests;
#[cfg(test)]
mod parse_tests;
