//! `cargo xtask diff [--only NAME,...] [--runs N]`: differential fidelity. Every plain e2e
//! scenario runs twice on fresh upstream control planes (etcd, kube-apiserver,
//! kube-controller-manager v1.37.2, nodes simulated by `kcm-testenv sim`):
//!
//! - (A) kube-controller-manager runs its own Deployment and ReplicaSet controllers;
//! - (B) it runs without them (`--controllers=*,-deployment-controller,-replicaset-controller`)
//!   and kcm runs beside it, as README.md tells users.
//!
//! The scenario's own assertions and the rollout invariant checker run on both. At the end of
//! each scenario, once nothing changes any more (the quiescent point), the namespace is
//! snapshotted ([`normalize`]) and the controllers' writes are read from the audit log
//! ([`audit`]); the two sides are compared ([`compare`]). Each difference is either explained
//! (listed in [`explained::EXPLAINED`] with its reason, and in docs/fidelity.md; or accounted for
//! by the run's audit log, [`explained::by_evidence`]) or unexplained;
//! the command fails on an unexplained difference or a failed scenario.
//!
//! Each side runs its scenarios one after another in namespaces of their own on one control plane
//! per side and run. The report is printed, written to `target/diff/report.md`, and its summary
//! table replaces the generated part of `docs/fidelity.md` when every scenario ran (no `--only`).

pub(crate) mod audit;
mod compare;
mod explained;
mod normalize;
mod report;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::cluster::{Cluster, build, target_dir};
use crate::upstream::{build as upstream_build, control_plane};
use compare::Difference;
use normalize::Snapshot;

const USAGE: &str = "usage: cargo xtask diff [--only NAME,...] [--runs N] [--feature-gates GATES]

Runs every plain e2e scenario under upstream kube-controller-manager v1.37.2's own Deployment
and ReplicaSet controllers and under kcm, on fresh upstream control planes, and compares what a
client can observe at the end of each (objects, pods, events, the controllers' writes).

  --only NAME,...   these scenarios only (cargo xtask e2e --list names them)
  --runs N          repeat N times (default 1); a difference seen in fewer runs is reported
                    with how many. With N >= 2, what also differs between two runs of upstream
                    itself is timing, not behaviour: such differences are reported as such and
                    do not fail the command
  --feature-gates GATES
                    name=bool,... for kube-apiserver, kube-controller-manager and kcm alike
                    (e.g. DeploymentReplicaSetTerminatingReplicas=false, as a v1.33 server
                    behaves); the report is written, docs/fidelity.md is left alone
";

/// Which controllers a side runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Upstream,
    Kcm,
}

/// What one side left after one scenario.
#[derive(Debug, Clone)]
struct Observed {
    outcome: Result<(), String>,
    /// The namespace's objects at the quiescent point, as listed.
    list: serde_json::Value,
    snapshot: Snapshot,
    writes: audit::Writes,
}

/// Runs `cargo xtask diff`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut only: Vec<String> = Vec::new();
    let mut runs = 1usize;
    let mut gates = String::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .unwrap_or_default()
        };
        match flag {
            "--only" => only.extend(
                value()
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            ),
            "--runs" => {
                let v = value();
                runs = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .with_context(|| format!("--runs wants a positive count, got {v:?}"))?;
            }
            "--feature-gates" => gates = value(),
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument `{other}`\n\n{USAGE}"),
        }
    }
    let all = crate::e2e::plain_scenarios();
    if let Some(unknown) = only.iter().find(|n| !all.contains(&n.as_str())) {
        bail!("--only: no plain scenario named `{unknown}` (cargo xtask e2e --list)");
    }
    let scenarios: Vec<&str> = all
        .into_iter()
        .filter(|n| only.is_empty() || only.iter().any(|o| o == n))
        .collect();
    build(&["kcm", "kcm-testenv-cli"])?;
    let bins = upstream_build::build()?;
    let started = Instant::now();
    // Per scenario: the differences of each run.
    let mut found: BTreeMap<&str, Vec<Vec<Difference>>> = BTreeMap::new();
    // Per scenario: what differed between two runs of upstream itself (timing, not logic).
    let mut noise: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    let mut previous_upstream: Option<BTreeMap<&str, Observed>> = None;
    for run in 1..=runs {
        let a = run_side(Side::Upstream, run, &scenarios, &bins, &gates)?;
        let b = run_side(Side::Kcm, run, &scenarios, &bins, &gates)?;
        if let Some(prev) = &previous_upstream {
            for name in &scenarios {
                let set = noise.entry(name).or_default();
                for d in differences(&prev[name], &a[name]) {
                    set.insert(d.what);
                }
            }
        }
        for name in &scenarios {
            let (x, y) = (&a[name], &b[name]);
            for (side, o) in [("upstream", x), ("kcm", y)] {
                if let Err(e) = &o.outcome {
                    failures.push(format!("run {run}, {name} under {side}: {e}"));
                }
            }
            found.entry(name).or_default().push(differences(x, y));
        }
        previous_upstream = Some(a);
    }
    let report = report::render(&found, &noise, runs, &failures, started.elapsed());
    let dir = target_dir().join("diff");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("report.md"), &report.full)?;
    println!("{}", report.full);
    println!("report: {}", dir.join("report.md").display());
    if only.is_empty() && gates.is_empty() {
        report::update_fidelity_doc(
            &crate::workspace_root().join("docs/fidelity.md"),
            &report.summary,
        )?;
        println!("docs/fidelity.md: summary table regenerated");
    }
    if !failures.is_empty() {
        bail!("{} scenario run(s) failed", failures.len());
    }
    if report.unexplained > 0 {
        bail!("{} unexplained difference(s)", report.unexplained);
    }
    Ok(())
}

