//! Whether a run of `cargo xtask peer-tests` passes: the decision, apart from running anything.
//!
//! - With both clusters, a test that passes on kube-apiserver but not on kcm-testenv fails it
//!   (kube-apiserver v1.37.2 is the reference; what fails on both, for want of a kubelet, says
//!   nothing about kcm-testenv).
//! - Whenever kcm-testenv ran (`--cluster testenv` alone in CI, or `both`), a test that did not
//!   pass on kcm-testenv and is not on the expected-failure list ([`expected`]) fails it.
//! - An expected failure that passes now does not fail the run; it is named, so that the list
//!   is shortened when the work it waited for lands.

use super::expected;
use super::report::Row;
use super::runner::TestId;

/// What a run's results say.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict<'a> {
    /// Passed on kube-apiserver, did not pass on kcm-testenv.
    pub regressions: Vec<&'a TestId>,
    /// Did not pass on kcm-testenv, not on the expected-failure list.
    pub unexpected: Vec<&'a TestId>,
    /// On the expected-failure list, passed on kcm-testenv.
    pub stale: Vec<&'a TestId>,
}

impl Verdict<'_> {
    /// The run passes: no regression, no unexpected failure.
    pub fn passed(&self) -> bool {
        self.regressions.is_empty() && self.unexpected.is_empty()
    }
}

/// Judges the rows of a run (a cluster that did not run leaves its side of each row empty).
pub fn decide(rows: &[Row]) -> Verdict<'_> {
    let passed_on = |run: &Option<super::runner::TestRun>| run.as_ref().map(|r| r.outcome.passed());
    let mut v = Verdict::default();
    for row in rows {
        let testenv = passed_on(&row.testenv);
        let listed = expected::reason(&row.id).is_some();
        if testenv == Some(false) && passed_on(&row.upstream) == Some(true) {
            v.regressions.push(&row.id);
        }
        match testenv {
            Some(false) if !listed => v.unexpected.push(&row.id),
            Some(true) if listed => v.stale.push(&row.id),
            _ => {}
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::peer_tests::outcome::Outcome;
    use crate::peer_tests::runner::TestRun;

    fn run(id: &TestId, passed: bool) -> TestRun {
        let outcome = if passed {
            Outcome::Passed
        } else {
            Outcome::Failed {
                first_error: "Error: boom".into(),
                captured: "Error: boom".into(),
            }
        };
        TestRun {
            id: id.clone(),
            outcome,
            took: Duration::ZERO,
        }
    }

    /// A row: `None` for a cluster that did not run, else whether the test passed there.
    fn row(crate_name: &str, name: &str, testenv: Option<bool>, upstream: Option<bool>) -> Row {
        let id = TestId {
            crate_name: crate_name.into(),
            name: name.into(),
        };
        Row {
            testenv: testenv.map(|p| run(&id, p)),
            upstream: upstream.map(|p| run(&id, p)),
            id,
        }
    }

    fn names(ids: &[&TestId]) -> Vec<String> {
        ids.iter().map(|i| i.to_string()).collect()
    }

    /// Every entry of the list, failing on kcm-testenv as recorded, and the other tests
    /// passing: today's tree, which `--cluster testenv` must let through.
    fn todays_testenv_run() -> Vec<Row> {
        let mut rows: Vec<Row> = expected::TESTENV_FAILURES
            .iter()
            .map(|(c, n, _)| row(c, n, Some(false), None))
            .collect();
        rows.push(row(
            "kube",
            "test::api_get_opt_handles_404",
            Some(true),
            None,
        ));
        rows
    }

    #[test]
    fn testenv_alone_passes_with_only_listed_failures() {
        let rows = todays_testenv_run();
        let v = decide(&rows);
        assert_eq!(v, Verdict::default());
        assert!(v.passed());
    }

    #[test]
    fn testenv_alone_fails_on_a_failure_outside_the_list() {
        let mut rows = todays_testenv_run();
        rows.push(row(
            "kube-client",
            "test::pod_can_use_core_apis",
            Some(false),
            None,
        ));
        // The same path in another crate is another test.
        rows.push(row("kube", "test::csr_can_be_approved", Some(false), None));
        let v = decide(&rows);
        assert!(!v.passed());
        assert_eq!(
            names(&v.unexpected),
            vec![
                "kube-client test::pod_can_use_core_apis",
                "kube test::csr_can_be_approved"
            ]
        );
        assert!(v.regressions.is_empty() && v.stale.is_empty());
    }

    #[test]
    fn a_listed_test_that_passes_is_named_not_failed() {
        let mut rows = todays_testenv_run();
        rows[0] = row(
            &rows[0].id.crate_name.clone(),
            &rows[0].id.name.clone(),
            Some(true),
            None,
        );
        let v = decide(&rows);
        assert!(v.passed());
        assert_eq!(v.stale, vec![&rows[0].id]);
    }

    #[test]
    fn both_clusters_fail_on_what_passes_only_on_kube_apiserver() {
        let rows = vec![
            // Listed, but kube-apiserver passes it: a regression all the same.
            row(
                "kube-client",
                "test::can_get_pod_logs_and_evict",
                Some(false),
                Some(true),
            ),
            // Fails on both (no kubelet): not a regression; listed, so not unexpected.
            row(
                "kube-client",
                "test::pod_can_exec_and_write_to_stdin_from_node_proxy",
                Some(false),
                Some(false),
            ),
            // Passes on kcm-testenv only: nothing to say.
            row(
                "kube",
                "test::api_get_opt_handles_404",
                Some(true),
                Some(false),
            ),
        ];
        let v = decide(&rows);
        assert!(!v.passed());
        assert_eq!(
            names(&v.regressions),
            vec!["kube-client test::can_get_pod_logs_and_evict"]
        );
        assert!(v.unexpected.is_empty() && v.stale.is_empty());
    }

    #[test]
    fn kube_apiserver_alone_has_no_verdict() {
        let rows = vec![row("kube-client", "test::new", None, Some(false))];
        assert_eq!(decide(&rows), Verdict::default());
    }
}
