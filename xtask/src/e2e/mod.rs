//! `cargo xtask e2e`: end-to-end scenarios — the real `kcm` binary against a `kcm-testenv`
//! cluster (3 simulated nodes), user steps through the real kubectl, and a rollout invariant
//! checker sampling every scenario's Deployment while it runs.
//!
//! Invariants checked at every observed instant (RollingUpdate, healthy pods):
//! Σ ReplicaSet replicas ≤ replicas + maxSurge, and available ≥ replicas − maxUnavailable once
//! the first rollout completed; Recreate: old and new ReplicaSets never both have pods.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use crate::cluster::{Cluster, build_binaries, wait_for};
use crate::observe::{Observer, Sample, write_timeline};

mod scenarios;

use scenarios::{SCENARIOS, scenario_kcm_restart, scenario_leader_election};

const TIMEOUT: Duration = Duration::from_secs(90);

/// A scenario's Deployment and what its rollouts must respect.
struct Rollout {
    ns: String,
    name: String,
    max_surge: i64,
    max_unavailable: i64,
    recreate: bool,
}

fn deployment(ns: &str, name: &str, replicas: i64, image: &str, strategy: Value) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": strategy,
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "app", "image": image}]}}
        }
    })
    .to_string()
}

/// An IntOrString: "25%" stays a string, "2" becomes the integer 2 (a string without `%` is
/// invalid, as upstream validation says).
fn int_or_percent(v: &str) -> Value {
    v.parse::<i64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::from(v))
}

fn rolling(surge: &str, unavailable: &str) -> Value {
    json!({"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": int_or_percent(surge), "maxUnavailable": int_or_percent(unavailable)}})
}

fn create_namespace(c: &Cluster, ns: &str) -> anyhow::Result<()> {
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}).to_string(),
    )?;
    Ok(())
}

fn complete(c: &Cluster, ns: &str, name: &str) -> anyhow::Result<bool> {
    let d = c.get_json(&["deployment", name, "-n", ns])?;
    let spec = d["spec"]["replicas"].as_i64().unwrap_or(1);
    let st = &d["status"];
    Ok(st["observedGeneration"].as_i64().unwrap_or(0)
        >= d["metadata"]["generation"].as_i64().unwrap_or(0)
        && st["updatedReplicas"].as_i64().unwrap_or(0) == spec
        && st["replicas"].as_i64().unwrap_or(0) == spec
        && st["availableReplicas"].as_i64().unwrap_or(0) == spec)
}

/// Checks one sample against the rollout's invariants.
fn check(r: &Rollout, s: &Sample, first_rollout_done: bool) -> Result<(), String> {
    let total: i64 = s.rs.iter().map(|x| x.replicas).sum();
    if r.recreate {
        // Spec replicas, not status: a ReplicaSet's status may lag its deleted pods.
        let with_pods = s.rs.iter().filter(|x| x.replicas > 0).count();
        if with_pods > 1 {
            return Err(format!(
                "Recreate: {with_pods} ReplicaSets have pods at once at {:.1}s: {:?}",
                s.t, s.rs
            ));
        }
        return Ok(());
    }
    if total > s.desired + r.max_surge {
        return Err(format!(
            "Σ replicas {total} > replicas {} + maxSurge {} at {:.1}s: {:?}",
            s.desired, r.max_surge, s.t, s.rs
        ));
    }
    let min_available = s.desired - r.max_unavailable;
    if first_rollout_done && s.available < min_available {
        return Err(format!(
            "available {} < replicas {} − maxUnavailable {} at {:.1}s",
            s.available, s.desired, r.max_unavailable, s.t
        ));
    }
    Ok(())
}

/// Samples the rollout until `done` says so, checking invariants at every sample.
fn watch(
    c: &Cluster,
    r: &Rollout,
    obs: &mut Observer,
    settled: bool,
    mut done: impl FnMut(&Cluster) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let s = obs.observe(c, &r.ns, &r.name)?.clone();
        if let Err(v) = check(r, &s, settled) {
            bail!("invariant violated: {v}");
        }
        if done(c)? {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "timed out after {TIMEOUT:?} ({}/{})",
            r.ns,
            r.name
        );
        std::thread::sleep(Duration::from_millis(150));
    }
}

fn active_pods(c: &Cluster, ns: &str, app: &str) -> anyhow::Result<Vec<Value>> {
    let pods = c.get_json(&["pods", "-n", ns, "-l", &format!("app={app}")])?;
    Ok(pods["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            p["metadata"]["deletionTimestamp"].is_null()
                && !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
        })
        .collect())
}

/// Creates Deployment `web` in `ns` (with `patch` applied to its manifest) and waits for its
/// first rollout while checking invariants; `limits` are maxSurge and maxUnavailable resolved
/// to pod counts. Returns the rollout's limits and the observer holding its samples.
fn start_web(
    c: &Cluster,
    ns: &str,
    replicas: i64,
    strategy: Value,
    limits: (i64, i64),
    patch: impl FnOnce(&mut Value),
) -> anyhow::Result<(Rollout, Observer)> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: limits.0,
        max_unavailable: limits.1,
        recreate: strategy["type"] == "Recreate",
    };
    let mut d: Value = serde_json::from_str(&deployment(ns, "web", replicas, "app:v1", strategy))?;
    patch(&mut d);
    c.kubectl_stdin(&["apply", "-f", "-"], &d.to_string())?;
    let mut obs = Observer::new(true);
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    Ok((r, obs))
}

