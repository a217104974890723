//! What happened to one test on one cluster, from its test binary's output and exit.

use std::time::Duration;

use super::libtest::{self, Status};

/// One test's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// libtest printed `ok`.
    Passed,
    /// libtest printed `FAILED`, or the binary ended without a result line.
    Failed {
        /// The line worth showing ([`libtest::first_error_line`]).
        first_error: String,
        /// Everything the test printed (its captured section, or the whole output).
        captured: String,
    },
    /// Killed after the time limit, without a result.
    TimedOut(Duration),
}

impl Outcome {
    /// Passed.
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed)
    }
}

/// The outcome of test `name` from the output of a binary run for it alone, which was killed
/// after `timed_out` if `Some`, else exited with `exit` (as `ExitStatus` displays).
pub fn from_output(name: &str, output: &str, timed_out: Option<Duration>, exit: &str) -> Outcome {
    let run = libtest::parse(output);
    match run.status(name) {
        Some(Status::Ok) => Outcome::Passed,
        Some(Status::Failed) => {
            let captured = run
                .captured
                .get(name)
                .cloned()
                .unwrap_or_else(|| output.trim().to_string());
            Outcome::Failed {
                first_error: libtest::first_error_line(&captured)
                    .unwrap_or_else(|| "FAILED, with no output".to_string()),
                captured,
            }
        }
        Some(Status::Ignored) => Outcome::Failed {
            first_error: "libtest ignored it although it was run with --ignored".to_string(),
            captured: output.trim().to_string(),
        },
        None => match timed_out {
            Some(limit) => Outcome::TimedOut(limit),
            None => Outcome::Failed {
                first_error: format!("no result line; the test binary exited with {exit}"),
                captured: output.trim().to_string(),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_cases() {
        let ok = "running 1 test\ntest t::a ... ok\n\ntest result: ok. 1 passed";
        assert_eq!(
            from_output("t::a", ok, None, "exit status: 0"),
            Outcome::Passed
        );
        // A result line wins over a late kill (the binary hung after its test ended).
        assert_eq!(
            from_output("t::a", ok, Some(Duration::from_secs(5)), "signal: 9"),
            Outcome::Passed
        );

        let failed = "running 1 test\ntest t::a ... FAILED\n\nfailures:\n\n---- t::a stdout ----\nError: NotFound\n\nfailures:\n    t::a\n";
        assert_eq!(
            from_output("t::a", failed, None, "exit status: 101"),
            Outcome::Failed {
                first_error: "Error: NotFound".into(),
                captured: "Error: NotFound".into()
            }
        );

        let hung = "running 1 test\n";
        assert_eq!(
            from_output("t::a", hung, Some(Duration::from_secs(90)), "signal: 9"),
            Outcome::TimedOut(Duration::from_secs(90))
        );
        match from_output("t::a", "Segmentation fault", None, "signal: 11") {
            Outcome::Failed {
                first_error,
                captured,
            } => {
                assert_eq!(
                    first_error,
                    "no result line; the test binary exited with signal: 11"
                );
                assert_eq!(captured, "Segmentation fault");
            }
            other => panic!("{other:?}"),
        }
        assert!(!from_output("t::b", ok, None, "exit status: 0").passed());
    }
}
