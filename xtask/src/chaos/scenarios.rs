//! The scenarios a schedule runs: the e2e ones where they fit (by name, from the e2e table), and
//! three that only chaos needs (a scale in the middle of a rollout, proportional scaling across
//! two old ReplicaSets, a node failure).

use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::json;

use super::plan::ScenarioKind;
use crate::cluster::wait_for;
use crate::e2e::scenarios::{ALL, Kind, roll_to_never_ready};
use crate::e2e::{Ctx, active_pods, complete, rolling, scale_web, set_web_image, start_web, watch};
use crate::observe::Sample;

/// Runs `kind` in namespace `ns`; returns the samples of its Deployment for the timeline.
pub(crate) fn run(c: &Ctx, kind: ScenarioKind, ns: &str) -> anyhow::Result<Vec<Sample>> {
    match kind {
        ScenarioKind::RollingUpdate => e2e(c, "rolling-update-25pct", ns),
        ScenarioKind::Recreate => e2e(c, "recreate", ns),
        ScenarioKind::PauseResume => e2e(c, "pause-resume", ns),
        ScenarioKind::Rollback => e2e(c, "rollout-undo", ns),
        ScenarioKind::Adoption => e2e(c, "adopt-and-release-pods", ns),
        ScenarioKind::Deletion => e2e(c, "deployment-deletion-cascades", ns),
        ScenarioKind::HistoryLimit => e2e(c, "revision-history-limit", ns),
        ScenarioKind::ScaleMidRollout => scale_mid_rollout(c, ns),
        ScenarioKind::ProportionalTwoOld => proportional_two_old(c, ns),
        ScenarioKind::NodeFailure => node_failure(c, ns),
    }
}

/// The plain e2e scenario `name`, assertions and invariant checks included.
fn e2e(c: &Ctx, name: &str, ns: &str) -> anyhow::Result<Vec<Sample>> {
    match ALL.iter().find(|(n, _)| *n == name).map(|(_, k)| k) {
        Some(Kind::Plain(f)) => f(c, ns),
        _ => bail!("no plain e2e scenario named {name}"),
    }
}

/// 6 replicas rolled to v2 and scaled to 10 while the rollout runs, then rolled to v3 and scaled
/// to 4 while that rollout runs.
fn scale_mid_rollout(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 6, rolling("2", "1"), (2, 1), |_| {})?;
    set_web_image(c, ns, c.images.v(2))?;
    std::thread::sleep(Duration::from_millis(400));
    scale_web(c, ns, 10)?;
    // Availability is checked against the new size only once the scale-up is done.
    watch(c, &r, &mut obs, false, |cl| complete(cl, ns, "web"))?;
    set_web_image(c, ns, c.images.v(3))?;
    std::thread::sleep(Duration::from_millis(300));
    scale_web(c, ns, 4)?;
    // The surge bound is against the new size only once kcm has seen it: until then (kcm may be
    // down) the ReplicaSets legitimately still sum to the old size.
    wait_for("kcm to observe the scale-down", c.timeout(), || {
        let d = c.get_json(&["deployment", "web", "-n", ns])?;
        let seen =
            d["status"]["observedGeneration"].as_i64() >= d["metadata"]["generation"].as_i64();
        Ok(seen.then_some(()))
    })?;
    // Only the surge bound: upstream's rolling update does not keep the availability bound
    // across a scale-down in the middle of a rollout. The new ReplicaSet's status still counts
    // the available pods the scale-down is about to remove, so `reconcileOldReplicaSets` may
    // scale the old ReplicaSets past it (kcm-deployment's
    // `reconcile_old_replica_sets_counts_the_surplus_a_scale_down_has_not_yet_removed`).
    watch(c, &r, &mut obs, false, |cl| complete(cl, ns, "web"))?;
    Ok(obs.samples)
}

