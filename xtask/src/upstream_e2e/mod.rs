//! `cargo xtask upstream-e2e`: upstream v1.37.2's own e2e tests of Deployments and ReplicaSets
//! (`test/e2e/apps/deployment.go`, `test/e2e/apps/replica_set.go`), run against the upstream
//! control plane with nodes simulated by `kcm-testenv sim`, once with kube-controller-manager's
//! own Deployment and ReplicaSet controllers and once with kcm's, and compared test by test.
//!
//! - [`suite_build`]: `e2e.test`, built from `upstream/` and reused while its inputs are unchanged;
//! - [`side`]: one side: a fresh control plane ([`crate::upstream::control_plane::start`]), kcm on
//!   the kcm side, `e2e.test` with a Ginkgo JSON and JUnit report;
//! - [`report`]: per-test outcomes from the JSON report;
//! - [`compare`]: the table and the verdict, with the expected differences of
//!   `expected_differences.txt`.

mod compare;
mod options;
mod report;
mod side;
mod suite_build;

use anyhow::bail;

use crate::cluster::{build, target_dir};
use crate::upstream::build as upstream_build;
use options::{CANNOT_RUN, Options, Side, USAGE};

/// The workspace's commit, `-dirty` when the work tree has changes (`unknown` without git).
fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(crate::workspace_root())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) if git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty()) => {
            format!("{c}-dirty")
        }
        Some(c) => c,
        None => "unknown".into(),
    }
}

/// Runs `cargo xtask upstream-e2e`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let Some(opts) = Options::parse(args)? else {
        print!("{USAGE}");
        return Ok(());
    };
    let expected_path = crate::workspace_root().join(compare::EXPECTED_FILE);
    let expected = compare::parse_expected(&std::fs::read_to_string(&expected_path)?)?;
    build(&["kcm", "kcm-testenv-cli"])?;
    let bins = upstream_build::build()?;
    let e2e_test = suite_build::build()?;
    println!("upstream-e2e: not run on simulated nodes:");
    for (name, why) in CANNOT_RUN {
        println!("  {name}: {why}");
    }
    let mut upstream = None;
    let mut kcm = None;
    let mut broken = Vec::new();
    for &side in &opts.sides {
        let run = side::run(side, &opts, &bins, &e2e_test)?;
        for f in &run.outcome.suite_failures {
            broken.push(format!("{}: {f}", side.name()));
        }
        if run.outcome.tests.is_empty() {
            broken.push(format!(
                "{}: no test ran (e2e.test exit code {:?}; see {})",
                side.name(),
                run.exit_code,
                run.dir.join("e2e.log").display()
            ));
        }
        match side {
            Side::Upstream => upstream = Some(run),
            Side::Kcm => kcm = Some(run),
        }
    }
    let rows = compare::rows(
        upstream.as_ref().map(|r| &r.outcome),
        kcm.as_ref().map(|r| &r.outcome),
        &expected,
    );
    let mut table = compare::markdown(&rows);
    table.push('\n');
    table.push_str(&format!(
        "- Run {} UTC at commit {} with e2e.test of k8s.io/kubernetes {}, {} simulated nodes.\n",
        jiff::Timestamp::now().strftime("%Y-%m-%d %H:%M"),
        commit(),
        bins.version,
        opts.nodes
    ));
    for (label, run) in [("kube-controller-manager", &upstream), ("kcm", &kcm)] {
        if let Some(r) = run {
            let passed = r.outcome.tests.values().filter(|o| o.passed()).count();
            let failed = r
                .outcome
                .tests
                .values()
                .filter(|o| matches!(o, report::Outcome::Failed(_)))
                .count();
            table.push_str(&format!(
                "- {label}: {passed} passed, {failed} failed, {} skipped in {:.0} s (1-minute load \
                 average {} at the start, {} at the end).\n",
                r.outcome.tests.len() - passed - failed,
                r.seconds,
                r.load.0,
                r.load.1
            ));
        }
    }
    println!("\n{table}");
    let table_path = target_dir().join("upstream-e2e").join("table.md");
    std::fs::write(&table_path, &table)?;
    println!("table written to {}", table_path.display());
    if !broken.is_empty() {
        bail!("the suite could not run:\n  {}", broken.join("\n  "));
    }
    let bad = compare::unexpected(&rows);
    if !bad.is_empty() {
        let names: Vec<&str> = bad.iter().map(|r| r.name.as_str()).collect();
        bail!(
            "{} test(s) pass under kube-controller-manager but not under kcm (and are not in {}):\n  {}",
            bad.len(),
            compare::EXPECTED_FILE,
            names.join("\n  ")
        );
    }
    Ok(())
}
