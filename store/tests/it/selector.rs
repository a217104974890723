//! Label selector tests: ports of apimachinery `labels/selector_test.go` tables, plus error
//! message checks.

use crate::common::set;
use kcm_store::Selector;
use kcm_store::selector::{Operator, Requirement};

fn req(key: &str, op: Operator, vals: &[&str]) -> Requirement {
    Requirement::new(key, op, vals.iter().copied()).expect("valid requirement")
}

/// Port of TestSelectorParse.
#[test]
fn test_selector_parse() {
    let good = [
        "x=a,y=b,z=c",
        "",
        "x!=a,y=b",
        "x=",
        "x= ",
        "x=,z= ",
        "x= ,z= ",
        "!x",
        "x>1",
        "x>1,z<5",
    ];
    for s in good {
        let sel = Selector::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        assert_eq!(sel.to_string(), s.replace(' ', ""), "restring of {s:?}");
    }
    let bad = ["x=a||y=b", "x==a==b", "!x=a", "x<a"];
    for s in bad {
        assert!(Selector::parse(s).is_err(), "{s:?} should fail");
    }
}

/// Port of TestDeterministicParse.
#[test]
fn test_deterministic_parse() {
    let s1 = Selector::parse("x=a,a=x").unwrap();
    let s2 = Selector::parse("a=x,x=a").unwrap();
    assert_eq!(s1.to_string(), s2.to_string());
    assert_eq!(s1.to_string(), "a=x,x=a");
}

/// Port of TestEverything / TestSetIsEmpty / TestNilMapIsValid.
#[test]
fn test_everything_and_empty() {
    assert!(Selector::everything().matches(&set(&[("x", "y")])));
    assert!(Selector::everything().is_everything());
    assert!(Selector::from_labels(Vec::<(String, String)>::new()).is_everything());
    assert!(Selector::parse("").unwrap().is_everything());
    assert!(!Selector::nothing().is_everything());
    assert!(!Selector::nothing().matches(&set(&[])));
    assert!(Selector::nothing().is_nothing());
    assert_eq!(Selector::nothing().to_string(), "");
    // Adding requirements to "nothing" keeps it "nothing".
    let n = Selector::nothing().add_requirements([req("a", Operator::Exists, &[])]);
    assert!(n.is_nothing());
}

/// Port of TestSelectorMatches.
#[test]
fn test_selector_matches() {
    let yes: &[(&str, &[(&str, &str)])] = &[
        ("", &[("x", "y")]),
        ("x=y", &[("x", "y")]),
        ("x=y,z=w", &[("x", "y"), ("z", "w")]),
        ("x!=y,z!=w", &[("x", "z"), ("z", "a")]),
        ("notin=in", &[("notin", "in")]), // in and notin in exact match
        ("x", &[("x", "z")]),
        ("!x", &[("y", "z")]),
        ("x>1", &[("x", "2")]),
        ("x<1", &[("x", "0")]),
    ];
    let no: &[(&str, &[(&str, &str)])] = &[
        ("x=z", &[]),
        ("x=y", &[("x", "z")]),
        ("x=y,z=w", &[("x", "w"), ("z", "w")]),
        ("x!=y,z!=w", &[("x", "z"), ("z", "w")]),
        ("x", &[("y", "z")]),
        ("!x", &[("x", "z")]),
        ("x>1", &[("x", "0")]),
        ("x<1", &[("x", "2")]),
    ];
    for (s, labels) in yes {
        assert!(
            Selector::parse(s).unwrap().matches(&set(labels)),
            "{s:?} should match {labels:?}"
        );
    }
    for (s, labels) in no {
        assert!(
            !Selector::parse(s).unwrap().matches(&set(labels)),
            "{s:?} should not match {labels:?}"
        );
    }
    let ls = set(&[("foo", "bar"), ("baz", "blah")]);
    for s in ["foo=bar", "baz=blah", "foo=bar,baz=blah"] {
        assert!(Selector::parse(s).unwrap().matches(&ls), "{s}");
    }
    for s in ["foo=blah", "baz=bar", "foo=bar,foobar=bar,baz=blah"] {
        assert!(!Selector::parse(s).unwrap().matches(&ls), "{s}");
    }
}