/// Two stalled rollouts leave two old ReplicaSets beside the new one; a scale-up is split among
/// the three in proportion, within maxSurge; a rollout to a healthy template then completes.
fn proportional_two_old(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 10, rolling("3", "2"), (3, 2), |_| {})?;
    roll_to_never_ready(c, ns, "web")?;
    wait_for("the first stalled rollout", c.timeout(), || {
        let s = obs.observe(c, ns, "web")?.clone();
        Ok((s.rs.len() == 2 && s.rs.iter().map(|x| x.replicas).sum::<i64>() == 13).then_some(()))
    })?;
    set_web_image(c, ns, c.images.v(3))?;
    wait_for("a third ReplicaSet", c.timeout(), || {
        let s = obs.observe(c, ns, "web")?.clone();
        Ok((s.rs.len() == 3 && s.rs.iter().map(|x| x.replicas).sum::<i64>() == 13).then_some(()))
    })?;
    scale_web(c, ns, 20)?;
    // Only the surge bound holds while the new pods start.
    wait_for("proportional scaling to 23", c.timeout(), || {
        let s = obs.observe(c, ns, "web")?.clone();
        crate::e2e::check(&r, &s, false).map_err(anyhow::Error::msg)?;
        Ok((s.desired == 20 && s.rs.iter().map(|x| x.replicas).sum::<i64>() == 23).then_some(()))
    })?;
    // A healthy template: drop the never-ready annotation and probe, new image.
    let d = c.get_json(&["deployment", "web", "-n", ns])?;
    let mut template = d["spec"]["template"].clone();
    // A merge patch removes a key given as null (an empty object would remove nothing).
    if let Some(a) = template["metadata"]["annotations"].as_object_mut() {
        a.values_mut().for_each(|v| *v = serde_json::Value::Null);
    }
    template["spec"]["containers"][0]["image"] = json!(c.images.v(4));
    if let Some(ctr) = template["spec"]["containers"][0].as_object_mut() {
        ctr.remove("readinessProbe");
    }
    c.kubectl(&[
        "-n",
        ns,
        "patch",
        "deployment/web",
        "--type=merge",
        "-p",
        &json!({"spec": {"template": template}}).to_string(),
    ])?;
    std::thread::sleep(Duration::from_millis(300));
    watch(c, &r, &mut obs, false, |cl| complete(cl, ns, "web"))?;
    Ok(obs.samples)
}

fn node_down(c: &Ctx, node: &str, down: bool) -> anyhow::Result<()> {
    let annotation = if down {
        format!("{NODE_DOWN}=true")
    } else {
        format!("{NODE_DOWN}-")
    };
    c.kubectl(&["annotate", "node", node, &annotation, "--overwrite"])?;
    Ok(())
}

/// testenv's node-down annotation (`testenv/src/sim/node_control.rs`).
const NODE_DOWN: &str = "sim.kcm-rs.io/node-down";

/// A node goes down under a running Deployment (its pods turn unready), a rollout runs while it
/// is down, and the node comes back: the rollout completes with exactly the desired pods.
fn node_failure(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (r, mut obs) = start_web(c, ns, 6, rolling("2", "1"), (2, 1), |_| {})?;
    let pods = active_pods(c, ns, "web")?;
    let node = pods
        .iter()
        .find_map(|p| p["spec"]["nodeName"].as_str())
        .context("a scheduled pod")?
        .to_string();
    node_down(c, &node, true)?;
    std::thread::sleep(Duration::from_millis(1500));
    set_web_image(c, ns, c.images.v(2))?;
    // Pods on the down node never become available: only the surge bound holds meanwhile.
    let until = std::time::Instant::now() + Duration::from_secs(6);
    watch(c, &r, &mut obs, false, |_| {
        Ok(std::time::Instant::now() >= until)
    })?;
    node_down(c, &node, false)?;
    watch(c, &r, &mut obs, false, |cl| complete(cl, ns, "web"))?;
    Ok(obs.samples)
}
