//! Per-test outcomes from the Ginkgo JSON report that `e2e.test --ginkgo.json-report` writes
//! (an array of suite reports, each with `SpecReports`; the format is Ginkgo v2's
//! `types.Report`, documented with Ginkgo's reporting).

use std::collections::BTreeMap;

use anyhow::Context;
use serde_json::Value;

/// How one test ended on one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The spec passed.
    Passed,
    /// The spec failed (also: panicked, timed out, aborted, interrupted); the first line of
    /// Ginkgo's failure message and its location.
    Failed(String),
    /// The spec did not run: skipped by `--ginkgo.skip`, by the spec itself (`e2eskipper`), or
    /// pending; with the skip message if the spec gave one.
    Skipped(String),
}

impl Outcome {
    /// A short word for the table: `passed`, `FAILED`, `skipped`.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed(_) => "FAILED",
            Outcome::Skipped(_) => "skipped",
        }
    }

    /// Whether the spec passed.
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed)
    }
}

/// The outcomes of one run of the suite, by full test name (`[sig-apps] Deployment deployment
/// should support rollover [Conformance]`), plus how its suite-level nodes ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SuiteOutcome {
    /// The `It`s within `scope`, by full name.
    pub tests: BTreeMap<String, Outcome>,
    /// Failures of suite nodes (`SynchronizedBeforeSuite`, `AfterSuite`, ...), as
    /// `node type: message`.
    pub suite_failures: Vec<String>,
    /// Seconds each test ran, by full name.
    pub seconds: BTreeMap<String, f64>,
}

/// Reads the report at `path`, keeping the tests whose full name starts with one of `scope`
/// (Ginkgo lists every spec of the binary, most of them skipped by the focus).
pub fn read(path: &std::path::Path, scope: &[&str]) -> anyhow::Result<SuiteOutcome> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse(&text, scope).with_context(|| format!("parsing Ginkgo's report {}", path.display()))
}