/// Port of TestSetMatches (SelectorFromSet).
#[test]
fn test_set_matches() {
    let ls = set(&[("foo", "bar"), ("baz", "blah")]);
    let cases: &[&[(&str, &str)]] = &[
        &[],
        &[("foo", "bar")],
        &[("baz", "blah")],
        &[("foo", "bar"), ("baz", "blah")],
    ];
    for c in cases {
        assert!(
            Selector::from_labels(c.iter().copied()).matches(&ls),
            "{c:?}"
        );
    }
    assert!(!Selector::from_labels([("foo", "baz")]).matches(&ls));
    // from_labels does not validate (like SelectorFromSet); try_from_labels does.
    assert!(Selector::from_labels([("a b", "c")]).to_string() == "a b=c");
    assert!(Selector::try_from_labels([("a b", "c")]).is_err());
    assert_eq!(
        Selector::try_from_labels(&set(&[("b", "2"), ("a", "1")]))
            .unwrap()
            .to_string(),
        "a=1,b=2"
    );
}

#[test]
fn parse_error_messages() {
    let cases = [
        ("x=a,,y=b", "found ',', expected: identifier after ','"),
        ("x=a y=b", "found 'y', expected: ',' or 'end of string'"),
        ("x,,y", "found ',', expected: identifier after ','"),
        (
            ",x",
            "found ',', expected: !, identifier, or 'end of string'",
        ),
        (
            "x nott in (y)",
            "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (
            "a in (xyz abc)",
            "unable to parse requirement: found 'abc', expected: ',' or ')'",
        ),
        (
            "a notin(",
            "unable to parse requirement: found '', expected: ',', ')' or identifier",
        ),
        (
            "a in x",
            "unable to parse requirement: found 'x' expected: '('",
        ),
        (
            "!=a",
            "found '!=', expected: !, identifier, or 'end of string'",
        ),
        (
            "x=(",
            "unable to parse requirement: found '(', expected: identifier",
        ),
        (
            "!",
            "unable to parse requirement: found '', expected: identifier",
        ),
        (
            "x<a",
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ];
    for (s, want) in cases {
        let e = Selector::parse(s).unwrap_err();
        assert_eq!(e.to_string(), want, "input {s:?}");
    }
    // An invalid key is reported with upstream's nil field path.
    let e = Selector::parse("a@b=c").unwrap_err().to_string();
    assert!(
        e.starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"a@b\": name part must consist of"
        ),
        "{e}"
    );
    let e = Selector::parse("x=a b").unwrap_err().to_string();
    assert_eq!(e, "found 'b', expected: ',' or 'end of string'");
    let e = Selector::parse("x=a@b").unwrap_err().to_string();
    assert!(
        e.starts_with("unable to parse requirement: values[0][x]: Invalid value: \"a@b\""),
        "{e}"
    );
}

/// Port of TestToString.
#[test]
fn test_to_string() {
    let cases: Vec<(Vec<Requirement>, &str)> = vec![
        (
            vec![
                req("x", Operator::In, &["abc", "def"]),
                req("y", Operator::NotIn, &["jkl"]),
                req("z", Operator::Exists, &[]),
            ],
            "x in (abc,def),y notin (jkl),z",
        ),
        (
            vec![
                req("x", Operator::NotIn, &["abc", "def"]),
                req("y", Operator::NotEquals, &["jkl"]),
                req("z", Operator::DoesNotExist, &[]),
            ],
            "x notin (abc,def),y!=jkl,!z",
        ),
        (
            vec![
                req("x", Operator::NotIn, &["abc"]),
                req("y", Operator::In, &["jkl", "mno"]),
                req("z", Operator::NotIn, &[""]),
            ],
            "x notin (abc),y in (jkl,mno),z notin ()",
        ),
        (
            vec![
                req("x", Operator::Equals, &["abc"]),
                req("y", Operator::DoubleEquals, &["jkl"]),
                req("z", Operator::NotEquals, &["a"]),
                req("z", Operator::Exists, &[]),
            ],
            "x=abc,y==jkl,z!=a,z",
        ),
        (
            vec![
                req("x", Operator::GreaterThan, &["2"]),
                req("y", Operator::LessThan, &["8"]),
                req("z", Operator::Exists, &[]),
            ],
            "x>2,y<8,z",
        ),
        // Values are printed sorted without changing the requirement (TestSafeSort).
        (
            vec![req("x", Operator::In, &["foo", "bar", "foo"])],
            "x in (bar,foo,foo)",
        ),
    ];
    for (reqs, want) in cases {
        let sel = Selector::from_requirements(reqs);
        assert_eq!(sel.to_string(), want);
        // The canonical form parses back to the same string.
        assert_eq!(
            Selector::parse(want).unwrap().to_string(),
            want.replace("foo,foo", "foo")
        );
    }
    let r = req("x", Operator::In, &["b", "a"]);
    assert_eq!(r.values(), ["b", "a"]);
}

