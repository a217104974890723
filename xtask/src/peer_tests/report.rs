//! The table of a run: each test's result on kcm-testenv and on kube-apiserver, the failures no
//! cluster here can avoid named as such ([`classify`]), the known cause of each kcm-testenv
//! failure ([`expected`]) and the first line of each failure.

use super::classify;
use super::expected;
use super::outcome::Outcome;
use super::runner::{TestId, TestRun};

/// One test's results.
#[derive(Debug, Clone)]
pub struct Row {
    /// Which test.
    pub id: TestId,
    /// Its run on kcm-testenv, if it ran there.
    pub testenv: Option<TestRun>,
    /// Its run on kube-apiserver, if it ran there.
    pub upstream: Option<TestRun>,
}

/// Pairs each test with its runs.
pub fn rows(
    tests: &[TestId],
    testenv: Option<&[TestRun]>,
    upstream: Option<&[TestRun]>,
) -> Vec<Row> {
    let find = |runs: Option<&[TestRun]>, id: &TestId| {
        runs.and_then(|runs| runs.iter().find(|r| &r.id == id).cloned())
    };
    tests
        .iter()
        .map(|id| Row {
            id: id.clone(),
            testenv: find(testenv, id),
            upstream: find(upstream, id),
        })
        .collect()
}

/// A result cell: `pass`, `fail`, `fail (no kubelet)`, `timed out`, or `–` (not run).
fn cell(run: Option<&TestRun>) -> String {
    match run.map(|r| &r.outcome) {
        None => "–".to_string(),
        Some(Outcome::Passed) => "pass".to_string(),
        Some(Outcome::Failed { captured, .. }) => match classify::needs_kubelet(captured) {
            Some(_) => format!("fail ({})", classify::NO_KUBELET),
            None => "fail".to_string(),
        },
        Some(Outcome::TimedOut(limit)) => format!("timed out ({} s)", limit.as_secs()),
    }
}

/// The failure's first line, shortened: an API error as `CODE message`, anything else cut at
/// 160 characters.
pub fn summarize(first_error: &str) -> String {
    if first_error.starts_with("Error: Api(")
        && let (Some(code), Some(message)) = (
            field(first_error, "code: ", |c| c.is_ascii_digit()),
            quoted(first_error, "message: \""),
        )
    {
        return format!("{code} {message}");
    }
    let mut s: String = first_error.chars().take(160).collect();
    if s.len() < first_error.len() {
        s.push('…');
    }
    s
}

/// The characters after `key` that satisfy `keep`.
fn field(s: &str, key: &str, keep: fn(char) -> bool) -> Option<String> {
    let rest = &s[s.find(key)? + key.len()..];
    let value: String = rest.chars().take_while(|c| keep(*c)).collect();
    (!value.is_empty()).then_some(value)
}

/// The Debug-quoted string after `key` (which ends with the opening quote), unescaped.
fn quoted(s: &str, key: &str) -> Option<String> {
    let rest = &s[s.find(key)? + key.len()..];
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    None
}

/// What to say about a row's failures: the evidence of a missing kubelet, else the first error
/// of each cluster where it failed (once if they agree).
fn note(row: &Row) -> String {
    let failure = |run: &Option<TestRun>| match run.as_ref().map(|r| &r.outcome) {
        Some(Outcome::Failed {
            first_error,
            captured,
        }) => Some(match classify::needs_kubelet(captured) {
            Some(evidence) => evidence.to_string(),
            None => summarize(first_error),
        }),
        Some(Outcome::TimedOut(limit)) => Some(format!("no result within {} s", limit.as_secs())),
        _ => None,
    };
    match (failure(&row.testenv), failure(&row.upstream)) {
        (Some(t), Some(u)) if t == u => t,
        (Some(t), Some(u)) => format!("kcm-testenv: {t}; kube-apiserver: {u}"),
        (Some(t), None) => t,
        (None, Some(u)) => format!("kube-apiserver: {u}"),
        (None, None) => String::new(),
    }
}

