//! Property tests for Go duration parsing (`time.ParseDuration`, used by kcm's flags and
//! kcm-testenv's annotations and fault specs): any input is answered without panicking,
//! well-formed inputs add up exactly like Go's integer arithmetic, anything past `i64::MAX`
//! nanoseconds is an error, and every duration printed the way Go prints it parses back to
//! itself.
//!
//! Case count: proptest's default (256), scaled with `PROPTEST_CASES`.

use std::time::Duration;

use kcm_util::go_duration::{format_go_duration, parse_go_duration};
use proptest::prelude::*;

const UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Strings made of duration-ish fragments, so that many are valid and many almost are.
fn durationish() -> impl Strategy<Value = String> {
    let frag = prop_oneof![
        "[0-9]{1,3}",
        "[0-9]{15,40}",
        Just(".".to_string()),
        "\\.[0-9]{1,25}",
        prop::sample::select(
            &[
                "ns", "us", "µs", "μs", "ms", "s", "m", "h", "d", "x", "-", "+", " ", "é"
            ][..]
        )
        .prop_map(String::from),
    ];
    prop::collection::vec(frag, 0..8).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn never_panics(s in prop_oneof![durationish(), ".{0,30}"]) {
        if let Ok(d) = parse_go_duration(&s) {
            prop_assert!(d.as_nanos() <= i64::MAX as u128, "{:?} -> {:?}", s, d);
        }
    }

    /// Integer components: the sum is exact, and an error exactly when it passes `i64::MAX`.
    #[test]
    fn integer_components_add_up(parts in prop::collection::vec((0u64..=u64::MAX >> 20, 0..UNITS.len()), 1..5), plus in any::<bool>()) {
        let mut text = String::from(if plus { "+" } else { "" });
        let mut want: u128 = 0;
        for (n, u) in &parts {
            let (unit, nanos) = UNITS[*u];
            text.push_str(&format!("{n}{unit}"));
            want += u128::from(*n) * nanos;
        }
        match parse_go_duration(&text) {
            Ok(d) => prop_assert_eq!(d.as_nanos(), want, "{}", text),
            Err(e) => prop_assert!(want > i64::MAX as u128, "{} ({} ns) rejected: {}", text, want, e),
        }
    }

    /// A fraction adds `digits * unit / 10^len` truncated, within one nanosecond of the exact
    /// value (Go scales it in floating point).
    #[test]
    fn fractions_are_close_to_exact(whole in 0u64..1_000_000, frac in "[0-9]{1,9}", u in 0..UNITS.len()) {
        let (unit, nanos) = UNITS[u];
        let text = format!("{whole}.{frac}{unit}");
        let d = parse_go_duration(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let exact_num = (u128::from(whole) * 10u128.pow(frac.len() as u32)
            + frac.parse::<u128>().unwrap_or(0)) * nanos;
        let exact = exact_num / 10u128.pow(frac.len() as u32);
        prop_assert!(d.as_nanos() <= exact && exact - d.as_nanos() <= 1, "{}: {} vs exact {}", text, d.as_nanos(), exact);
    }

    #[test]
    fn printed_durations_parse_back(nanos in prop_oneof![0u64..=i64::MAX as u64, 0u64..10_000_000_000]) {
        let d = Duration::from_nanos(nanos);
        let printed = format_go_duration(d);
        prop_assert_eq!(parse_go_duration(&printed), Ok(d), "{}", printed);
    }

    #[test]
    fn negative_durations_are_refused_unless_zero(s in durationish()) {
        let negative = format!("-{s}");
        match (parse_go_duration(&s), parse_go_duration(&negative)) {
            (Ok(d), Ok(n)) => prop_assert!(d.is_zero() && n.is_zero(), "{:?}", negative),
            (Ok(d), Err(_)) => prop_assert!(!d.is_zero() || s.starts_with(['+', '-']), "{:?}", negative),
            (Err(_), got) => prop_assert!(got.is_err(), "{:?} -> {:?}", negative, got),
        }
    }
}

/// Found while writing these targets: a whole part just below `u128::MAX / unit` plus a
/// fraction overflowed the nanosecond sum (a panic in debug builds; in release it wrapped to
/// about 30 minutes and was accepted).
#[test]
fn fraction_overflow_past_u128_is_an_error() {
    for input in [
        "94522879700260684295381835.9h",
        "340282366920938463463374607431768211455.9ns",
        "1h94522879700260684295381835.9h",
    ] {
        let got = parse_go_duration(input).map_err(|e| e.to_string());
        assert_eq!(
            got,
            Err(format!("time: invalid duration {input:?}")),
            "{input}"
        );
    }
}
