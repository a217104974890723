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

type Scenario = fn(&Cluster, &str) -> anyhow::Result<Vec<Sample>>;

fn rolling_update(
    c: &Cluster,
    ns: &str,
    surge: &str,
    unavailable: &str,
    s_abs: i64,
    u_abs: i64,
) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: s_abs,
        max_unavailable: u_abs,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 8, "app:v1", rolling(surge, unavailable)),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    c.kubectl(&["-n", ns, "set", "image", "deployment/web", "app=app:v2"])?;
    std::thread::sleep(Duration::from_millis(300));
    watch(c, &r, &mut obs, true, |c| complete(c, ns, "web"))?;
    let last = obs.samples.last().context("no samples")?;
    ensure!(
        last.rs.len() == 2,
        "expected old + new ReplicaSet, got {:?}",
        last.rs
    );
    ensure!(
        last.rs[0].replicas == 0 && last.rs[1].replicas == 8,
        "old must be 0 and new 8: {:?}",
        last.rs
    );
    c.kubectl(&[
        "-n",
        ns,
        "rollout",
        "status",
        "deployment/web",
        "--timeout=30s",
    ])?;
    Ok(obs.samples)
}

fn scenario_scale(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 0,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 3, "app:v1", rolling("1", "0")),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    for n in ["7", "2", "5"] {
        c.kubectl(&[
            "-n",
            ns,
            "scale",
            "deployment/web",
            &format!("--replicas={n}"),
        ])?;
        watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
        let want: usize = n.parse()?;
        wait_for("active pods to match", TIMEOUT, || {
            Ok((active_pods(c, ns, "web")?.len() == want).then_some(()))
        })?;
    }
    Ok(obs.samples)
}

fn scenario_rolling_25(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    rolling_update(c, ns, "25%", "25%", 2, 2)
}

fn scenario_rolling_surge_only(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    rolling_update(c, ns, "2", "0", 2, 0)
}

fn scenario_rolling_unavailable_only(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    rolling_update(c, ns, "0", "3", 0, 3)
}

fn scenario_recreate(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 0,
        max_unavailable: 0,
        recreate: true,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 4, "app:v1", json!({"type": "Recreate"})),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    c.kubectl(&["-n", ns, "set", "image", "deployment/web", "app=app:v2"])?;
    std::thread::sleep(Duration::from_millis(300));
    watch(c, &r, &mut obs, true, |c| complete(c, ns, "web"))?;
    Ok(obs.samples)
}

fn scenario_pause_resume(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 1,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 4, "app:v1", rolling("1", "1")),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    c.kubectl(&["-n", ns, "rollout", "pause", "deployment/web"])?;
    c.kubectl(&["-n", ns, "set", "image", "deployment/web", "app=app:v2"])?;
    wait_for("the DeploymentPaused condition", TIMEOUT, || {
        let d = c.get_json(&["deployment", "web", "-n", ns])?;
        let paused = d["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|x| x["type"] == "Progressing" && x["reason"] == "DeploymentPaused")
        });
        Ok(paused.then_some(()))
    })?;
    let s = obs.observe(c, ns, "web")?.clone();
    ensure!(
        s.rs.len() == 1,
        "a paused Deployment must not create a new ReplicaSet: {:?}",
        s.rs
    );
    c.kubectl(&["-n", ns, "rollout", "resume", "deployment/web"])?;
    watch(c, &r, &mut obs, true, |c| complete(c, ns, "web"))?;
    ensure!(
        obs.samples.last().is_some_and(|s| s.rs.len() == 2),
        "resume must roll out the new template"
    );
    Ok(obs.samples)
}

