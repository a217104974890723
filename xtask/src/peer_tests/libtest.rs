//! Reading libtest's plain output (the `--format json` output is unstable-only): the
//! `test NAME ... ok|FAILED|ignored` lines, the captured output of each failure, the names
//! `--list` prints, and the first line of a failure worth showing.

use std::collections::BTreeMap;

/// One test's line in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `... ok`
    Ok,
    /// `... FAILED`
    Failed,
    /// `... ignored` (with or without a reason)
    Ignored,
}

/// What a test binary printed, read.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Run {
    /// Every `test NAME ... STATUS` line, in order.
    pub results: Vec<(String, Status)>,
    /// The captured output of each failed test (the `---- NAME stdout ----` sections).
    pub captured: BTreeMap<String, String>,
}

impl Run {
    /// The status line of `name`, if the run got that far.
    pub fn status(&self, name: &str) -> Option<Status> {
        self.results
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }
}

/// Reads the output of a test binary run without `--format`.
pub fn parse(output: &str) -> Run {
    let mut run = Run::default();
    let mut section: Option<(String, Vec<&str>)> = None;
    for line in output.lines() {
        if let Some(name) = section_header(line) {
            if let Some((name, lines)) = section.take() {
                run.captured.insert(name, trim_section(&lines));
            }
            section = Some((name.to_string(), Vec::new()));
            continue;
        }
        if let Some((_, lines)) = section.as_mut() {
            // The sections end where libtest lists the failed names again.
            if line == "failures:" || line.starts_with("test result: ") {
                if let Some((name, lines)) = section.take() {
                    run.captured.insert(name, trim_section(&lines));
                }
            } else {
                lines.push(line);
            }
            continue;
        }
        if let Some(result) = result_line(line) {
            run.results.push(result);
        }
    }
    if let Some((name, lines)) = section {
        run.captured.insert(name, trim_section(&lines));
    }
    run
}

/// `test NAME ... STATUS` (also `test NAME - should panic ... ok`).
fn result_line(line: &str) -> Option<(String, Status)> {
    let rest = line.strip_prefix("test ")?;
    let (name, status) = rest.rsplit_once(" ... ")?;
    let status = match status {
        "ok" => Status::Ok,
        "FAILED" => Status::Failed,
        s if s == "ignored" || s.starts_with("ignored, ") => Status::Ignored,
        _ => return None,
    };
    let name = name.strip_suffix(" - should panic").unwrap_or(name);
    Some((name.to_string(), status))
}

/// `---- NAME stdout ----`
fn section_header(line: &str) -> Option<&str> {
    line.strip_prefix("---- ")?
        .strip_suffix(" ----")?
        .strip_suffix(" stdout")
}

fn trim_section(lines: &[&str]) -> String {
    lines.join("\n").trim().to_string()
}