/// One side of one run: a fresh control plane, every scenario, snapshots and writes.
fn run_side(
    side: Side,
    run: usize,
    scenarios: &[&'static str],
    bins: &upstream_build::Binaries,
    gates: &str,
) -> anyhow::Result<BTreeMap<&'static str, Observed>> {
    let label = match side {
        Side::Upstream => "upstream",
        Side::Kcm => "kcm",
    };
    let dir = target_dir().join("diff").join(format!("run-{run}-{label}"));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = control_plane::Options {
        controllers: match side {
            Side::Upstream => "*".into(),
            Side::Kcm => control_plane::CONTROLLERS_WITHOUT_OURS.into(),
        },
        feature_gates: gates.to_string(),
        ..Default::default()
    };
    println!("diff: run {run}, {label}: starting the control plane");
    let cluster = control_plane::start(&dir, bins, &opts)
        .with_context(|| format!("starting the control plane (logs in {})", dir.display()))?;
    let _kcm = match side {
        Side::Kcm => {
            let gates = format!("--feature-gates={gates}");
            let mut args = vec!["--leader-elect=false"];
            if !gates.ends_with('=') {
                args.push(&gates);
            }
            Some(cluster.start_kcm("kcm", &args)?)
        }
        Side::Upstream => None,
    };
    let mut out = BTreeMap::new();
    for name in scenarios {
        let ns = format!("diff-{name}");
        let t = Instant::now();
        let outcome =
            crate::e2e::run_plain(&cluster, name, &ns, "diff", 2.0).map_err(|e| format!("{e:#}"));
        let list = quiescent_list(&cluster, &ns)?;
        println!(
            "diff: run {run}, {label}: {name} {} ({:.1}s)",
            if outcome.is_ok() { "done" } else { "FAILED" },
            t.elapsed().as_secs_f64()
        );
        out.insert(
            *name,
            Observed {
                outcome,
                list,
                snapshot: Snapshot::default(),
                writes: audit::Writes::default(),
            },
        );
    }
    let events = audit::read(&dir);
    for (name, o) in out.iter_mut() {
        let ns = format!("diff-{name}");
        o.writes = audit::writes(&events, &ns);
        o.snapshot = normalize::snapshot(&o.list, &audit::created_replica_sets(&events, &ns));
    }
    Ok(out)
}

/// Lists `ns` once three polls a second apart agree, normalised (at most 60 s; the last list
/// then): the quiescent point.
fn quiescent_list(cluster: &Cluster, ns: &str) -> anyhow::Result<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last: Option<(serde_json::Value, Snapshot)> = None;
    let mut stable = 0;
    loop {
        let list = cluster.get_json(&["deployments,replicasets,pods,events", "-n", ns])?;
        let snap = normalize::snapshot(&list, &[]);
        if last.as_ref().is_some_and(|(_, s)| *s == snap) {
            stable += 1;
        } else {
            stable = 0;
        }
        last = Some((list, snap));
        if stable >= 2 || Instant::now() >= deadline {
            return last.map(|(l, _)| l).context("no list");
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Everything that differs between two observations of one scenario.
fn differences(x: &Observed, y: &Observed) -> Vec<Difference> {
    let mut diffs = compare::snapshots(&x.snapshot, &y.snapshot);
    for d in &mut diffs {
        d.because = explained::by_evidence(&d.what, &x.writes, &y.writes);
    }
    diffs.extend(compare::writes(
        &rename_writes(&x.writes, &x.snapshot),
        &rename_writes(&y.writes, &y.snapshot),
    ));
    diffs
}

/// The scale-write order with ReplicaSet names normalised as in the snapshot.
fn rename_writes(w: &audit::Writes, snap: &Snapshot) -> audit::Writes {
    let mut w = w.clone();
    for step in &mut w.scale_order {
        for (ordinal, hash) in &snap.hashes {
            *step = step.replace(hash.as_str(), ordinal);
        }
    }
    w
}