/// Parses a Ginkgo JSON report; see [`read`].
pub fn parse(text: &str, scope: &[&str]) -> anyhow::Result<SuiteOutcome> {
    let v: Value = serde_json::from_str(text).context("not JSON")?;
    let suites = v
        .as_array()
        .context("a Ginkgo JSON report is an array of suite reports")?;
    let mut out = SuiteOutcome::default();
    for suite in suites {
        let specs = suite["SpecReports"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        for spec in specs {
            let state = spec["State"].as_str().unwrap_or("unknown");
            let node_type = spec["LeafNodeType"].as_str().unwrap_or_default();
            if node_type != "It" {
                if is_failure(state) {
                    out.suite_failures
                        .push(format!("{node_type}: {}", failure_text(spec)));
                }
                continue;
            }
            let name = full_name(spec);
            if !scope.iter().any(|s| name.starts_with(s)) {
                continue;
            }
            let outcome = match state {
                "passed" => Outcome::Passed,
                "skipped" | "pending" => Outcome::Skipped(first_line(
                    spec["Failure"]["Message"].as_str().unwrap_or_default(),
                )),
                _ => Outcome::Failed(failure_text(spec)),
            };
            if let Some(ns) = spec["RunTime"].as_f64() {
                out.seconds.insert(name.clone(), ns / 1e9);
            }
            out.tests.insert(name, outcome);
        }
    }
    Ok(out)
}

/// The container texts and the leaf text joined by spaces, as `--ginkgo.focus` matches them.
fn full_name(spec: &Value) -> String {
    let mut parts: Vec<&str> = spec["ContainerHierarchyTexts"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    parts.push(spec["LeafNodeText"].as_str().unwrap_or_default());
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_failure(state: &str) -> bool {
    !matches!(state, "passed" | "skipped" | "pending")
}

/// `state: first line of the message (file:line)`.
fn failure_text(spec: &Value) -> String {
    let state = spec["State"].as_str().unwrap_or("unknown");
    let f = &spec["Failure"];
    let message = first_line(f["Message"].as_str().unwrap_or_default());
    let file = f["Location"]["FileName"].as_str().unwrap_or_default();
    let file = file
        .rsplit_once("/test/e2e/")
        .map_or(file, |(_, rest)| rest);
    match f["Location"]["LineNumber"].as_u64() {
        Some(line) if !file.is_empty() => format!("{state}: {message} ({file}:{line})"),
        _ => format!("{state}: {message}"),
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
    let line = line.trim();
    if line.chars().count() > 160 {
        let cut: String = line.chars().take(157).collect();
        format!("{cut}...")
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCOPE: &[&str] = &["[sig-apps] Deployment", "[sig-apps] ReplicaSet"];

    fn spec(containers: &[&str], leaf: &str, state: &str, failure: Value) -> Value {
        serde_json::json!({
            "ContainerHierarchyTexts": containers,
            "LeafNodeText": leaf,
            "LeafNodeType": "It",
            "State": state,
            "RunTime": 2_500_000_000u64,
            "Failure": failure,
        })
    }

    fn report(specs: Vec<Value>) -> String {
        serde_json::json!([{ "SuiteSucceeded": false, "SpecReports": specs }]).to_string()
    }

    #[test]
    fn reads_each_state_of_the_tests_in_scope() {
        let text = report(vec![
            spec(
                &["[sig-apps] Deployment"],
                "deployment should support rollover [Conformance]",
                "passed",
                Value::Null,
            ),
            spec(
                &["[sig-apps] Deployment"],
                "deployment should support proportional scaling [Conformance]",
                "failed",
                serde_json::json!({
                    "Message": "timed out waiting for the condition\nmore detail",
                    "Location": {"FileName": "/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2/test/e2e/apps/deployment.go", "LineNumber": 1234},
                }),
            ),
            spec(
                &["[sig-apps] ReplicaSet"],
                "should serve a basic image on each replica with a private image",
                "skipped",
                serde_json::json!({"Message": "Only supported for providers [gce] (not skeleton)"}),
            ),
            spec(&["[sig-storage] CSI"], "unrelated", "skipped", Value::Null),
        ]);
        let out = parse(&text, SCOPE).expect("parses");
        assert_eq!(out.tests.len(), 3, "{out:?}");
        assert_eq!(
            out.tests["[sig-apps] Deployment deployment should support rollover [Conformance]"],
            Outcome::Passed
        );
        assert_eq!(
            out.tests["[sig-apps] Deployment deployment should support proportional scaling [Conformance]"],
            Outcome::Failed(
                "failed: timed out waiting for the condition (apps/deployment.go:1234)".into()
            )
        );
        assert_eq!(
            out.tests["[sig-apps] ReplicaSet should serve a basic image on each replica with a private image"],
            Outcome::Skipped("Only supported for providers [gce] (not skeleton)".into())
        );
        assert_eq!(
            out.seconds["[sig-apps] Deployment deployment should support rollover [Conformance]"],
            2.5
        );
        assert!(out.suite_failures.is_empty());
    }

    #[test]
    fn timeouts_panics_and_interrupts_are_failures() {
        for state in ["timedout", "panicked", "interrupted", "aborted"] {
            let text = report(vec![spec(
                &["[sig-apps] ReplicaSet"],
                "Replace and Patch tests [Conformance]",
                state,
                serde_json::json!({"Message": "boom"}),
            )]);
            let out = parse(&text, SCOPE).expect("parses");
            assert_eq!(
                out.tests["[sig-apps] ReplicaSet Replace and Patch tests [Conformance]"],
                Outcome::Failed(format!("{state}: boom")),
            );
        }
    }

    #[test]
    fn a_failed_suite_set_up_is_reported_apart() {
        let text = serde_json::json!([{ "SpecReports": [{
            "ContainerHierarchyTexts": null,
            "LeafNodeText": "",
            "LeafNodeType": "SynchronizedBeforeSuite",
            "State": "failed",
            "Failure": {"Message": "Error waiting for all pods to be running and ready"},
        }]}])
        .to_string();
        let out = parse(&text, SCOPE).expect("parses");
        assert!(out.tests.is_empty());
        assert_eq!(
            out.suite_failures,
            vec![
                "SynchronizedBeforeSuite: failed: Error waiting for all pods to be running and ready"
            ]
        );
    }

    #[test]
    fn rejects_what_is_not_a_report() {
        assert!(parse("{}", SCOPE).is_err());
        assert!(parse("not json", SCOPE).is_err());
    }
}
