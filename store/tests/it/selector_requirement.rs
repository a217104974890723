//! Requirement construction, validation and matching: ports of apimachinery
//! `labels/selector_test.go` tables (TestRequirementConstructor, TestRequiresExactMatch, ...)
//! plus upstream-worded error messages.

use crate::common::set;
use kcm_store::selector::{Operator, Requirement};
use kcm_store::{Selector, SelectorError};

fn req(key: &str, op: Operator, vals: &[&str]) -> Requirement {
    Requirement::new(key, op, vals.iter().copied()).expect("valid requirement")
}

/// Port of TestRequirementConstructor, with the field paths of the newer upstream table.
#[test]
fn test_requirement_constructor() {
    let long_key = "a".repeat(254);
    let long_val = "a".repeat(254);
    // (key, op, values, Ok or the expected field paths of the errors)
    type Case<'a> = (&'a str, Operator, Vec<&'a str>, Result<(), Vec<&'a str>>);
    let cases: Vec<Case> = vec![
        ("x", Operator::In, vec![], Err(vec!["values"])),
        ("x", Operator::NotIn, vec![], Err(vec!["values"])),
        ("x", Operator::In, vec!["foo"], Ok(())),
        ("x", Operator::NotIn, vec!["foo"], Ok(())),
        (
            "x",
            Operator::Equals,
            vec!["bar", "foo"],
            Err(vec!["values"]),
        ),
        ("x", Operator::NotEquals, vec![], Err(vec!["values"])),
        ("x", Operator::Exists, vec![], Ok(())),
        ("x", Operator::DoesNotExist, vec![], Ok(())),
        ("x", Operator::Exists, vec!["foo"], Err(vec!["values"])),
        ("1foo", Operator::In, vec!["bar"], Ok(())),
        ("1234", Operator::In, vec!["bar"], Ok(())),
        ("y", Operator::GreaterThan, vec!["1"], Ok(())),
        ("z", Operator::LessThan, vec!["6"], Ok(())),
        ("x", Operator::GreaterThan, vec![], Err(vec!["values"])),
        (
            "foo",
            Operator::GreaterThan,
            vec!["bar"],
            Err(vec!["values[0]"]),
        ),
        (
            "barz",
            Operator::LessThan,
            vec!["blah"],
            Err(vec!["values[0]"]),
        ),
        (&long_key, Operator::Exists, vec![], Err(vec!["key"])),
        (
            "x16",
            Operator::Equals,
            vec![&long_val],
            Err(vec!["values[0][x16]"]),
        ),
        (
            "x17",
            Operator::Equals,
            vec!["a b"],
            Err(vec!["values[0][x17]"]),
        ),
        ("a b", Operator::In, vec![], Err(vec!["key", "values"])),
    ];
    for (key, op, vals, want) in cases {
        let got = Requirement::new(key, op, vals.iter().copied());
        match (got, want) {
            (Ok(_), Ok(())) => {}
            (Err(SelectorError::Invalid(errs)), Err(fields)) => {
                let got: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
                assert_eq!(got, fields, "{key:.20} {op} {vals:?}");
            }
            (got, want) => panic!("{key:.20} {op} {vals:?}: got {got:?}, want {want:?}"),
        }
    }
}