/// The test names `BINARY --list` prints (`NAME: test`; benchmarks and the summary are not
/// tests).
pub fn parse_list(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

/// The line of a failure's captured output that says what went wrong: the error a test
/// returned (`Error: ...`, printed by its `Result`'s termination), else the message of the
/// panic (the line after `thread '...' panicked at FILE:LINE:COL:`), else the first line.
pub fn first_error_line(captured: &str) -> Option<String> {
    let lines: Vec<&str> = captured.lines().map(str::trim_end).collect();
    if let Some(err) = lines.iter().find(|l| l.starts_with("Error: ")) {
        return Some((*err).to_string());
    }
    for (i, line) in lines.iter().enumerate() {
        // `thread 'NAME' panicked at ...`, or since Rust 1.92 `thread 'NAME' (TID) panicked at`.
        let Some(at) = line.find(" panicked at ") else {
            continue;
        };
        if !line.starts_with("thread '") {
            continue;
        }
        let place = &line[at + " panicked at ".len()..];
        // Since Rust 1.73 the message follows on its own line(s), up to the backtrace or note.
        if let Some(place) = place.strip_suffix(':') {
            let message = lines[i + 1..]
                .iter()
                .take_while(|l| {
                    !l.is_empty() && !l.starts_with("note: ") && *l != &"stack backtrace:"
                })
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join(" ");
            return Some(format!("panicked at {place}: {message}"));
        }
        return Some(format!("panicked at {place}"));
    }
    lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parallel run of two tests, one returning an error, one panicking, with captured
    /// `println!` output before the error, as libtest 1.95 prints it.
    const RUN: &str = "
running 4 tests
test test::api_get_opt_handles_404 ... ok
test test::csr_can_be_approved ... FAILED
test test::custom_resource_generates_correct_core_structs has been running for over 60 seconds
test test::pod_can_await_conditions ... FAILED
test test::not_for_now ... ignored, needs a kubelet
test test::custom_resource_generates_correct_core_structs ... ok

failures:

---- test::csr_can_be_approved stdout ----
some println output
Error: Api(Status { status: Some(Failure), message: \"the server could not find the requested resource\", reason: \"NotFound\", code: 404 })

---- test::pod_can_await_conditions stdout ----

thread 'test::pod_can_await_conditions' panicked at kube/src/lib.rs:512:9:
assertion `left == right` failed
  left: 1
 right: 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    test::csr_can_be_approved
    test::pod_can_await_conditions

test result: FAILED. 2 passed; 2 failed; 1 ignored; 0 measured; 0 filtered out; finished in 3.20s
";

    #[test]
    fn reads_every_status_line_in_order() {
        let run = parse(RUN);
        assert_eq!(
            run.results,
            vec![
                ("test::api_get_opt_handles_404".into(), Status::Ok),
                ("test::csr_can_be_approved".into(), Status::Failed),
                ("test::pod_can_await_conditions".into(), Status::Failed),
                ("test::not_for_now".into(), Status::Ignored),
                (
                    "test::custom_resource_generates_correct_core_structs".into(),
                    Status::Ok
                ),
            ]
        );
        assert_eq!(run.status("test::missing"), None);
    }

    #[test]
    fn keeps_each_failure_section_apart() {
        let run = parse(RUN);
        assert_eq!(run.captured.len(), 2);
        assert!(run.captured["test::csr_can_be_approved"].starts_with("some println output"));
        assert!(run.captured["test::csr_can_be_approved"].ends_with("code: 404 })"));
        let panic = &run.captured["test::pod_can_await_conditions"];
        assert!(panic.starts_with("thread 'test::pod_can_await_conditions'"));
        assert!(!panic.contains("failures:"));
    }

    #[test]
    fn a_run_cut_short_keeps_what_was_printed() {
        // Killed on a timeout: no summary, an open section.
        let out = "running 2 tests\ntest a::one ... ok\ntest a::two ... FAILED\n\nfailures:\n\n---- a::two stdout ----\nError: boom";
        let run = parse(out);
        assert_eq!(run.status("a::one"), Some(Status::Ok));
        assert_eq!(run.status("a::two"), Some(Status::Failed));
        assert_eq!(run.captured["a::two"], "Error: boom");
        assert_eq!(parse("running 1 test\n").results, vec![]);
    }

    #[test]
    fn should_panic_tests_and_noise_lines() {
        let run = parse(
            "test x::y - should panic ... ok\ntest x::z ... bench: 10 ns/iter\ntest result: ok.",
        );
        assert_eq!(run.results, vec![("x::y".into(), Status::Ok)]);
    }

    #[test]
    fn lists_tests_not_benchmarks() {
        let list =
            "test::a: test\nclient::b::test::c: test\nbench_x: benchmark\n\n2 tests, 1 benchmark\n";
        assert_eq!(parse_list(list), vec!["test::a", "client::b::test::c"]);
    }

    #[test]
    fn first_error_line_cases() {
        let cases: &[(&str, Option<&str>)] = &[
            // A returned error wins over captured output printed before it.
            (
                "Found pod x\nError: Api(ErrorResponse { code: 404 })\nthread 'main' panicked at library/test/src/lib.rs:1:1:\nthe test returned a termination value with a non-zero status code (1) which indicates a failure",
                Some("Error: Api(ErrorResponse { code: 404 })"),
            ),
            // A panic's message, on the lines after its place (Rust 1.73+).
            (
                "thread 'test::t' panicked at src/lib.rs:10:5:\nassertion `left == right` failed\n  left: 1\n right: 2\nnote: run with `RUST_BACKTRACE=1`",
                Some(
                    "panicked at src/lib.rs:10:5: assertion `left == right` failed left: 1 right: 2",
                ),
            ),
            (
                "thread 'test::t' panicked at src/lib.rs:10:5:\ncalled `Option::unwrap()` on a `None` value\n\nstack backtrace:",
                Some("panicked at src/lib.rs:10:5: called `Option::unwrap()` on a `None` value"),
            ),
            // Rust 1.95 with RUST_BACKTRACE=1 (kube-client's own output on kcm-testenv).
            (
                "\nthread 'test::aggregated_discovery_core' (27575) panicked at kube-client/src/lib.rs:241:9:\nshould have core group\nstack backtrace:\n  10: tokio::runtime::scheduler::current_thread::CoreGuard::enter::{{closure}}",
                Some("panicked at kube-client/src/lib.rs:241:9: should have core group"),
            ),
            // The pre-1.73 form keeps the message on the same line.
            (
                "thread 'test::t' panicked at 'boom', src/lib.rs:10:5",
                Some("panicked at 'boom', src/lib.rs:10:5"),
            ),
            ("\n  something odd  \n", Some("something odd")),
            ("", None),
        ];
        for (captured, want) in cases {
            assert_eq!(
                first_error_line(captured).as_deref(),
                *want,
                "for {captured:?}"
            );
        }
    }
}
