//! One side of a run: a fresh upstream control plane with the side's controllers (and kcm on
//! the kcm side), `e2e.test` run against it, and its report read back.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::options::{Options, SCOPE, Side, cannot_run_reason};
use super::report::{self, SuiteOutcome};
use crate::cluster::target_dir;
use crate::upstream::build::Binaries;
use crate::upstream::control_plane;

/// Longest a whole suite may run (Ginkgo's own `--ginkgo.timeout`); xtask gives it a few
/// minutes more to write its reports before killing it.
const SUITE_TIMEOUT: Duration = Duration::from_secs(2 * 60 * 60);

/// What one side left.
#[derive(Debug)]
pub struct SideRun {
    /// Per-test outcomes.
    pub outcome: SuiteOutcome,
    /// e2e.test's exit code (`None`: killed).
    pub exit_code: Option<i32>,
    /// Wall-clock seconds of the suite.
    pub seconds: f64,
    /// The run folder.
    pub dir: PathBuf,
    /// `/proc/loadavg`'s 1-minute average when the suite started and when it ended.
    pub load: (String, String),
}

/// The 1-minute load average (empty where `/proc/loadavg` cannot be read).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_default()
}

/// The run folder of `side`.
pub fn dir_of(side: Side) -> PathBuf {
    target_dir().join("upstream-e2e").join(side.name())
}

/// Runs the suite on a fresh cluster for `side`.
pub fn run(
    side: Side,
    opts: &Options,
    bins: &Binaries,
    e2e_test: &Path,
) -> anyhow::Result<SideRun> {
    let dir = dir_of(side);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let cp = control_plane::Options {
        nodes: opts.nodes,
        controllers: match side {
            Side::Upstream => "*".into(),
            Side::Kcm => control_plane::CONTROLLERS_WITHOUT_OURS.into(),
        },
        ..control_plane::Options::default()
    };
    println!("upstream-e2e: {}: starting the control plane", side.name());
    let cluster = control_plane::start(&dir, bins, &cp)
        .with_context(|| format!("starting the control plane (logs in {})", dir.display()))?;
    let mut kcm = match side {
        Side::Kcm => Some(cluster.start_kcm("kcm", &["--leader-elect=false"])?),
        Side::Upstream => None,
    };
    println!(
        "upstream-e2e: {}: running e2e.test (log: {})",
        side.name(),
        dir.join("e2e.log").display()
    );
    let report_path = dir.join("report.json");
    let log = std::fs::File::create(dir.join("e2e.log"))?;
    let mut cmd = Command::new(e2e_test);
    cmd.current_dir(&dir)
        .args(e2e_args(opts, &cluster.kubeconfig, &dir))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let load_before = load_average();
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", e2e_test.display()))?;
    crate::reaper::track_pid(child.id());
    let deadline = started + SUITE_TIMEOUT + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        if let Some(dead) = cluster.exited_process() {
            eprintln!(
                "upstream-e2e: {}: {dead} exited during the suite; see {}",
                side.name(),
                dir.join(format!("{dead}.log")).display()
            );
        }
        if kcm.as_mut().is_some_and(|k| !k.is_running()) {
            kcm = None;
            eprintln!(
                "upstream-e2e: kcm exited during the suite; see {}",
                dir.join("kcm.log").display()
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    crate::reaper::untrack_pid(child.id());
    let seconds = started.elapsed().as_secs_f64();
    let load = (load_before, load_average());
    if !report_path.is_file() {
        bail!(
            "e2e.test wrote no report ({status:?}); see {}",
            dir.join("e2e.log").display()
        );
    }
    let mut outcome = report::read(&report_path, SCOPE)?;
    for (name, o) in outcome.tests.iter_mut() {
        if let (report::Outcome::Skipped(why), Some(reason)) = (&*o, cannot_run_reason(name))
            && why.is_empty()
        {
            *o = report::Outcome::Skipped(format!("cannot run on simulated nodes: {reason}"));
        }
    }
    println!(
        "upstream-e2e: {}: {} tests in {seconds:.0} s ({} passed)",
        side.name(),
        outcome.tests.len(),
        outcome.tests.values().filter(|o| o.passed()).count()
    );
    Ok(SideRun {
        outcome,
        exit_code: status.and_then(|s| s.code()),
        seconds,
        dir,
        load,
    })
}

/// e2e.test's flags: the cluster, the tests, the reports, and what the framework must not do
/// on a cluster whose nodes are simulated.
fn e2e_args(opts: &Options, kubeconfig: &Path, dir: &Path) -> Vec<String> {
    let path = |p: &Path| p.display().to_string();
    vec![
        format!("--kubeconfig={}", path(kubeconfig)),
        "--provider=skeleton".into(),
        format!("--ginkgo.focus={}", opts.focus),
        format!("--ginkgo.skip={}", opts.skip_regex()),
        format!("--ginkgo.json-report={}", path(&dir.join("report.json"))),
        format!("--ginkgo.junit-report={}", path(&dir.join("junit.xml"))),
        format!("--ginkgo.timeout={}s", SUITE_TIMEOUT.as_secs()),
        "--ginkgo.no-color".into(),
        "--ginkgo.v".into(),
        format!("--e2e-output-dir={}", path(dir)),
        // On a failure the framework dumps the namespace, including container logs and the
        // nodes' kubelet state, which kube-apiserver fetches from the node's (made-up,
        // private-range) address; the events and objects are in the cluster's audit log.
        "--dump-logs-on-failure=false".into(),
        "--disable-log-dump=true".into(),
        // There are no system pods to wait for: the simulation runs outside the cluster.
        "--minStartupPods=0".into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2e_test_gets_the_cluster_the_tests_and_the_reports() {
        let o = Options::parse(&["--skip=rollover".to_string()])
            .expect("parses")
            .expect("not help");
        let args = e2e_args(&o, Path::new("/r/kubeconfig"), Path::new("/r"));
        for want in [
            "--kubeconfig=/r/kubeconfig",
            "--provider=skeleton",
            r"--ginkgo.focus=\[sig-apps\] (Deployment|ReplicaSet)",
            "--ginkgo.json-report=/r/report.json",
            "--ginkgo.junit-report=/r/junit.xml",
            "--dump-logs-on-failure=false",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} missing: {args:?}");
        }
        let skip = args
            .iter()
            .find(|a| a.starts_with("--ginkgo.skip="))
            .expect("a skip");
        assert!(skip.ends_with("|rollover"), "{skip}");
    }
}
