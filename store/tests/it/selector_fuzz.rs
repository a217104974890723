//! Property tests for the selector parser: never panics, and the canonical string of any
//! parsed selector parses back to itself with the same matching behaviour.

use std::collections::BTreeMap;

use kcm_store::Selector;
use proptest::prelude::*;

/// Strings built from selector-ish fragments, so that many of them are valid.
fn selectorish() -> impl Strategy<Value = String> {
    let frag = prop::sample::select(vec![
        "a",
        "b",
        "k8s.io/app",
        "x",
        "in",
        "notin",
        "v",
        "1",
        "2",
        "-",
        "_",
        ".",
        "=",
        "==",
        "!=",
        "!",
        "(",
        ")",
        ",",
        " ",
        "\t",
        ">",
        "<",
        "a-b",
        "A.b_c",
        "é",
        "/",
        "||",
        "\0",
    ]);
    prop::collection::vec(frag, 0..12).prop_map(|v| v.concat())
}

fn labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(
        prop::sample::select(vec!["a", "b", "x", "in", "k8s.io/app"]).prop_map(String::from),
        prop::sample::select(vec!["", "v", "1", "2", "in", "-5"]).prop_map(String::from),
        0..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_never_panics_and_round_trips(s in selectorish(), ls in labels()) {
        if let Ok(sel) = Selector::parse(&s) {
            let canon = sel.to_string();
            let again = Selector::parse(&canon)
                .unwrap_or_else(|e| panic!("canonical {canon:?} of {s:?} does not parse: {e}"));
            prop_assert_eq!(again.to_string(), canon.clone());
            prop_assert_eq!(again.matches(&ls), sel.matches(&ls), "{:?} vs {:?}", s, canon);
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(s in ".{0,40}") {
        let _ = Selector::parse(&s).map(|sel| sel.to_string());
    }
}

/// Guards the round-trip property above against being vacuous: the fragment generator must
/// produce a fair share of valid (and non-trivial) selectors.
#[test]
fn generator_produces_valid_selectors() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strat = selectorish();
    let mut valid = 0;
    let mut non_trivial = 0;
    for _ in 0..2000 {
        let s = strat.new_tree(&mut runner).expect("value").current();
        if let Ok(sel) = Selector::parse(&s) {
            valid += 1;
            non_trivial += usize::from(!sel.requirements().is_empty());
        }
    }
    assert!(
        valid > 300 && non_trivial > 100,
        "valid {valid}, non-trivial {non_trivial}"
    );
}