fn scenario_undo(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 1,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 4, "app:v1", rolling("1", "1")),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    for image in ["app:v2", "app:v3"] {
        c.kubectl(&[
            "-n",
            ns,
            "set",
            "image",
            "deployment/web",
            &format!("app={image}"),
        ])?;
        std::thread::sleep(Duration::from_millis(300));
        watch(c, &r, &mut obs, true, |c| complete(c, ns, "web"))?;
    }
    c.kubectl(&["-n", ns, "rollout", "undo", "deployment/web"])?;
    std::thread::sleep(Duration::from_millis(300));
    watch(c, &r, &mut obs, true, |c| complete(c, ns, "web"))?;
    c.kubectl(&[
        "-n",
        ns,
        "rollout",
        "undo",
        "deployment/web",
        "--to-revision=1",
    ])?;
    std::thread::sleep(Duration::from_millis(300));
    watch(c, &r, &mut obs, true, |c| complete(c, ns, "web"))?;
    let rs = c.get_json(&["replicasets", "-n", ns])?;
    let items = rs["items"].as_array().cloned().unwrap_or_default();
    ensure!(
        items.len() == 3,
        "undo must reuse ReplicaSets, found {}",
        items.len()
    );
    let d = c.get_json(&["deployment", "web", "-n", ns])?;
    ensure!(
        d["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v1",
        "--to-revision=1 restores app:v1"
    );
    let newest = items
        .iter()
        .find(|x| x["spec"]["replicas"].as_i64() == Some(4))
        .context("a ReplicaSet with all replicas")?;
    ensure!(
        newest["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "5",
        "the restored ReplicaSet gets revision max+1 = 5: {}",
        newest["metadata"]["annotations"]
    );
    Ok(obs.samples)
}

fn scenario_pod_replaced(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 0,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 3, "app:v1", rolling("1", "0")),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    let pods = active_pods(c, ns, "web")?;
    let victim = pods
        .first()
        .and_then(|p| p["metadata"]["name"].as_str())
        .context("a pod")?
        .to_string();
    c.kubectl(&["-n", ns, "delete", "pod", &victim, "--wait=false"])?;
    wait_for("a replacement pod", TIMEOUT, || {
        let pods = active_pods(c, ns, "web")?;
        let replaced = pods.len() == 3
            && pods
                .iter()
                .all(|p| p["metadata"]["name"] != victim.as_str());
        Ok(replaced.then_some(()))
    })?;
    Ok(obs.samples)
}

fn scenario_cascade(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 0,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 2, "app:v1", rolling("1", "0")),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    c.kubectl(&["-n", ns, "delete", "deployment", "web", "--wait=false"])?;
    wait_for("ReplicaSets and pods to be collected", TIMEOUT, || {
        let rs = c.get_json(&["replicasets", "-n", ns])?;
        let none_rs = rs["items"].as_array().is_none_or(Vec::is_empty);
        Ok((none_rs && active_pods(c, ns, "web")?.is_empty()).then_some(()))
    })?;
    Ok(obs.samples)
}

fn apply_patched(
    c: &Cluster,
    ns: &str,
    name: &str,
    replicas: i64,
    strategy: Value,
    patch: impl FnOnce(&mut Value),
) -> anyhow::Result<()> {
    let mut d: Value = serde_json::from_str(&deployment(ns, name, replicas, "app:v1", strategy))?;
    patch(&mut d);
    c.kubectl_stdin(&["apply", "-f", "-"], &d.to_string())?;
    Ok(())
}

/// Rolls `name` to a template whose pods never become Ready.
fn roll_to_never_ready(c: &Cluster, ns: &str, name: &str) -> anyhow::Result<()> {
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {"sim.kcm-rs.io/never-ready": "true"}},
        "spec": {"containers": [{"name": "app", "image": "app:broken"}]}}}});
    c.kubectl(&[
        "-n",
        ns,
        "patch",
        &format!("deployment/{name}"),
        "--type=strategic",
        "-p",
        &patch.to_string(),
    ])?;
    Ok(())
}

