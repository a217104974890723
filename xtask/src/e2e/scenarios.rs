//! The e2e scenarios, each in its own namespace on the shared cluster. Images come from
//! [`Ctx::images`] and waits from [`Ctx::timeout`], so the same steps run on kcm-testenv and on
//! a real cluster.

use super::images::never_ready_template_patch;
use super::*;
use crate::cluster::Proc;

/// A scenario: the context and its namespace; returns the rollout samples for the timeline.
pub(crate) type Scenario = fn(&Ctx, &str) -> anyhow::Result<Vec<Sample>>;

/// A scenario that stops, kills or starts kcm processes; gets the run's kcm (`None` once
/// stopped) and must leave one running when it returns.
pub(crate) type KcmScenario = fn(&Ctx, &mut Option<Proc>, &str) -> anyhow::Result<Vec<Sample>>;

/// The two kinds of scenario.
pub(crate) enum Kind {
    /// Needs a kcm running, whichever.
    Plain(Scenario),
    /// Needs the kcm processes of this run (skipped with `--no-kcm`).
    OwnKcm(KcmScenario),
    /// Needs the kcm processes of this run and the upstream control plane (skipped elsewhere).
    BesideUpstream(KcmScenario),
}

fn rolling_update(
    c: &Ctx,
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
    roll_image(c, &r, &mut obs, c.images.v(2))?;
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
        &c.kubectl_timeout(30),
    ])?;
    Ok(obs.samples)
}

fn scenario_scale(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 3, rolling("1", "0"), (1, 0), |_| {})?;
    for n in ["7", "2", "5"] {
        scale_web(c, ns, n)?;
        watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
        let want: usize = n.parse()?;
        wait_for("active pods to match", c.timeout(), || {
            Ok((active_pods(c, ns, "web")?.len() == want).then_some(()))
        })?;
    }
    Ok(obs.samples)
}

fn scenario_rolling_25(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    rolling_update(c, ns, "25%", "25%", 2, 2)
}

fn scenario_rolling_surge_only(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    rolling_update(c, ns, "2", "0", 2, 0)
}

fn scenario_rolling_unavailable_only(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    rolling_update(c, ns, "0", "3", 0, 3)
}

fn scenario_recreate(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 4, json!({"type": "Recreate"}), (0, 0), |_| {})?;
    roll_image(c, &r, &mut obs, c.images.v(2))?;
    Ok(obs.samples)
}

