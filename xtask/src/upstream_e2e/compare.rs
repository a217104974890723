//! The comparison of the two sides: a row per test with its outcome under kube-controller-manager
//! and under kcm, the verdict (a test that passes under kube-controller-manager must pass under
//! kcm), and the expected differences that excuse a row ([`EXPECTED_FILE`]).

use std::collections::{BTreeMap, BTreeSet};

use super::report::{Outcome, SuiteOutcome};

/// The expected-differences file, next to this source: one line per test, `full test name |
/// reason`; `#` starts a comment line.
pub const EXPECTED_FILE: &str = "xtask/src/upstream_e2e/expected_differences.txt";

/// Tests allowed to pass under kube-controller-manager and not under kcm, with the reason.
pub fn parse_expected(text: &str) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, reason)) = line.split_once(" | ") else {
            anyhow::bail!(
                "{EXPECTED_FILE}:{}: want `full test name | reason`, got {line:?}",
                n + 1
            );
        };
        let (name, reason) = (name.trim(), reason.trim());
        if name.is_empty() || reason.is_empty() {
            anyhow::bail!("{EXPECTED_FILE}:{}: a name and a reason are needed", n + 1);
        }
        out.insert(name.to_string(), reason.to_string());
    }
    Ok(out)
}

/// One test's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Full test name.
    pub name: String,
    /// Under kube-controller-manager's own controllers (`None`: that side did not run or did
    /// not list the test).
    pub upstream: Option<Outcome>,
    /// Under kcm.
    pub kcm: Option<Outcome>,
    /// Passes under kube-controller-manager but not under kcm.
    pub regression: bool,
    /// The expected-differences reason that excuses the regression, if listed.
    pub expected: Option<String>,
}

/// The rows of every test either side reported, in name order.
pub fn rows(
    upstream: Option<&SuiteOutcome>,
    kcm: Option<&SuiteOutcome>,
    expected: &BTreeMap<String, String>,
) -> Vec<Row> {
    let names: BTreeSet<&String> = upstream
        .iter()
        .chain(kcm.iter())
        .flat_map(|s| s.tests.keys())
        .collect();
    names
        .into_iter()
        .map(|name| {
            let u = upstream.and_then(|s| s.tests.get(name)).cloned();
            let k = kcm.and_then(|s| s.tests.get(name)).cloned();
            let regression = upstream.is_some()
                && kcm.is_some()
                && u.as_ref().is_some_and(Outcome::passed)
                && !k.as_ref().is_some_and(Outcome::passed);
            Row {
                name: name.clone(),
                expected: regression.then(|| expected.get(name).cloned()).flatten(),
                upstream: u,
                kcm: k,
                regression,
            }
        })
        .collect()
}

/// The regressions no expected difference excuses.
pub fn unexpected(rows: &[Row]) -> Vec<&Row> {
    rows.iter()
        .filter(|r| r.regression && r.expected.is_none())
        .collect()
}

/// The table as Markdown: test, kube-controller-manager, kcm, note.
pub fn markdown(rows: &[Row]) -> String {
    let cell = |o: &Option<Outcome>| o.as_ref().map_or("not run", Outcome::word);
    let mut s =
        String::from("| test | kube-controller-manager | kcm | note |\n|---|---|---|---|\n");
    for r in rows {
        let note = if let Some(reason) = &r.expected {
            format!("expected difference: {reason}")
        } else if r.regression {
            "REGRESSION".to_string()
        } else {
            let detail = |o: &Option<Outcome>| match o {
                Some(Outcome::Failed(m) | Outcome::Skipped(m)) if !m.is_empty() => Some(m.clone()),
                _ => None,
            };
            match (detail(&r.upstream), detail(&r.kcm)) {
                (Some(u), Some(k)) if u == k => u,
                (Some(u), Some(k)) => format!("upstream: {u}; kcm: {k}"),
                (Some(u), None) => format!("upstream: {u}"),
                (None, Some(k)) => format!("kcm: {k}"),
                (None, None) => String::new(),
            }
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            escape(&r.name),
            cell(&r.upstream),
            cell(&r.kcm),
            escape(&note)
        ));
    }
    s
}

/// `|` would end a Markdown cell.
fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(tests: &[(&str, Outcome)]) -> SuiteOutcome {
        SuiteOutcome {
            tests: tests
                .iter()
                .map(|(n, o)| (n.to_string(), o.clone()))
                .collect(),
            ..SuiteOutcome::default()
        }
    }

    #[test]
    fn a_test_passing_upstream_only_is_a_regression_unless_expected() {
        let up = suite(&[
            ("a", Outcome::Passed),
            ("b", Outcome::Passed),
            ("c", Outcome::Failed("x".into())),
            ("d", Outcome::Passed),
        ]);
        let kcm = suite(&[
            ("a", Outcome::Passed),
            ("b", Outcome::Failed("y".into())),
            ("c", Outcome::Failed("x".into())),
        ]);
        let expected = parse_expected("# comment\n\nd | kcm lists no d yet\n").expect("parses");
        let rows = rows(Some(&up), Some(&kcm), &expected);
        let by_name: BTreeMap<&str, &Row> = rows.iter().map(|r| (r.name.as_str(), r)).collect();
        assert!(!by_name["a"].regression);
        assert!(by_name["b"].regression && by_name["b"].expected.is_none());
        assert!(!by_name["c"].regression, "fails on both sides");
        assert_eq!(by_name["d"].expected.as_deref(), Some("kcm lists no d yet"));
        let bad: Vec<&str> = unexpected(&rows).iter().map(|r| r.name.as_str()).collect();
        assert_eq!(bad, vec!["b"]);
        let md = markdown(&rows);
        assert!(md.contains("| b | passed | FAILED | REGRESSION |"), "{md}");
        assert!(md.contains("| c | FAILED | FAILED | x |"), "{md}");
        assert!(md.contains("| d | passed | not run | expected difference: kcm lists no d yet |"));
    }

    #[test]
    fn one_side_alone_has_no_regressions() {
        let kcm = suite(&[("a", Outcome::Failed("y".into()))]);
        let rows = rows(None, Some(&kcm), &BTreeMap::new());
        assert_eq!(rows.len(), 1);
        assert!(unexpected(&rows).is_empty());
    }

    #[test]
    fn malformed_expected_lines_are_errors() {
        assert!(parse_expected("just a name\n").is_err());
        assert!(parse_expected(" | no name\n").is_err());
        let ok = parse_expected("x [Conformance] | why | with a bar\n").expect("parses");
        assert_eq!(ok["x [Conformance]"], "why | with a bar");
    }
}