/// Upstream-shaped error messages.
#[test]
fn requirement_error_messages() {
    let e = Requirement::new("x", Operator::Equals, ["a", "b"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"values: Invalid value: []string{"a", "b"}: exact-match compatibility requires one single value"#
    );
    let e = Requirement::new("x", Operator::In, Vec::<String>::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
    );
    let e = Requirement::new("x", Operator::GreaterThan, ["a"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer"#
    );
    let e = Requirement::new("x", Operator::Equals, ["a b"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "values[0][x]: Invalid value: \"a b\": a valid label must be an empty string or consist of \
         alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric \
         character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
         '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    );
    // Upstream's RegexError really puts two spaces before each "or".
    // Two problems are aggregated in brackets.
    let e = Requirement::new("-x", Operator::Exists, ["a"]).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with(r#"[key: Invalid value: "-x": name part must consist of"#),
        "{msg}"
    );
    assert!(msg.ends_with(r#"values: Invalid value: []string{"a"}: values set must be empty for exists and does not exist]"#), "{msg}");
}

/// Port of TestRequirementSelectorMatching.
#[test]
fn test_requirement_selector_matching() {
    type Case<'a> = (Vec<(&'a str, &'a str)>, Vec<Requirement>, bool);
    let cases: Vec<Case> = vec![
        (
            vec![("x", "foo"), ("y", "baz")],
            vec![
                req("x", Operator::In, &["foo"]),
                req("y", Operator::NotIn, &["alpha"]),
            ],
            true,
        ),
        (
            vec![("x", "foo"), ("y", "baz")],
            vec![
                req("x", Operator::In, &["foo"]),
                req("y", Operator::In, &["alpha"]),
            ],
            false,
        ),
        (
            vec![("y", "")],
            vec![
                req("x", Operator::NotIn, &[""]),
                req("y", Operator::Exists, &[]),
            ],
            true,
        ),
        (
            vec![("y", "")],
            vec![
                req("x", Operator::DoesNotExist, &[]),
                req("y", Operator::Exists, &[]),
            ],
            true,
        ),
        (
            vec![("y", "")],
            vec![
                req("x", Operator::NotIn, &[""]),
                req("y", Operator::DoesNotExist, &[]),
            ],
            false,
        ),
        (
            vec![("y", "baz")],
            vec![req("x", Operator::In, &[""])],
            false,
        ),
        (
            vec![("z", "2")],
            vec![req("z", Operator::GreaterThan, &["1"])],
            true,
        ),
        (
            vec![("z", "v2")],
            vec![req("z", Operator::GreaterThan, &["1"])],
            false,
        ),
        (vec![], vec![req("z", Operator::LessThan, &["1"])], false),
        (
            vec![("z", "-5")],
            vec![req("z", Operator::LessThan, &["1"])],
            true,
        ),
        (
            vec![("z", "+5")],
            vec![req("z", Operator::GreaterThan, &["4"])],
            true,
        ),
    ];
    for (labels, reqs, want) in cases {
        let sel = Selector::from_requirements(reqs);
        assert_eq!(sel.matches(&set(&labels)), want, "{sel} vs {labels:?}");
    }
}

/// Port of TestRequiresExactMatch.
#[test]
fn test_requires_exact_match() {
    let cases: Vec<(&str, Vec<Requirement>, &str, Option<&str>)> = vec![
        (
            "keyInOperatorExactMatch",
            vec![req("key", Operator::In, &["value"])],
            "key",
            Some("value"),
        ),
        (
            "keyInOperatorNotExactMatch",
            vec![req("key", Operator::In, &["value", "value2"])],
            "key",
            None,
        ),
        (
            "keyInOperatorNotExactMatch2",
            vec![
                req("key", Operator::In, &["value", "value1"]),
                req("key2", Operator::In, &["value2"]),
            ],
            "key2",
            Some("value2"),
        ),
        (
            "keyEqualOperatorExactMatch",
            vec![req("key", Operator::Equals, &["value"])],
            "key",
            Some("value"),
        ),
        (
            "keyDoubleEqualOperatorExactMatch",
            vec![req("key", Operator::DoubleEquals, &["value"])],
            "key",
            Some("value"),
        ),
        (
            "keyNotEqualOperatorExactMatch",
            vec![req("key", Operator::NotEquals, &["value"])],
            "key",
            None,
        ),
        (
            "keyEqualOperatorExactMatchFirst",
            vec![
                req("key", Operator::In, &["value"]),
                req("key2", Operator::In, &["value2"]),
            ],
            "key",
            Some("value"),
        ),
        // Only the first requirement on a key counts.
        (
            "firstRequirementOnKeyWins",
            vec![
                req("key", Operator::Exists, &[]),
                req("key", Operator::Equals, &["v"]),
            ],
            "key",
            None,
        ),
    ];
    for (name, reqs, label, want) in cases {
        let sel = Selector::from_requirements(reqs);
        assert_eq!(sel.requires_exact_match(label), want, "{name}");
    }
}

#[test]
fn label_key_validation() {
    let valid = [
        "a",
        "A",
        "1",
        "a.b_c-d",
        "example.com/MyName",
        "my.name",
        "123-abc",
        "k8s.io/app",
        &"a".repeat(63),
        &format!("{}/a", "a".repeat(253)),
    ];
    for k in valid {
        assert!(
            Requirement::new(k, Operator::Exists, Vec::<String>::new()).is_ok(),
            "{k:.30}"
        );
    }
    let invalid: &[(&str, &str)] = &[
        ("", "name part must be non-empty"),
        ("-a", "name part must consist of"),
        ("a-", "name part must consist of"),
        ("a b", "name part must consist of"),
        ("/a", "prefix part must be non-empty"),
        ("a/", "name part must be non-empty"),
        (
            "Example.com/a",
            "prefix part a lowercase RFC 1123 subdomain",
        ),
        ("a/b/c", "a valid label key must consist of"),
    ];
    for (k, want) in invalid {
        let e = Requirement::new(k, Operator::Exists, Vec::<String>::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{k:?}: {e}");
    }
    let e = Requirement::new(&"a".repeat(64), Operator::Exists, Vec::<String>::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("name part must be no more than 63 bytes"), "{e}");
    let e = Requirement::new(
        &format!("{}/a", "a".repeat(254)),
        Operator::Exists,
        Vec::<String>::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("prefix part must be no more than 253 bytes"),
        "{e}"
    );
}

#[test]
fn label_value_validation() {
    for v in ["", "a", "A-b_c.d", "12345", &"a".repeat(63)] {
        assert!(
            Requirement::new("k", Operator::Equals, [v]).is_ok(),
            "{v:?}"
        );
    }
    for v in ["-a", "a-", "a b", "a/b", "ä"] {
        assert!(
            Requirement::new("k", Operator::Equals, [v]).is_err(),
            "{v:?}"
        );
    }
    let e = Requirement::new("k", Operator::Equals, ["a".repeat(64)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("must be no more than 63 bytes"), "{e}");
}