fn progressing_reason(c: &Cluster, ns: &str, name: &str) -> anyhow::Result<Option<String>> {
    let d = c.get_json(&["deployment", name, "-n", ns])?;
    Ok(d["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|x| x["type"] == "Progressing"))
        .and_then(|x| x["reason"].as_str().map(str::to_string)))
}

fn scenario_progress_deadline(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 0,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    apply_patched(c, ns, "web", 3, rolling("1", "0"), |d| {
        d["spec"]["progressDeadlineSeconds"] = json!(3)
    })?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    roll_to_never_ready(c, ns, "web")?;
    watch(c, &r, &mut obs, true, |c| {
        Ok(progressing_reason(c, ns, "web")?.as_deref() == Some("ProgressDeadlineExceeded"))
    })?;
    let last = obs.observe(c, ns, "web")?.clone();
    ensure!(
        last.rs.iter().map(|x| x.replicas).sum::<i64>() == 4,
        "stalled at the surge limit (3 old + 1 new): {:?}",
        last.rs
    );
    let status = c.kubectl(&[
        "-n",
        ns,
        "rollout",
        "status",
        "deployment/web",
        "--timeout=10s",
    ]);
    ensure!(
        status.is_err(),
        "kubectl rollout status must fail on an exceeded progress deadline"
    );
    Ok(obs.samples)
}

fn scenario_proportional_scaling(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 3,
        max_unavailable: 2,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 10, "app:v1", rolling("3", "2")),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    roll_to_never_ready(c, ns, "web")?;
    // Stalled: old 8 (10 − maxUnavailable), new 5 (13 − 8).
    let stalled = wait_for("the rollout to stall", TIMEOUT, || {
        let s = obs.observe(c, ns, "web")?.clone();
        Ok((s.rs.len() == 2 && s.rs[0].replicas == 8 && s.rs[1].replicas == 5).then_some(s))
    })?;
    check(&r, &stalled, true).map_err(anyhow::Error::msg)?;
    c.kubectl(&["-n", ns, "scale", "deployment/web", "--replicas=20"])?;
    // maxSurge is an absolute 3, so 13 → 23 (20 + 3): the 10 extra replicas are split in
    // proportion to 8:5 with upstream's rounding, round(8·23/13) = 14 and round(5·23/13) = 9.
    let scaled = wait_for("proportional scaling", TIMEOUT, || {
        let s = obs.observe(c, ns, "web")?.clone();
        Ok((s.rs.iter().map(|x| x.replicas).sum::<i64>() == 23).then_some(s))
    })?;
    check(&r, &scaled, false).map_err(anyhow::Error::msg)?;
    ensure!(
        (scaled.rs[0].replicas, scaled.rs[1].replicas) == (14, 9),
        "old 14, new 9: {:?}",
        scaled.rs
    );
    Ok(obs.samples)
}

fn scenario_min_ready_seconds(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 0,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    apply_patched(c, ns, "web", 2, rolling("1", "0"), |d| {
        d["spec"]["minReadySeconds"] = json!(2)
    })?;
    let mut saw_ready_not_available = false;
    watch(c, &r, &mut obs, false, |c| {
        let d = c.get_json(&["deployment", "web", "-n", ns])?;
        let ready = d["status"]["readyReplicas"].as_i64().unwrap_or(0);
        let available = d["status"]["availableReplicas"].as_i64().unwrap_or(0);
        saw_ready_not_available |= ready > available;
        complete(c, ns, "web")
    })?;
    ensure!(
        saw_ready_not_available,
        "with minReadySeconds=2, pods are Ready before they count as available"
    );
    Ok(obs.samples)
}

fn scenario_revision_history_limit(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 0,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    apply_patched(c, ns, "web", 2, rolling("1", "0"), |d| {
        d["spec"]["revisionHistoryLimit"] = json!(1)
    })?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    for image in ["app:v2", "app:v3", "app:v4"] {
        c.kubectl(&[
            "-n",
            ns,
            "set",
            "image",
            "deployment/web",
            &format!("app={image}"),
        ])?;
        std::thread::sleep(Duration::from_millis(300));
        watch(c, &r, &mut obs, true, |c| complete(c, ns, "web"))?;
    }
    wait_for(
        "old ReplicaSets beyond the limit to be deleted",
        TIMEOUT,
        || {
            let rs = c.get_json(&["replicasets", "-n", ns])?;
            Ok((rs["items"].as_array().map(Vec::len) == Some(2)).then_some(()))
        },
    )?;
    Ok(obs.samples)
}

fn scenario_adopt_release(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 0,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 2, "app:v1", rolling("1", "0")),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    // Release: a pod relabelled out of the selector loses its owner reference and is replaced.
    let pod = active_pods(c, ns, "web")?
        .first()
        .and_then(|p| p["metadata"]["name"].as_str().map(str::to_string))
        .context("a pod")?;
    c.kubectl(&[
        "-n",
        ns,
        "label",
        "pod",
        &pod,
        "app=elsewhere",
        "--overwrite",
    ])?;
    wait_for("the pod to be released and replaced", TIMEOUT, || {
        let p = c.get_json(&["pod", &pod, "-n", ns])?;
        let released = p["metadata"]["ownerReferences"]
            .as_array()
            .is_none_or(|o| o.iter().all(|x| x["controller"] != true));
        Ok((released && active_pods(c, ns, "web")?.len() == 2).then_some(()))
    })?;
    // Adoption: relabelled back, the orphan matches again and is adopted; one pod too many is deleted.
    c.kubectl(&["-n", ns, "label", "pod", &pod, "app=web", "--overwrite"])?;
    wait_for("adoption and scale-down back to 2", TIMEOUT, || {
        let pods = active_pods(c, ns, "web")?;
        let all_owned = pods.iter().all(|p| {
            p["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|o| o.iter().any(|x| x["controller"] == true))
        });
        Ok((pods.len() == 2 && all_owned).then_some(()))
    })?;
    Ok(obs.samples)
}

