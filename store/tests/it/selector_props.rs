//! Structure-aware property tests for the selector parser, complementing `selector_fuzz.rs`
//! (which feeds it fragment soup): selectors are generated as requirements, written in any of the
//! syntax's spellings (spacing, `=`/`==`, duplicate and unsorted set values, `in ()`), and must
//! parse to exactly those requirements and match labels exactly as the requirements say.
//! Near-valid inputs (one byte inserted, deleted or replaced) must never panic.
//!
//! Case count: proptest's default (256), scaled with `PROPTEST_CASES`.

use std::collections::{BTreeMap, BTreeSet};

use kcm_store::Selector;
use kcm_store::selector::Operator;
use proptest::prelude::*;

const KEYS: &[&str] = &[
    "app",
    "tier",
    "k8s.io/name",
    "a.b-c_d",
    "x",
    "9z",
    "in",
    "notin",
];
const VALUES: &[&str] = &["", "web", "db", "v1.2", "a-b_c", "0", "7", "42", "in"];
/// Label values on objects need not be valid selector values (`-3` compares as an integer).
const LABEL_VALUES: &[&str] = &["", "web", "db", "v1.2", "0", "7", "-3", "42", "in", "-"];

/// One generated requirement: key, operator, values as written (possibly repeated).
#[derive(Debug, Clone)]
struct Req {
    key: &'static str,
    op: Operator,
    values: Vec<&'static str>,
}

fn req() -> impl Strategy<Value = Req> {
    let key = || prop::sample::select(KEYS);
    let value = || prop::sample::select(VALUES);
    let int_value = prop::sample::select(&["0", "7", "42", "0042"][..]);
    prop_oneof![
        key().prop_map(|key| Req {
            key,
            op: Operator::Exists,
            values: vec![]
        }),
        key().prop_map(|key| Req {
            key,
            op: Operator::DoesNotExist,
            values: vec![]
        }),
        (
            key(),
            prop::sample::select(
                &[
                    Operator::Equals,
                    Operator::DoubleEquals,
                    Operator::NotEquals
                ][..]
            ),
            value()
        )
            .prop_map(|(key, op, v)| Req {
                key,
                op,
                values: vec![v]
            }),
        (
            key(),
            prop::sample::select(&[Operator::In, Operator::NotIn][..]),
            prop::collection::vec(value(), 0..5)
        )
            .prop_map(|(key, op, values)| Req { key, op, values }),
        (
            key(),
            prop::sample::select(&[Operator::GreaterThan, Operator::LessThan][..]),
            int_value
        )
            .prop_map(|(key, op, v)| Req {
                key,
                op,
                values: vec![v]
            }),
    ]
}

/// Writes a requirement with the given amount of optional whitespace.
fn write(r: &Req, ws: &str) -> String {
    let vals = r.values.join(&format!("{ws},{ws}"));
    match r.op {
        Operator::Exists => r.key.to_string(),
        Operator::DoesNotExist => format!("!{ws}{}", r.key),
        Operator::In => format!("{} in {ws}({ws}{vals}{ws})", r.key),
        Operator::NotIn => format!("{} notin {ws}({ws}{vals}{ws})", r.key),
        op => {
            let sym = match op {
                Operator::Equals => "=",
                Operator::DoubleEquals => "==",
                Operator::NotEquals => "!=",
                Operator::GreaterThan => ">",
                _ => "<",
            };
            format!("{}{ws}{sym}{ws}{}", r.key, r.values[0])
        }
    }
}

/// The values a parsed requirement holds: sets are sorted and deduplicated, `()` is `[""]`.
fn parsed_values(r: &Req) -> Vec<String> {
    match r.op {
        Operator::In | Operator::NotIn => {
            let set: BTreeSet<&str> = r.values.iter().copied().collect();
            if set.is_empty() {
                vec![String::new()]
            } else {
                set.into_iter().map(String::from).collect()
            }
        }
        _ => r.values.iter().map(|v| v.to_string()).collect(),
    }
}

