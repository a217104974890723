//! The e2e scenarios, each in its own namespace on the shared cluster (leader election gets a
//! cluster of its own).

use super::*;

pub(super) type Scenario = fn(&Cluster, &str) -> anyhow::Result<Vec<Sample>>;

fn rolling_update(
    c: &Cluster,
    ns: &str,
    surge: &str,
    unavailable: &str,
    s_abs: i64,
    u_abs: i64,
) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(
        c,
        ns,
        8,
        rolling(surge, unavailable),
        (s_abs, u_abs),
        |_| {},
    )?;
    roll_image(c, &r, &mut obs, "app:v2")?;
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
    let (r, mut obs) = start_web(c, ns, 3, rolling("1", "0"), (1, 0), |_| {})?;
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
    let (r, mut obs) = start_web(c, ns, 4, json!({"type": "Recreate"}), (0, 0), |_| {})?;
    roll_image(c, &r, &mut obs, "app:v2")?;
    Ok(obs.samples)
}

fn scenario_pause_resume(c: &Cluster, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 4, rolling("1", "1"), (1, 1), |_| {})?;
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
    let (r, mut obs) = start_web(c, ns, 4, rolling("1", "1"), (1, 1), |_| {})?;
    for image in ["app:v2", "app:v3"] {
        roll_image(c, &r, &mut obs, image)?;
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
    let (_r, obs) = start_web(c, ns, 3, rolling("1", "0"), (1, 0), |_| {})?;
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
    let (_r, obs) = start_web(c, ns, 2, rolling("1", "0"), (1, 0), |_| {})?;
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
    let (r, mut obs) = start_web(c, ns, 3, rolling("1", "0"), (1, 0), |d| {
        d["spec"]["progressDeadlineSeconds"] = json!(3)
    })?;
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
    let (r, mut obs) = start_web(c, ns, 10, rolling("3", "2"), (3, 2), |_| {})?;
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
    let (r, mut obs) = start_web(c, ns, 2, rolling("1", "0"), (1, 0), |d| {
        d["spec"]["revisionHistoryLimit"] = json!(1)
    })?;
    for image in ["app:v2", "app:v3", "app:v4"] {
        roll_image(c, &r, &mut obs, image)?;
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
    let (_r, obs) = start_web(c, ns, 2, rolling("1", "0"), (1, 0), |_| {})?;
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

pub(super) const SCENARIOS: &[(&str, Scenario)] = &[
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
pub(super) fn scenario_leader_election(dir: &std::path::Path) -> anyhow::Result<()> {
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
pub(super) fn scenario_kcm_restart(
    c: &Cluster,
    kcm: &mut crate::cluster::Proc,
    ns: &str,
) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 6, rolling("1", "0"), (1, 0), |_| {})?;
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
