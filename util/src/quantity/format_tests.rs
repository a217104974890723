//! Printing and rounding: the table cases of apimachinery v0.37.2
//! `pkg/api/resource/quantity_test.go` `TestQuantityRoundUp`, `TestQuantityString` and
//! `TestQuantityParseEmit`, and the defaulting kube-apiserver applies to container resources.

use super::parse_tests::{as_dec_form, dec_q, neg, parse};
use super::*;

use Format::{BinarySi, DecimalExponent, DecimalSi};

#[test]
fn quantity_round_up() {
    let cases = [
        ("9.01", -3, dec_q(901, -2, DecimalSi), true),
        ("9.01", -2, dec_q(901, -2, DecimalSi), true),
        ("9.01", -1, dec_q(91, -1, DecimalSi), false),
        ("9.01", 0, dec_q(10, 0, DecimalSi), false),
        ("9.01", 1, dec_q(10, 0, DecimalSi), false),
        ("9.01", 2, dec_q(100, 0, DecimalSi), false),
        ("-9.01", -3, dec_q(-901, -2, DecimalSi), true),
        ("-9.01", -2, dec_q(-901, -2, DecimalSi), true),
        ("-9.01", -1, dec_q(-91, -1, DecimalSi), false),
        ("-9.01", 0, dec_q(-10, 0, DecimalSi), false),
        ("-9.01", 1, dec_q(-10, 0, DecimalSi), false),
        ("-9.01", 2, dec_q(-100, 0, DecimalSi), false),
    ];
    for as_dec in [false, true] {
        for (input, scale, want, exact) in &cases {
            let mut got = parse(input);
            if as_dec {
                got = as_dec_form(&got);
            }
            assert_eq!(got.round_up(*scale), *exact, "{input}({scale},{as_dec})");
            assert_eq!(&got, want, "{input}({scale},{as_dec}): {got} vs {want}");
        }
    }
}

#[test]
fn quantity_string() {
    let cases = [
        (dec_q(1 << 30, 0, BinarySi), "1Gi", "1024Mi"),
        (dec_q(300 << 20, 0, BinarySi), "300Mi", "307200Ki"),
        (dec_q(6 * 1024, 0, BinarySi), "6Ki", ""),
        (dec_q(1001 << 30, 0, BinarySi), "1001Gi", "1025024Mi"),
        (dec_q(1 << 40, 0, BinarySi), "1Ti", "1024Gi"),
        (dec_q(5, 0, BinarySi), "5", "5000m"),
        (dec_q(500, -3, BinarySi), "500m", "0.5"),
        (dec_q(1, 9, DecimalSi), "1G", "1000M"),
        (dec_q(1000, 6, DecimalSi), "1G", "0.001T"),
        (dec_q(1000000, 3, DecimalSi), "1G", ""),
        (dec_q(1000000000, 0, DecimalSi), "1G", ""),
        (dec_q(1, -3, DecimalSi), "1m", "1000u"),
        (dec_q(80, -3, DecimalSi), "80m", ""),
        (dec_q(1080, -3, DecimalSi), "1080m", "1.08"),
        (dec_q(108, -2, DecimalSi), "1080m", "1080000000n"),
        (dec_q(10800, -4, DecimalSi), "1080m", ""),
        (dec_q(300, 6, DecimalSi), "300M", ""),
        (dec_q(1, 12, DecimalSi), "1T", ""),
        (dec_q(1234567, 6, DecimalSi), "1234567M", ""),
        (dec_q(1234567, -3, BinarySi), "1234567m", ""),
        (dec_q(3, 3, DecimalSi), "3k", ""),
        (dec_q(1025, 0, BinarySi), "1025", ""),
        (dec_q(0, 0, DecimalSi), "0", ""),
        (dec_q(0, 0, BinarySi), "0", ""),
        (dec_q(1, 9, DecimalExponent), "1e9", ".001e12"),
        (dec_q(1, -3, DecimalExponent), "1e-3", "0.001e0"),
        (dec_q(1, -9, DecimalExponent), "1e-9", "1000e-12"),
        (dec_q(80, -3, DecimalExponent), "80e-3", ""),
        (dec_q(300, 6, DecimalExponent), "300e6", ""),
        (dec_q(1, 12, DecimalExponent), "1e12", ""),
        (dec_q(1, 3, DecimalExponent), "1e3", ""),
        (dec_q(3, 3, DecimalExponent), "3e3", ""),
        (dec_q(3, 3, DecimalSi), "3k", ""),
        (dec_q(0, 0, DecimalExponent), "0", "00"),
        (dec_q(1, -9, DecimalSi), "1n", ""),
        (dec_q(80, -9, DecimalSi), "80n", ""),
        (dec_q(1080, -9, DecimalSi), "1080n", ""),
        (dec_q(108, -8, DecimalSi), "1080n", ""),
        (dec_q(10800, -10, DecimalSi), "1080n", ""),
        (dec_q(1, -6, DecimalSi), "1u", ""),
        (dec_q(80, -6, DecimalSi), "80u", ""),
        (dec_q(1080, -6, DecimalSi), "1080u", ""),
    ];
    for (q, want, alternate) in &cases {
        assert_eq!(q.to_string(), *want, "{q:?}");
        assert_eq!(
            parse(want).cached(),
            Some(*want),
            "{want}: canonical string kept"
        );
        if !alternate.is_empty() {
            let alt = parse(alternate);
            assert_eq!(alt.cached(), None, "{alternate}: not canonical");
            assert_eq!(alt.to_string(), *want, "{alternate}");
        }
        if !q.is_zero() {
            assert_eq!(neg(q).to_string(), format!("-{want}"), "{q:?}");
        }
    }
}

#[test]
fn quantity_parse_emit() {
    let cases = [
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
    ];
    for (input, want) in cases {
        assert_eq!(parse(input).to_string(), want, "{input}");
        assert_eq!(
            parse(&format!("-{input}")).to_string(),
            format!("-{want}"),
            "-{input}"
        );
    }
}

/// Ours: what the 128-bit form refuses, and Go's quirks kept.
#[test]
fn limits_and_quirks() {
    assert_eq!(
        Quantity::parse("1234567890123456789012345678901234567890"),
        Err(ParseQuantityError::TooManyDigits)
    );
    // Go keeps a canonical-looking string with its sign, and prints no DecimalSI suffix past E.
    assert_eq!(parse("+1").to_string(), "+1");
    assert_eq!(parse("1000E").to_string(), "1");
    // The Go names of the formats, as go-spew prints them.
    assert_eq!(
        [DecimalExponent, BinarySi, DecimalSi].map(Format::as_str),
        ["DecimalExponent", "BinarySI", "DecimalSI"]
    );
}

/// What kube-apiserver's defaulting stores for container resources: rounded up to milli
/// (`SetDefaults_ResourceList`), then printed canonically.
#[test]
fn defaulting_round_up_to_milli() {
    for (input, want) in [
        ("0.5", "500m"),
        ("1000m", "1"),
        ("0.0001", "1m"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Ki", "512"),
        ("12e2", "1200"),
        ("-0.5", "-500m"),
        ("100m", "100m"),
    ] {
        let mut q = parse(input);
        q.round_up(-3);
        assert_eq!(q.to_string(), want, "{input}");
    }
}