/// Markdown-safe table text.
fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The table, then one line of totals.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| crate | test | kcm-testenv | kube-apiserver | known cause on kcm-testenv | first error |\n|---|---|---|---|---|---|\n",
    );
    for row in rows {
        out.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} |\n",
            row.id.crate_name,
            row.id.short(),
            cell(row.testenv.as_ref()),
            cell(row.upstream.as_ref()),
            escape(expected::reason(&row.id).unwrap_or("")),
            escape(&note(row)),
        ));
    }
    let passed = |side: fn(&Row) -> Option<&TestRun>| {
        let ran: Vec<&TestRun> = rows.iter().filter_map(side).collect();
        (!ran.is_empty()).then(|| {
            let ok = ran.iter().filter(|r| r.outcome.passed()).count();
            format!("{ok} of {} pass", ran.len())
        })
    };
    let totals: Vec<String> = [
        ("kcm-testenv", passed(|r| r.testenv.as_ref())),
        ("kube-apiserver", passed(|r| r.upstream.as_ref())),
    ]
    .into_iter()
    .filter_map(|(name, t)| t.map(|t| format!("{name}: {t}")))
    .collect();
    let kubelet = rows
        .iter()
        .filter(|r| {
            cell(r.testenv.as_ref()).contains(classify::NO_KUBELET)
                || cell(r.upstream.as_ref()).contains(classify::NO_KUBELET)
        })
        .count();
    out.push_str(&format!(
        "\n{}; {kubelet} fail for want of a kubelet.\n",
        totals.join("; ")
    ));
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn id(name: &str) -> TestId {
        TestId {
            crate_name: "kube-client".into(),
            name: format!("test::{name}"),
        }
    }

    fn run(name: &str, outcome: Outcome) -> TestRun {
        TestRun {
            id: id(name),
            outcome,
            took: Duration::from_millis(10),
        }
    }

    fn failed(first_error: &str) -> Outcome {
        Outcome::Failed {
            first_error: first_error.into(),
            captured: first_error.into(),
        }
    }

    const API_405: &str = "Error: Api(Status { status: Some(Failure), code: 405, message: \"the server does not allow this method on the requested resource (GET)\", metadata: None, reason: \"MethodNotAllowed\" })";
    const KUBELET: &str = "Error: Service(hyper_util::client::legacy::Error(Connect, ConnectError(\"tcp connect error\", 127.0.0.1:10250, Os { code: 111, kind: ConnectionRefused, message: \"Connection refused\" })))";

    #[test]
    fn summaries() {
        assert_eq!(
            summarize(API_405),
            "405 the server does not allow this method on the requested resource (GET)"
        );
        assert_eq!(
            summarize(
                "Error: Api(Status { code: 404, message: \"services \\\"kubernetes\\\" not found\" })"
            ),
            "404 services \"kubernetes\" not found"
        );
        let long = "x".repeat(200);
        assert_eq!(summarize(&long).chars().count(), 161);
        assert_eq!(
            summarize("panicked at a.rs:1:1: boom"),
            "panicked at a.rs:1:1: boom"
        );
    }

    #[test]
    fn rows_and_table() {
        let tests = vec![id("a"), id("b"), id("c"), id("d")];
        let testenv = vec![
            run("a", Outcome::Passed),
            run("b", failed(API_405)),
            run("c", failed(KUBELET)),
            run("d", Outcome::TimedOut(Duration::from_secs(120))),
        ];
        let upstream = vec![
            run("a", Outcome::Passed),
            run("b", Outcome::Passed),
            run("c", failed(KUBELET)),
            run("d", failed("panicked at x.rs:1:1: boom")),
        ];
        let rows = rows(&tests, Some(&testenv), Some(&upstream));
        let table = markdown(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[2], "| kube-client | `a` | pass | pass |  |  |");
        assert_eq!(
            lines[3],
            "| kube-client | `b` | fail | pass |  | 405 the server does not allow this method on the requested resource (GET) |"
        );
        assert_eq!(
            lines[4],
            "| kube-client | `c` | fail (no kubelet) | fail (no kubelet) |  | the kubelet port 10250 refused the connection |"
        );
        assert_eq!(
            lines[5],
            "| kube-client | `d` | timed out (120 s) | fail |  | kcm-testenv: no result within 120 s; kube-apiserver: panicked at x.rs:1:1: boom |"
        );
        assert_eq!(
            lines.last().copied(),
            Some(
                "kcm-testenv: 1 of 4 pass; kube-apiserver: 2 of 4 pass; 1 fail for want of a kubelet."
            )
        );
    }

    #[test]
    fn one_cluster_only() {
        let tests = vec![id("a"), id("can_get_pod_logs_and_evict")];
        let testenv = vec![
            run("a", Outcome::Passed),
            run("can_get_pod_logs_and_evict", failed("Error: x | y")),
        ];
        let rows = rows(&tests, Some(&testenv), None);
        let table = markdown(&rows);
        assert!(table.contains(
            "| kube-client | `can_get_pod_logs_and_evict` | fail | – | needs a kubelet (pod logs); pods/log is not served | Error: x \\| y |"
        ), "{table}");
        assert!(table.ends_with("kcm-testenv: 1 of 2 pass; 0 fail for want of a kubelet.\n"));
    }
}
