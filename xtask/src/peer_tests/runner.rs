//! Running kube-rs's tests against one cluster: each test is its own run of its crate's test
//! binary (`--ignored --exact NAME`, from the crate's folder as cargo runs it, `KUBECONFIG`
//! set), with a time limit, `threads` of them at once within a crate as libtest runs a binary's
//! tests in parallel; the crates one after the other, as `cargo test` runs binaries.
//!
//! One process per test instead of one per binary changes nothing the cluster sees, and gives
//! each test its own log and time limit: a test that hangs (an informer retrying a 404
//! forever) costs its limit, not the results of the others.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::libtest;
use super::outcome::{self, Outcome};
use super::workspace::TestBinary;

/// A test: its crate and its libtest path (`test::pod_can_use_core_apis`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TestId {
    /// `kube-client`
    pub crate_name: String,
    /// `test::pod_can_use_core_apis`
    pub name: String,
}

impl TestId {
    /// The function's name, the last part of its path.
    pub fn short(&self) -> &str {
        self.name.rsplit("::").next().unwrap_or(&self.name)
    }
}

impl std::fmt::Display for TestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.crate_name, self.name)
    }
}

/// One test's run.
#[derive(Debug, Clone)]
pub struct TestRun {
    /// Which test.
    pub id: TestId,
    /// What happened.
    pub outcome: Outcome,
    /// How long it ran.
    pub took: Duration,
}

/// The `#[ignore]`d tests of each binary (`BINARY --list --ignored`), in order.
pub fn list(binaries: &[TestBinary]) -> anyhow::Result<Vec<TestId>> {
    let mut tests = Vec::new();
    for bin in binaries {
        let out = Command::new(&bin.path)
            .args(["--list", "--ignored"])
            .current_dir(&bin.dir)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("listing the tests of {}", bin.path.display()))?;
        if !out.status.success() {
            bail!(
                "{} --list --ignored failed ({}): {}",
                bin.path.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        tests.extend(
            libtest::parse_list(&String::from_utf8_lossy(&out.stdout))
                .into_iter()
                .map(|name| TestId {
                    crate_name: bin.crate_name.clone(),
                    name,
                }),
        );
    }
    Ok(tests)
}

/// How to run the tests on a cluster.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The cluster's kubeconfig (`KUBECONFIG`).
    pub kubeconfig: PathBuf,
    /// Each test's output goes to `logs/<crate>--<name>.log`.
    pub logs: PathBuf,
    /// Tests of one crate at once.
    pub threads: usize,
    /// A test still running after this is killed.
    pub timeout: Duration,
    /// Printed before each result line (`kcm-testenv`).
    pub label: String,
}

/// Runs `tests` (each from the binary of its crate) and returns their runs in `tests`' order.
pub fn run(
    binaries: &[TestBinary],
    tests: &[TestId],
    config: &RunConfig,
) -> anyhow::Result<Vec<TestRun>> {
    std::fs::create_dir_all(&config.logs)?;
    let mut runs = Vec::new();
    for bin in binaries {
        let mine: Vec<&TestId> = tests
            .iter()
            .filter(|t| t.crate_name == bin.crate_name)
            .collect();
        let results: Mutex<Vec<Option<TestRun>>> = Mutex::new(vec![None; mine.len()]);
        let next = AtomicUsize::new(0);
        let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..config.threads.max(1) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(id) = mine.get(i) else { return };
                        match run_one(bin, id, config) {
                            Ok(run) => {
                                print_line(&config.label, &run);
                                lock(&results)[i] = Some(run);
                            }
                            Err(e) => {
                                lock(&failure).get_or_insert(e);
                                return;
                            }
                        }
                    }
                });
            }
        });
        if let Some(e) = lock(&failure).take() {
            return Err(e);
        }
        let done = std::mem::take(&mut *lock(&results));
        runs.extend(done.into_iter().flatten());
    }
    Ok(runs)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn print_line(label: &str, run: &TestRun) {
    let what = match &run.outcome {
        Outcome::Passed => "ok".to_string(),
        Outcome::Failed { first_error, .. } => format!("FAILED: {first_error}"),
        Outcome::TimedOut(limit) => format!("TIMED OUT after {limit:?}"),
    };
    eprintln!(
        "xtask: peer-tests [{label}] {} ({:.1} s): {what}",
        run.id,
        run.took.as_secs_f64()
    );
}

/// Runs one test in its own process; an error is the harness's, not the test's.
fn run_one(bin: &TestBinary, id: &TestId, config: &RunConfig) -> anyhow::Result<TestRun> {
    let log_path = config.logs.join(format!(
        "{}--{}.log",
        id.crate_name,
        id.name.replace("::", "-")
    ));
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    let started = Instant::now();
    let mut child = Command::new(&bin.path)
        .args(["--ignored", "--exact", &id.name, "--test-threads=1"])
        .current_dir(&bin.dir)
        .env("CARGO_MANIFEST_DIR", &bin.dir)
        .env("KUBECONFIG", &config.kubeconfig)
        // As kube-rs's CI sets it.
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {}", bin.path.display()))?;
    crate::reaper::track_pid(child.id());
    let deadline = started + config.timeout;
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait()? {
            break (status, None);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            break (child.wait()?, Some(config.timeout));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    crate::reaper::untrack_pid(child.id());
    let took = started.elapsed();
    let output = read_lossy(&log_path)?;
    Ok(TestRun {
        id: id.clone(),
        outcome: outcome::from_output(&id.name, &output, timed_out, &status.to_string()),
        took,
    })
}

fn read_lossy(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_and_display() {
        let id = TestId {
            crate_name: "kube-client".into(),
            name: "client::client_ext::test::fetch_fails".into(),
        };
        assert_eq!(id.short(), "fetch_fails");
        assert_eq!(
            id.to_string(),
            "kube-client client::client_ext::test::fetch_fails"
        );
    }
}
