//! `cargo xtask peer-tests`: the Rust peer's own tests as the referee of kcm-testenv.
//!
//! kube-rs runs its tests that need a cluster as `cargo test --lib --workspace --all-features
//! -- --ignored` against a k3d cluster (its `.github/workflows/ci.yml`, job `integration`, and
//! `just test-integration`). This command runs the same tests of the published kube-rs
//! [`workspace::KUBE_VERSION`] crates — `kube`, `kube-client`, `kube-runtime`, built in a
//! scratch workspace under `target/peer-tests/` ([`workspace`]) — against kcm-testenv and
//! against kube-apiserver v1.37.2 built here, and prints one table of both ([`report`]).
//!
//! - kcm-testenv: the `kcm-testenv` binary with 3 simulated nodes, its kubeconfig in
//!   `target/peer-tests/testenv/`.
//! - kube-apiserver: the control plane of `cargo xtask cluster up --upstream` (etcd,
//!   kube-apiserver, kube-controller-manager, `kcm-testenv sim` as nodes, scheduler and
//!   kubelets), in `target/peer-tests/upstream/`, with its admin kubeconfig.
//!
//! Each cluster is fresh, so `just test-integration`'s first step (deleting the pods a previous
//! run left, `app=kube-rs-test`) has nothing to do. What no cluster here can pass (no real
//! kubelet: exec, attach, logs, the kubelet's own API) is recognised from each failure's output
//! ([`classify`]). The verdict ([`verdict`]): with both clusters, a test that passes on
//! kube-apiserver but not on kcm-testenv fails the command; whenever kcm-testenv ran (alone in
//! CI), so does a failure there that the committed list [`expected`] does not name.

mod classify;
mod expected;
mod libtest;
mod options;
mod outcome;
mod report;
mod runner;
mod verdict;
mod workspace;

use anyhow::bail;

use crate::cluster::{Cluster, build};
use crate::upstream::{build as upstream_build, control_plane};
use options::{Options, USAGE};
use report::Row;
use runner::{RunConfig, TestId};
use workspace::Layout;

/// Runs `cargo xtask peer-tests <args>`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let opts = Options::parse(args)?;
    if opts.help {
        print!("{USAGE}");
        return Ok(());
    }
    let layout = Layout::new();
    workspace::prepare(&layout, opts.update_lock)?;
    if opts.update_lock {
        return Ok(());
    }
    let binaries = workspace::build(&layout)?;
    let all = runner::list(&binaries)?;
    let tests = select(&all, &opts)?;
    if opts.list {
        for t in &tests {
            println!("{t}");
        }
        return Ok(());
    }
    let config = |cluster: &Cluster, label: &str, dir: &str| RunConfig {
        kubeconfig: cluster.kubeconfig.clone(),
        logs: layout.root.join(dir).join("tests"),
        threads: opts.threads,
        timeout: opts.timeout,
        label: label.to_string(),
    };

    // kcm-testenv is also the upstream side's node simulation.
    build(&["kcm-testenv-cli"])?;
    let mut testenv_runs = None;
    if opts.clusters.testenv() {
        let dir = layout.root.join("testenv");
        let cluster = Cluster::start(&dir, &["--nodes", "3"])?;
        eprintln!("xtask: peer-tests: kcm-testenv at {}", cluster.url);
        let runs = runner::run(
            &binaries,
            &tests,
            &config(&cluster, "kcm-testenv", "testenv"),
        )?;
        fail_if_exited(&cluster)?;
        testenv_runs = Some(runs);
    }
    let mut upstream_runs = None;
    if opts.clusters.upstream() {
        let bins = upstream_build::build()?;
        let dir = layout.root.join("upstream");
        let cluster = control_plane::start(&dir, &bins, &control_plane::Options::default())?;
        eprintln!("xtask: peer-tests: kube-apiserver at {}", cluster.url);
        let runs = runner::run(
            &binaries,
            &tests,
            &config(&cluster, "kube-apiserver", "upstream"),
        )?;
        fail_if_exited(&cluster)?;
        upstream_runs = Some(runs);
    }

    let rows = report::rows(&tests, testenv_runs.as_deref(), upstream_runs.as_deref());
    let table = report::markdown(&rows);
    print!("{table}");
    let report_path = layout.root.join("report.md");
    std::fs::write(&report_path, &table)?;
    eprintln!("xtask: peer-tests: table in {}", report_path.display());
    judge(&rows)
}

/// The tests `--only` leaves, in listed order.
fn select(all: &[TestId], opts: &Options) -> anyhow::Result<Vec<TestId>> {
    let names = |t: &TestId| [t.short().to_string(), t.to_string(), t.name.clone()];
    for wanted in &opts.only {
        if !all.iter().any(|t| names(t).contains(wanted)) {
            let known: Vec<&str> = all.iter().map(TestId::short).collect();
            bail!(
                "no kube-rs test named {wanted:?}; the tests: {}",
                known.join(", ")
            );
        }
    }
    Ok(all
        .iter()
        .filter(|t| opts.only.is_empty() || names(t).iter().any(|n| opts.only.contains(n)))
        .cloned()
        .collect())
}

/// Fails when a process of the cluster died during the run (its results mean nothing).
fn fail_if_exited(cluster: &Cluster) -> anyhow::Result<()> {
    if let Some(name) = cluster.exited_process() {
        bail!(
            "{name} exited during the run; see {}",
            cluster.dir().join(format!("{name}.log")).display()
        );
    }
    Ok(())
}

/// Exits non-zero as [`verdict`] decides, naming the tests.
fn judge(rows: &[Row]) -> anyhow::Result<()> {
    let v = verdict::decide(rows);
    if !v.stale.is_empty() {
        eprintln!(
            "xtask: peer-tests: these now pass on kcm-testenv; take them off the expected-failure list in xtask/src/peer_tests/expected.rs: {}",
            join(&v.stale)
        );
    }
    if v.passed() {
        return Ok(());
    }
    let mut problems = Vec::new();
    if !v.regressions.is_empty() {
        problems.push(format!(
            "{} kube-rs test(s) pass on kube-apiserver but not on kcm-testenv: {}",
            v.regressions.len(),
            join(&v.regressions)
        ));
    }
    if !v.unexpected.is_empty() {
        problems.push(format!(
            "{} kube-rs test(s) fail on kcm-testenv and are not on the expected-failure list (xtask/src/peer_tests/expected.rs): {}",
            v.unexpected.len(),
            join(&v.unexpected)
        ));
    }
    bail!("{}", problems.join("\n"))
}

fn join(ids: &[&TestId]) -> String {
    ids.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