/// `kubectl set image` to `image`, then follows the rollout to completion.
fn roll_image(c: &Cluster, r: &Rollout, obs: &mut Observer, image: &str) -> anyhow::Result<()> {
    c.kubectl(&[
        "-n",
        &r.ns,
        "set",
        "image",
        "deployment/web",
        &format!("app={image}"),
    ])?;
    std::thread::sleep(Duration::from_millis(300));
    watch(c, r, obs, true, |c| complete(c, &r.ns, "web"))
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    if let Some(a) = args.first() {
        bail!("unknown argument `{a}` (usage: cargo xtask e2e)");
    }
    build_binaries()?;
    let dir: PathBuf = crate::cluster::target_dir().join("e2e");
    let _ = std::fs::remove_dir_all(&dir);
    let c = Cluster::start(&dir, &["--nodes", "3", "--pod-ready-after", "300ms"])
        .context("starting kcm-testenv")?;
    let mut kcm = c.start_kcm("kcm", &["--leader-elect=false"])?;
    let mut results: Vec<(String, Result<(), String>, f64)> = Vec::new();
    let mut run_one = |name: &str, f: &mut dyn FnMut(&str) -> anyhow::Result<Vec<Sample>>| {
        let ns = format!("e2e-{name}");
        let start = Instant::now();
        println!("e2e: {name} ...");
        let outcome = create_namespace(&c, &ns)
            .and_then(|_| f(&ns))
            .and_then(|samples| {
                write_timeline(
                    &dir.join(format!("{name}.svg")),
                    &format!("e2e {name}"),
                    &samples,
                    &[],
                )
            });
        let secs = start.elapsed().as_secs_f64();
        match &outcome {
            Ok(()) => println!("e2e: {name} passed ({secs:.1}s)"),
            Err(e) => println!("e2e: {name} FAILED ({secs:.1}s): {e:#}"),
        }
        results.push((
            name.to_string(),
            outcome.map_err(|e| format!("{e:#}")),
            secs,
        ));
    };
    for (name, scenario) in SCENARIOS {
        run_one(name, &mut |ns| scenario(&c, ns));
    }
    run_one("kcm-killed-mid-rollout", &mut |ns| {
        scenario_kcm_restart(&c, &mut kcm, ns)
    });
    run_one("leader-election", &mut |_| {
        scenario_leader_election(&dir).map(|()| Vec::new())
    });

    println!("\n{:<36} {:>8}  result", "scenario", "seconds");
    for (name, r, secs) in &results {
        println!(
            "{name:<36} {secs:>8.1}  {}",
            if r.is_ok() { "passed" } else { "FAILED" }
        );
    }
    let failed = results.iter().filter(|r| r.1.is_err()).count();
    println!("\n{} passed, {failed} failed", results.len() - failed);
    println!("timelines and logs: {}", dir.display());
    ensure!(failed == 0, "{failed} e2e scenario(s) failed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::RsSample;

    fn sample(desired: i64, available: i64, rs: &[i64]) -> Sample {
        Sample {
            t: 1.0,
            desired,
            available,
            updated: 0,
            rs: rs
                .iter()
                .enumerate()
                .map(|(i, r)| RsSample {
                    name: format!("rs{i}"),
                    revision: (i + 1).to_string(),
                    replicas: *r,
                    ready: *r,
                    available: *r,
                })
                .collect(),
        }
    }

    #[test]
    fn invariant_checker_flags_violations() {
        let r = Rollout {
            ns: "n".into(),
            name: "web".into(),
            max_surge: 2,
            max_unavailable: 2,
            recreate: false,
        };
        assert!(check(&r, &sample(8, 8, &[8, 2]), true).is_ok());
        assert!(check(&r, &sample(8, 6, &[6, 4]), true).is_ok());
        assert!(
            check(&r, &sample(8, 8, &[8, 3]), true).is_err(),
            "surge 3 > 2"
        );
        assert!(
            check(&r, &sample(8, 5, &[5, 5]), true).is_err(),
            "available 5 < 6"
        );
        assert!(
            check(&r, &sample(8, 0, &[8]), false).is_ok(),
            "availability checked only after the first rollout"
        );
        let rc = Rollout {
            recreate: true,
            ..r
        };
        assert!(check(&rc, &sample(4, 4, &[4, 0]), true).is_ok());
        assert!(
            check(&rc, &sample(4, 2, &[2, 1]), true).is_err(),
            "old and new together"
        );
        assert!(
            check(&rc, &sample(4, 0, &[0, 0]), true).is_ok(),
            "between old down and new up"
        );
    }
}