const SCENARIOS: &[(&str, Scenario)] = &[
    ("create-and-scale", scenario_scale),
    ("rolling-update-25pct", scenario_rolling_25),
    ("rolling-update-surge-only", scenario_rolling_surge_only),
    (
        "rolling-update-unavailable-only",
        scenario_rolling_unavailable_only,
    ),
    ("recreate", scenario_recreate),
    ("pause-resume", scenario_pause_resume),
    ("rollout-undo", scenario_undo),
    ("pod-deleted-is-replaced", scenario_pod_replaced),
    ("deployment-deletion-cascades", scenario_cascade),
    ("progress-deadline-exceeded", scenario_progress_deadline),
    (
        "proportional-scaling-stalled-rollout",
        scenario_proportional_scaling,
    ),
    ("min-ready-seconds", scenario_min_ready_seconds),
    ("revision-history-limit", scenario_revision_history_limit),
    ("adopt-and-release-pods", scenario_adopt_release),
];

/// Two kcm instances with leader election: only the leader acts; after it is killed the other
/// takes over and keeps reconciling.
fn scenario_leader_election(dir: &std::path::Path) -> anyhow::Result<()> {
    let c = Cluster::start(
        &dir.join("leader-election"),
        &["--nodes", "1", "--pod-ready-after", "200ms"],
    )?;
    let fast = [
        "--leader-elect-lease-duration=3s",
        "--leader-elect-renew-deadline=2s",
        "--leader-elect-retry-period=500ms",
    ];
    let mut a = c.start_kcm("kcm-a", &fast)?;
    let holder = wait_for("a leader", TIMEOUT, || {
        let lease = c.get_json(&["lease", "kube-controller-manager", "-n", "kube-system"]);
        Ok(lease
            .ok()
            .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string)))
    })?;
    let mut b = c.start_kcm("kcm-b", &fast)?;
    create_namespace(&c, "le")?;
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment("le", "web", 2, "app:v1", rolling("1", "0")),
    )?;
    wait_for("the leader to reconcile", TIMEOUT, || {
        Ok(complete(&c, "le", "web")?.then_some(()))
    })?;
    a.kill();
    ensure!(b.is_running(), "the standby must keep running");
    let new_holder = wait_for("the standby to take over", TIMEOUT, || {
        let l = c.get_json(&["lease", "kube-controller-manager", "-n", "kube-system"])?;
        Ok(l["spec"]["holderIdentity"]
            .as_str()
            .filter(|h| *h != holder)
            .map(str::to_string))
    })?;
    c.kubectl(&["-n", "le", "scale", "deployment/web", "--replicas=4"])?;
    wait_for("the new leader to reconcile", TIMEOUT, || {
        Ok(complete(&c, "le", "web")?.then_some(()))
    })?;
    println!("    leader {holder} killed; {new_holder} took over and reconciled");
    let _ = b.terminate(Duration::from_secs(10));
    Ok(())
}

/// kcm killed with SIGKILL in the middle of a rollout and restarted converges without extra pods.
fn scenario_kcm_restart(
    c: &Cluster,
    kcm: &mut crate::cluster::Proc,
    ns: &str,
) -> anyhow::Result<Vec<Sample>> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: 1,
        max_unavailable: 0,
        recreate: false,
    };
    let mut obs = Observer::new(true);
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(ns, "web", 6, "app:v1", rolling("1", "0")),
    )?;
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    c.kubectl(&["-n", ns, "set", "image", "deployment/web", "app=app:v2"])?;
    std::thread::sleep(Duration::from_millis(800));
    kcm.kill();
    *kcm = c.start_kcm("kcm-restarted", &["--leader-elect=false"])?;
    watch(c, &r, &mut obs, true, |c| complete(c, ns, "web"))?;
    let pods = active_pods(c, ns, "web")?;
    ensure!(
        pods.len() == 6,
        "exactly 6 active pods after convergence, found {}",
        pods.len()
    );
    Ok(obs.samples)
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