fn scenario_pause_resume(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 4, rolling("1", "1"), (1, 1), |_| {})?;
    c.kubectl(&["-n", ns, "rollout", "pause", "deployment/web"])?;
    let v2 = format!("app={}", c.images.v(2));
    c.kubectl(&["-n", ns, "set", "image", "deployment/web", &v2])?;
    wait_for("the DeploymentPaused condition", c.timeout(), || {
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

fn scenario_undo(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 4, rolling("1", "1"), (1, 1), |_| {})?;
    for v in [2, 3] {
        roll_image(c, &r, &mut obs, c.images.v(v))?;
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
        d["spec"]["template"]["spec"]["containers"][0]["image"] == c.images.v(1),
        "--to-revision=1 restores {}",
        c.images.v(1)
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

fn scenario_pod_replaced(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (_r, obs) = start_web(c, ns, 3, rolling("1", "0"), (1, 0), |_| {})?;
    let pods = active_pods(c, ns, "web")?;
    let victim = pods
        .first()
        .and_then(|p| p["metadata"]["name"].as_str())
        .context("a pod")?
        .to_string();
    c.kubectl(&["-n", ns, "delete", "pod", &victim, "--wait=false"])?;
    wait_for("a replacement pod", c.timeout(), || {
        let pods = active_pods(c, ns, "web")?;
        let replaced = pods.len() == 3
            && pods
                .iter()
                .all(|p| p["metadata"]["name"] != victim.as_str());
        Ok(replaced.then_some(()))
    })?;
    Ok(obs.samples)
}

fn scenario_cascade(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (_r, obs) = start_web(c, ns, 2, rolling("1", "0"), (1, 0), |_| {})?;
    c.kubectl(&["-n", ns, "delete", "deployment", "web", "--wait=false"])?;
    wait_for("ReplicaSets and pods to be collected", c.timeout(), || {
        let rs = c.get_json(&["replicasets", "-n", ns])?;
        let none_rs = rs["items"].as_array().is_none_or(Vec::is_empty);
        Ok((none_rs && active_pods(c, ns, "web")?.is_empty()).then_some(()))
    })?;
    Ok(obs.samples)
}

fn apply_patched(
    c: &Ctx,
    ns: &str,
    name: &str,
    replicas: i64,
    strategy: Value,
    patch: impl FnOnce(&mut Value),
) -> anyhow::Result<()> {
    let mut d: Value =
        serde_json::from_str(&deployment(ns, name, replicas, c.images.v(1), strategy))?;
    patch(&mut d);
    c.kubectl_stdin(&["apply", "-f", "-"], &d.to_string())?;
    Ok(())
}

/// Rolls `name` to a template whose pods run but never become Ready (the testenv annotation
/// and a readinessProbe that cannot succeed: see [`never_ready_template_patch`]).
pub(crate) fn roll_to_never_ready(c: &Ctx, ns: &str, name: &str) -> anyhow::Result<()> {
    let patch = never_ready_template_patch(c.images);
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

fn scenario_progress_deadline(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
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

fn scenario_proportional_scaling(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 10, rolling("3", "2"), (3, 2), |_| {})?;
    roll_to_never_ready(c, ns, "web")?;
    // Stalled: old 8 (10 − maxUnavailable), new 5 (13 − 8).
    let stalled = wait_for("the rollout to stall", c.timeout(), || {
        let s = obs.observe(c, ns, "web")?.clone();
        Ok((s.rs.len() == 2 && s.rs[0].replicas == 8 && s.rs[1].replicas == 5).then_some(s))
    })?;
    check(&r, &stalled, true).map_err(anyhow::Error::msg)?;
    c.kubectl(&["-n", ns, "scale", "deployment/web", "--replicas=20"])?;
    // maxSurge is an absolute 3, so 13 → 23 (20 + 3): the 10 extra replicas are split in
    // proportion to 8:5 with upstream's rounding, round(8·23/13) = 14 and round(5·23/13) = 9.
    let scaled = wait_for("proportional scaling", c.timeout(), || {
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

fn scenario_min_ready_seconds(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
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

fn scenario_revision_history_limit(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 2, rolling("1", "0"), (1, 0), |d| {
        d["spec"]["revisionHistoryLimit"] = json!(1)
    })?;
    for v in [2, 3, 4] {
        roll_image(c, &r, &mut obs, c.images.v(v))?;
    }
    wait_for(
        "old ReplicaSets beyond the limit to be deleted",
        c.timeout(),
        || {
            let rs = c.get_json(&["replicasets", "-n", ns])?;
            Ok((rs["items"].as_array().map(Vec::len) == Some(2)).then_some(()))
        },
    )?;
    Ok(obs.samples)
}

fn scenario_adopt_release(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
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
    wait_for("the pod to be released and replaced", c.timeout(), || {
        let p = c.get_json(&["pod", &pod, "-n", ns])?;
        let released = p["metadata"]["ownerReferences"]
            .as_array()
            .is_none_or(|o| o.iter().all(|x| x["controller"] != true));
        Ok((released && active_pods(c, ns, "web")?.len() == 2).then_some(()))
    })?;
    // Adoption: relabelled back, the orphan matches again and is adopted; one pod too many is deleted.
    c.kubectl(&["-n", ns, "label", "pod", &pod, "app=web", "--overwrite"])?;
    wait_for("adoption and scale-down back to 2", c.timeout(), || {
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

/// Every scenario in the order they run. The three that own kcm processes come last: the
/// leader-election ones stop the run's kcm while their candidates run.
pub(crate) const ALL: &[(&str, Kind)] = &[
    ("create-and-scale", Kind::Plain(scenario_scale)),
    ("rolling-update-25pct", Kind::Plain(scenario_rolling_25)),
    (
        "rolling-update-surge-only",
        Kind::Plain(scenario_rolling_surge_only),
    ),
    (
        "rolling-update-unavailable-only",
        Kind::Plain(scenario_rolling_unavailable_only),
    ),
    ("recreate", Kind::Plain(scenario_recreate)),
    ("pause-resume", Kind::Plain(scenario_pause_resume)),
    ("rollout-undo", Kind::Plain(scenario_undo)),
    (
        "pod-deleted-is-replaced",
        Kind::Plain(scenario_pod_replaced),
    ),
    (
        "deployment-deletion-cascades",
        Kind::Plain(scenario_cascade),
    ),
    (
        "progress-deadline-exceeded",
        Kind::Plain(scenario_progress_deadline),
    ),
    (
        "proportional-scaling-stalled-rollout",
        Kind::Plain(scenario_proportional_scaling),
    ),
    ("min-ready-seconds", Kind::Plain(scenario_min_ready_seconds)),
    (
        "sample-controller",
        Kind::Plain(super::sample_controller::scenario),
    ),
    (
        "revision-history-limit",
        Kind::Plain(scenario_revision_history_limit),
    ),
    (
        "adopt-and-release-pods",
        Kind::Plain(scenario_adopt_release),
    ),
    // Ports of upstream's Deployment and ReplicaSet integration tests (it-<test name>).
    (
        "it-new-deployment",
        Kind::Plain(super::ported_deployment::new_deployment_test),
    ),
    (
        "it-deployment-rolling-update",
        Kind::Plain(super::ported_deployment::deployment_rolling_update),
    ),
    (
        "it-deployment-selector-immutability",
        Kind::Plain(super::ported_deployment::deployment_selector_immutability),
    ),
    (
        "it-paused-deployment",
        Kind::Plain(super::ported_deployment::paused_deployment),
    ),
    (
        "it-scale-paused-deployment",
        Kind::Plain(super::ported_deployment::scale_paused_deployment),
    ),
    (
        "it-deployment-hash-collision",
        Kind::Plain(super::ported_deployment::deployment_hash_collision),
    ),
    (
        "it-failed-deployment",
        Kind::Plain(super::ported_deployment::failed_deployment),
    ),
    (
        "it-overlapping-deployments",
        Kind::Plain(super::ported_deployment::overlapping_deployments),
    ),
    (
        "it-scaled-rollout-deployment",
        Kind::Plain(super::ported_deployment::scaled_rollout_deployment),
    ),
    (
        "it-spec-replicas-change",
        Kind::Plain(super::ported_deployment::spec_replicas_change),
    ),
    (
        "it-deployment-available-condition",
        Kind::Plain(super::ported_deployment::deployment_available_condition),
    ),
    (
        "it-general-replica-set-adoption",
        Kind::Plain(super::ported_deployment_adoption::general_replica_set_adoption),
    ),
    (
        "it-deployment-scale-subresource",
        Kind::Plain(super::ported_deployment_adoption::deployment_scale_subresource),
    ),
    (
        "it-rs-orphaning-and-adoption-when-labels-change",
        Kind::Plain(super::ported_deployment_adoption::replica_set_orphaning_and_adoption),
    ),
    (
        "it-adoption",
        Kind::Plain(super::ported_replicaset::adoption),
    ),
    (
        "it-rs-selector-immutability",
        Kind::Plain(super::ported_replicaset::rs_selector_immutability),
    ),
    (
        "it-rs-spec-replicas-change",
        Kind::Plain(super::ported_replicaset::rs_spec_replicas_change),
    ),
    (
        "it-deleting-and-failed-pods",
        Kind::Plain(super::ported_replicaset::deleting_and_failed_pods),
    ),
    (
        "it-pod-deletion-cost",
        Kind::Plain(super::ported_replicaset::pod_deletion_cost),
    ),
    (
        "it-overlapping-rss",
        Kind::Plain(super::ported_replicaset::overlapping_rss),
    ),
    (
        "it-pod-orphaning-and-adoption-when-labels-change",
        Kind::Plain(super::ported_replicaset::pod_orphaning_and_adoption),
    ),
    (
        "it-general-pod-adoption",
        Kind::Plain(super::ported_replicaset::general_pod_adoption),
    ),
    (
        "it-ready-and-available-replicas",
        Kind::Plain(super::ported_replicaset::ready_and_available_replicas),
    ),
    (
        "it-rs-scale-subresource",
        Kind::Plain(super::ported_replicaset::rs_scale_subresource),
    ),
    (
        "it-extra-pods-adoption-and-deletion",
        Kind::Plain(super::ported_replicaset::extra_pods_adoption_and_deletion),
    ),
    (
        "it-fully-labeled-replicas",
        Kind::Plain(super::ported_replicaset::fully_labeled_replicas),
    ),
    (
        "it-replica-sets-apps-v1-default-gc-policy",
        Kind::Plain(super::ported_replicaset::replica_sets_default_gc_policy),
    ),
    (
        "kcm-killed-mid-rollout",
        Kind::OwnKcm(super::kcm_processes::scenario_kcm_restart),
    ),
    (
        "leader-election",
        Kind::OwnKcm(super::kcm_processes::scenario_leader_election),
    ),
    (
        "sharded-replicas",
        Kind::OwnKcm(super::sharded::scenario_sharded),
    ),
    (
        "beside-upstream-controller-manager",
        Kind::BesideUpstream(super::beside_upstream::scenario_beside_upstream),
    ),
    (
        "metrics-over-https-with-delegated-auth",
        Kind::BesideUpstream(super::secure_metrics::scenario_secure_metrics),
    ),
];