/// What the requirement means, evaluated directly (apimachinery `Requirement.Matches`).
fn reference_matches(r: &Req, labels: &BTreeMap<String, String>) -> bool {
    let values = parsed_values(r);
    let got = labels.get(r.key);
    match r.op {
        Operator::Exists => got.is_some(),
        Operator::DoesNotExist => got.is_none(),
        Operator::Equals | Operator::DoubleEquals | Operator::In => {
            got.is_some_and(|v| values.contains(v))
        }
        Operator::NotEquals | Operator::NotIn => !got.is_some_and(|v| values.contains(v)),
        Operator::GreaterThan | Operator::LessThan => {
            let (Some(Ok(have)), Ok(want)) =
                (got.map(|v| v.parse::<i64>()), values[0].parse::<i64>())
            else {
                return false;
            };
            if r.op == Operator::GreaterThan {
                have > want
            } else {
                have < want
            }
        }
    }
}

fn labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(
        prop::sample::select(KEYS).prop_map(String::from),
        prop::sample::select(LABEL_VALUES).prop_map(String::from),
        0..6,
    )
}

fn whitespace() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&["", " ", "  ", "\t", " \n "][..])
}

proptest! {
    #[test]
    fn generated_selectors_parse_to_their_requirements(
        reqs in prop::collection::vec(req(), 0..5),
        ws in whitespace(),
        ls in labels(),
    ) {
        let text = reqs.iter().map(|r| write(r, ws)).collect::<Vec<_>>().join(&format!("{ws},{ws}"));
        let sel = Selector::parse(&text)
            .map_err(|e| TestCaseError::fail(format!("{text:?} does not parse: {e}")))?;
        // Requirements come back sorted by key (stable: same-key order is kept).
        let mut want: Vec<&Req> = reqs.iter().collect();
        want.sort_by_key(|r| r.key);
        let got: Vec<(&str, Operator, Vec<String>)> = sel
            .requirements()
            .iter()
            .map(|r| (r.key(), r.operator(), r.values().to_vec()))
            .collect();
        let want: Vec<(&str, Operator, Vec<String>)> =
            want.iter().map(|r| (r.key, r.op, parsed_values(r))).collect();
        prop_assert_eq!(got, want, "{:?}", text);
        let expected = reqs.iter().all(|r| reference_matches(r, &ls));
        prop_assert_eq!(sel.matches(&ls), expected, "{:?} on {:?}", text, ls);
        let canonical = sel.to_string();
        let again = Selector::parse(&canonical)
            .map_err(|e| TestCaseError::fail(format!("canonical {canonical:?} does not parse: {e}")))?;
        prop_assert_eq!(again, sel);
    }

    #[test]
    fn near_valid_selectors_never_panic(
        reqs in prop::collection::vec(req(), 1..4),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(&[b'=', b'!', b'(', b')', b',', b' ', b'a', b'/', b'.', b'-', 0u8, b'>'][..]),
        edit in 0..3u8,
    ) {
        let text = reqs.iter().map(|r| write(r, " ")).collect::<Vec<_>>().join(",");
        let mut bytes = text.into_bytes();
        let i = at.index(bytes.len() + 1);
        match edit {
            0 => bytes.insert(i, byte),
            1 if i < bytes.len() => { bytes.remove(i); }
            _ if i < bytes.len() => bytes[i] = byte,
            _ => bytes.push(byte),
        }
        // Every edit keeps ASCII input ASCII, so this never fails.
        let mutated = String::from_utf8(bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if let Ok(sel) = Selector::parse(&mutated) {
            let canonical = sel.to_string();
            prop_assert!(Selector::parse(&canonical).is_ok(), "{:?} -> {:?}", mutated, canonical);
        }
    }

    #[test]
    fn huge_keys_and_values_are_judged_by_length(
        n in 60usize..400,
        c in prop::sample::select(&['a', 'é', '.', '-'][..]),
    ) {
        let long: String = std::iter::repeat_n(c, n).collect();
        let alnum = c == 'a';
        // A name part and a value hold up to 63 bytes, a DNS prefix up to 253.
        let cases = [
            (format!("{long}=x"), alnum && n <= 63),
            (format!("x={long}"), alnum && n <= 63),
            (format!("x in ({long},b)"), alnum && n <= 63),
            (format!("{long}/x"), alnum && n <= 253),
            (format!("x/{long}"), alnum && n <= 63),
        ];
        for (text, valid) in cases {
            match Selector::parse(&text) {
                Ok(_) => prop_assert!(valid, "{} bytes of {:?} accepted: {:?}", n, c, text),
                Err(e) => prop_assert!(!valid, "{} bytes of {:?} rejected: {}", n, c, e),
            }
        }
    }
}
