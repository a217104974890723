//! Command-line flags of `cargo xtask peer-tests`.

use std::time::Duration;

use anyhow::{Context, bail};

/// `cargo xtask peer-tests --help`.
pub(super) const USAGE: &str =
    "usage: cargo xtask peer-tests [--cluster testenv|upstream|both] [--only NAME,...]
                              [--test-threads N] [--timeout SECS] [--list] [--update-lock]

Runs the tests of kube-rs 5.0.0 that need a cluster (the #[ignore]d lib tests of the published
crates kube, kube-client and kube-runtime, as kube-rs's CI runs them: `cargo test --lib
--workspace --all-features -- --ignored`) against kcm-testenv and against kube-apiserver
v1.37.2 built here, and prints a table of both. The crates are downloaded by cargo from
crates.io and built in target/peer-tests/ with the committed lock
xtask/src/peer_tests/peer-tests.lock; each test's output is kept in
target/peer-tests/<cluster>/tests/, the table in target/peer-tests/report.md.

  --cluster both       the default: kcm-testenv (3 simulated nodes), then etcd + kube-apiserver
                       + kube-controller-manager v1.37.2 with kcm-testenv sim as the nodes
                       (cargo xtask cluster up --upstream); fails when a test passes on
                       kube-apiserver but not on kcm-testenv
  --cluster testenv    kcm-testenv only; fails when a test fails that the expected-failure list
                       (xtask/src/peer_tests/expected.rs) does not name
  --cluster upstream   kube-apiserver only (the table, no verdict)
  --only NAME,...      these tests only: a function name (csr_can_be_approved) or a full path
                       (kube-client test::csr_can_be_approved)
  --test-threads N     tests of one crate run at once (default: the number of CPUs, as libtest)
  --timeout SECS       a test still running after this is killed and counted as failed
                       (default 120)
  --list               build, print the tests and exit
  --update-lock        resolve the scratch workspace afresh from the lock kube 5.0.0 was
                       published with, write peer-tests.lock, and exit
  -h, --help           this text
";

/// Which servers to run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Clusters {
    /// kcm-testenv only.
    Testenv,
    /// kube-apiserver only.
    Upstream,
    /// Both, kcm-testenv first.
    Both,
}

impl Clusters {
    pub(super) fn testenv(self) -> bool {
        matches!(self, Clusters::Testenv | Clusters::Both)
    }

    pub(super) fn upstream(self) -> bool {
        matches!(self, Clusters::Upstream | Clusters::Both)
    }
}

/// What `cargo xtask peer-tests` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Options {
    pub clusters: Clusters,
    /// Test filter (empty: all).
    pub only: Vec<String>,
    pub threads: usize,
    pub timeout: Duration,
    pub list: bool,
    pub update_lock: bool,
    pub help: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            clusters: Clusters::Both,
            only: Vec::new(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            timeout: Duration::from_secs(120),
            list: false,
            update_lock: false,
            help: false,
        }
    }
}

impl Options {
    pub(super) fn parse(args: &[String]) -> anyhow::Result<Options> {
        let mut o = Options::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let mut value = |flag: &str| {
                it.next()
                    .cloned()
                    .with_context(|| format!("{flag} wants a value\n\n{USAGE}"))
            };
            match arg.as_str() {
                "--cluster" => {
                    o.clusters = match value("--cluster")?.as_str() {
                        "testenv" => Clusters::Testenv,
                        "upstream" => Clusters::Upstream,
                        "both" => Clusters::Both,
                        other => bail!("--cluster wants testenv, upstream or both, got {other:?}"),
                    }
                }
                "--only" => o.only.extend(
                    value("--only")?
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                ),
                "--test-threads" => {
                    let v = value("--test-threads")?;
                    o.threads = v.parse().ok().filter(|n| *n > 0).with_context(|| {
                        format!("--test-threads wants a positive count, got {v:?}")
                    })?;
                }
                "--timeout" => {
                    let v = value("--timeout")?;
                    let secs: u64 = v.parse().ok().filter(|n| *n > 0).with_context(|| {
                        format!("--timeout wants a positive number of seconds, got {v:?}")
                    })?;
                    o.timeout = Duration::from_secs(secs);
                }
                "--list" => o.list = true,
                "--update-lock" => o.update_lock = true,
                "-h" | "--help" => o.help = true,
                other => bail!("unknown flag `{other}`\n\n{USAGE}"),
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> anyhow::Result<Options> {
        Options::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn flags() {
        let o = parse(&[
            "--cluster",
            "testenv",
            "--only",
            "a, b,,c",
            "--only",
            "d",
            "--test-threads",
            "3",
            "--timeout",
            "30",
        ])
        .unwrap();
        assert_eq!(o.clusters, Clusters::Testenv);
        assert!(!o.list && !o.update_lock);
        assert_eq!(o.only, vec!["a", "b", "c", "d"]);
        assert_eq!(o.threads, 3);
        assert_eq!(o.timeout, Duration::from_secs(30));
        assert_eq!(parse(&[]).unwrap().clusters, Clusters::Both);
        assert!(Clusters::Both.testenv() && Clusters::Both.upstream());
        assert!(!Clusters::Upstream.testenv());
    }

    #[test]
    fn bad_flags_are_errors() {
        for args in [
            &["--cluster", "kind"][..],
            &["--cluster"],
            &["--test-threads", "0"],
            &["--timeout", "soon"],
            &["--bogus"],
        ] {
            assert!(parse(args).is_err(), "{args:?}");
        }
    }
}