/// Port of TestSetSelectorParser: (input, expected canonical string or None for "don't
/// compare", valid).
#[test]
fn test_set_selector_parser() {
    let cases: &[(&str, Option<&str>, bool)] = &[
        ("", Some(""), true),
        ("\rx", Some("x"), true),
        (
            "this-is-a-dns.domain.com/key-with-dash",
            Some("this-is-a-dns.domain.com/key-with-dash"),
            true,
        ),
        (
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            Some("this-is-another-dns.domain.com/key-with-dash in (so,what)"),
            true,
        ),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            Some("0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"),
            true,
        ),
        ("foo  in\t (abc)", Some("foo in (abc)"), true),
        ("x notin\n (abc)", Some("x notin (abc)"), true),
        ("x  notin\t\t\t(abc,def)", Some("x notin (abc,def)"), true),
        ("x in (abc,def)", Some("x in (abc,def)"), true),
        ("x in (abc,)", Some("x in (,abc)"), true),
        ("x in ()", Some("x in ()"), true),
        (
            "x notin (abc,,def),bar,z in (),w",
            Some("bar,w,x notin (,abc,def),z in ()"),
            true,
        ),
        ("x,y in (a)", Some("x,y in (a)"), true),
        ("x=a", Some("x=a"), true),
        ("x>1", Some("x>1"), true),
        ("x<7", Some("x<7"), true),
        ("x=a,y!=b", Some("x=a,y!=b"), true),
        ("x=a,y!=b,z in (h,i,j)", Some("x=a,y!=b,z in (h,i,j)"), true),
        ("x=a||y=b", None, false),
        ("x,,y", None, false),
        (",x,y", None, false),
        ("x nott in (y)", None, false),
        ("x notin ( )", Some("x notin ()"), true),
        ("x notin (, a)", Some("x notin (,a)"), true),
        ("a in (xyz),", None, false),
        ("a in (xyz)b notin ()", None, false),
        ("a ", Some("a"), true),
        (
            "a in (x,y,notin, z,in)",
            Some("a in (in,notin,x,y,z)"),
            true,
        ),
        ("a in (xyz abc)", None, false),
        ("a notin(", None, false),
        ("a (", None, false),
        ("(", None, false),
        // Extra cases around empty values.
        ("x in (a,,)", Some("x in (,a)"), true),
        ("x in (,)", Some("x in ()"), true),
        ("x in (,,a)", Some("x in (,a)"), true),
        ("x in (a,a,b)", Some("x in (a,b)"), true),
        ("x==", Some("x=="), true),
        ("x!=", Some("x!="), true),
        (
            "in in (in), notin notin (notin)",
            Some("in in (in),notin notin (notin)"),
            true,
        ),
        ("x\tin\r(a)\n", Some("x in (a)"), true),
    ];
    for (input, want, valid) in cases {
        match Selector::parse(input) {
            Ok(sel) => {
                assert!(valid, "{input:?} parsed as {sel} but should fail");
                if let Some(w) = want {
                    assert_eq!(sel.to_string(), *w, "{input:?}");
                }
            }
            Err(e) => assert!(!valid, "{input:?} failed: {e}"),
        }
    }
    // Parsed "x in (abc,)" holds the empty value and "abc".
    let sel = Selector::parse("x in (abc,)").unwrap();
    assert_eq!(sel.requirements()[0].values(), ["", "abc"]);
    assert!(sel.matches(&set(&[("x", "")])));
}

/// Port of TestAdd.
#[test]
fn test_add() {
    let sel = Selector::everything().add_requirements([req("key", Operator::In, &["value"])]);
    assert_eq!(sel.requirements(), [req("key", Operator::In, &["value"])]);
    let sel = sel.add_requirements([req("key2", Operator::Equals, &["value2"])]);
    assert_eq!(sel.to_string(), "key in (value),key2=value2");
    let sel = Selector::everything().add_requirements([
        req("b", Operator::Exists, &[]),
        req("a", Operator::Exists, &[]),
    ]);
    assert_eq!(sel.to_string(), "a,b");
}

#[test]
fn from_str_and_default() {
    let s: Selector = "a=b".parse().unwrap();
    assert_eq!(s.to_string(), "a=b");
    assert!(Selector::default().is_everything());
    assert!(Selector::everything().matches_opt(None));
    assert!(!Selector::parse("a").unwrap().matches_opt(None));
    assert!(Selector::parse("!a").unwrap().matches_opt(None));
}
