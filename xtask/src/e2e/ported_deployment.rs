//! Ports of upstream's Deployment integration tests (test/integration/deployment in
//! k8s.io/kubernetes v1.37.2): their steps and assertions, run against whichever controllers
//! the cluster has (kcm, or kube-controller-manager's own under `cargo xtask diff`).
//!
//! Adaptations (upstream runs the controllers without nodes and marks pods Ready by hand):
//! - Where upstream marks pods Ready as soon as they exist, the kubelets (simulated or real) run
//!   them and make them Ready. Where a test needs pods that stay unready, or readiness set at a
//!   chosen moment, the template is held (see `ported_support`) and the scenario writes the
//!   Ready condition itself.
//! - Images are the cluster's (`app:v1` … or pause tags) rather than `fakeimage`; only four
//!   exist on real clusters, so TestScaledRolloutDeployment's fifth template differs from the
//!   first by an annotation.
//! - Controllers already run when a scenario starts; "expect no new ReplicaSet" checks wait for
//!   the controller to observe the Deployment's generation first.
//! - Owners of another kind are Leases, not StatefulSet uids that exist nowhere: see
//!   `ported_support::foreign_owner`.
//!
//! Not ported: TestTerminatingReplicasDeploymentStatus, TestRecreateDeploymentForPodReplacement
//! and TestRollingUpdateAndProportionalScalingForDeploymentPodReplacement switch the
//! DeploymentReplicaSetTerminatingReplicas gate on and off within one test (our controllers get
//! their gates once, at start) and keep pods terminating on a node that does not exist, which
//! the real control plane's pod garbage collector removes. The ReplicaSet and adoption tests are
//! in `ported_deployment_adoption.rs`.

use std::time::SystemTime;

use anyhow::ensure;
use serde_json::{Value, json};

use super::ported_deployment_util::{Counts, DESIRED_REPLICAS, HASH_LABEL, Tester, new_deployment};
use super::ported_support::{
    container, expect_selector_immutable, hold, int, merge_patch, name, pods, set_ready, uid,
    wait_rs_stable,
};
use super::{Ctx, Observer, Sample};

/// kubectl's annotation holding the last applied configuration.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The template of `image`, held (pods never scheduled, Ready only by hand) or not.
fn template_patch(image: &str, held: bool) -> Value {
    let mut t = json!({"spec": {"containers": [container(image)], "nodeSelector": null}});
    if held {
        hold(&mut t);
    }
    json!({"spec": {"template": t}})
}

/// The hash of a ReplicaSet, which its label, selector and template label must agree on and
/// its name end with (upstream's `checkRSHashLabels`).
fn check_rs_hash_labels(rs: &Value) -> anyhow::Result<String> {
    let label = rs["metadata"]["labels"][HASH_LABEL]
        .as_str()
        .unwrap_or_default();
    let selector = rs["spec"]["selector"]["matchLabels"][HASH_LABEL]
        .as_str()
        .unwrap_or_default();
    let template = rs["spec"]["template"]["metadata"]["labels"][HASH_LABEL]
        .as_str()
        .unwrap_or_default();
    let n = name(rs);
    ensure!(
        label == selector && selector == template,
        "mismatching hash values in ReplicaSet {n}: label {label:?}, selector {selector:?}, template {template:?}"
    );
    ensure!(
        !label.is_empty(),
        "ReplicaSet {n} has no {HASH_LABEL} label"
    );
    ensure!(
        n.ends_with(label),
        "ReplicaSet {n} does not end with its hash {label}"
    );
    Ok(label.to_string())
}

/// The one hash every pod carries (upstream's `checkPodsHashLabel`).
fn check_pods_hash_label(pods: &[Value]) -> anyhow::Result<String> {
    ensure!(!pods.is_empty(), "no pods given");
    let mut hash = String::new();
    for p in pods {
        let h = p["metadata"]["labels"][HASH_LABEL]
            .as_str()
            .unwrap_or_default();
        ensure!(!h.is_empty(), "pod {} has no {HASH_LABEL} label", name(p));
        if hash.is_empty() {
            hash = h.to_string();
        }
        ensure!(h == hash, "pod {} has hash {h}, others {hash}", name(p));
    }
    Ok(hash)
}

/// Upstream's TestNewDeployment.
pub(super) fn new_deployment_test(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let replicas = 20;
    let mut d = new_deployment("test-new-deployment", replicas, c.images.v(1));
    d["spec"]["minReadySeconds"] = json!(4);
    d["metadata"]["annotations"] = json!({"test": "should-copy-to-replica-set",
                                          LAST_APPLIED: "should-not-copy-to-replica-set"});
    let t = Tester::create(c, ns, d)?;
    t.wait_revision_and_image("1", c.images.v(1))?;
    t.wait_complete()?;
    let rs = t.expect_new_rs()?;
    let annotations = &rs["metadata"]["annotations"];
    ensure!(
        annotations["test"] == "should-copy-to-replica-set",
        "expected the new ReplicaSet to get the Deployment's annotations, got {annotations}"
    );
    ensure!(
        annotations[LAST_APPLIED]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "the new ReplicaSet must not get the last-applied annotation: {annotations}"
    );
    let rs_hash = check_rs_hash_labels(&rs)?;
    let all = pods(c, ns, "name=test")?;
    ensure!(
        all.len() as i64 == replicas,
        "expected {replicas} pods, got {}",
        all.len()
    );
    let pod_hash = check_pods_hash_label(&all)?;
    ensure!(
        rs_hash == pod_hash,
        "ReplicaSet hash {rs_hash} but pod hash {pod_hash}"
    );
    Ok(Vec::new())
}

/// Upstream's TestDeploymentRollingUpdate: roll out, then roll over a rollout that cannot finish.
pub(super) fn deployment_rolling_update(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut d = new_deployment("test-rolling-update-deployment", 20, c.images.v(1));
    d["spec"]["minReadySeconds"] = json!(4);
    d["spec"]["strategy"]["rollingUpdate"] = json!({"maxUnavailable": "25%", "maxSurge": "25%"});
    let t = Tester::create(c, ns, d)?;
    let mut obs = Observer::new(true);
    t.wait_revision_and_image("1", c.images.v(1))?;
    t.wait_complete()?;
    // 25 % of 20, rounded up for the surge and down for unavailability.
    let (surge, unavailable) = (5, 5);
    t.update(template_patch(c.images.v(2), false))?;
    t.wait_revision_and_image("2", c.images.v(2))?;
    t.wait_complete_rolling(&mut obs, surge, unavailable)?;
    // Revision 3's pods are never Ready, so its rollout cannot finish before revision 4.
    t.update(template_patch(c.images.v(3), true))?;
    t.wait_revision_and_image("3", c.images.v(3))?;
    t.update(template_patch(c.images.v(4), false))?;
    t.wait_revision_and_image("4", c.images.v(4))?;
    t.wait_complete_rolling(&mut obs, surge, unavailable)?;
    for old in t.old_rss()? {
        ensure!(
            int(&old["spec"]["replicas"]) == 0,
            "expected old ReplicaSet {} to have 0 replicas, got {}",
            name(&old),
            old["spec"]["replicas"]
        );
    }
    Ok(obs.samples)
}

/// Upstream's TestDeploymentSelectorImmutability (an API validation test: no controller acts).
pub(super) fn deployment_selector_immutability(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let t = Tester::create(
        c,
        ns,
        new_deployment("test-deployment-selector-immutability", 20, c.images.v(1)),
    )?;
    let mut d = t.get()?;
    let labels = json!({"name_apps_v1": "test_apps_v1"});
    d["spec"]["selector"]["matchLabels"] = labels.clone();
    d["spec"]["template"]["metadata"]["labels"] = labels;
    expect_selector_immutable(c, ns, &d)?;
    Ok(Vec::new())
}

/// Upstream's TestPausedDeployment: a paused Deployment creates no ReplicaSet and does not roll
/// out a template change.
pub(super) fn paused_deployment(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut d = new_deployment("test-paused-deployment", 1, c.images.v(1));
    d["spec"]["paused"] = json!(true);
    d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(1);
    let t = Tester::create(c, ns, d)?;
    t.wait_observed(1)?;
    t.expect_no_new_rs()?;
    let generation = t.update(json!({"spec": {"paused": false}}))?;
    t.wait_observed(generation)?;
    t.wait_revision_and_image("1", c.images.v(1))?;
    t.wait_complete()?;
    t.expect_new_rs()?;
    let generation = t.update(json!({"spec": {"paused": true}}))?;
    t.wait_observed(generation)?;
    let generation =
        t.update(json!({"spec": {"template": {"spec": {"terminationGracePeriodSeconds": 0}}}}))?;
    t.wait_observed(generation)?;
    t.expect_no_new_rs()?;
    let old = t.old_rss()?;
    ensure!(
        old.len() == 1,
        "expected one old ReplicaSet, got {}",
        old.len()
    );
    let tgps = &old[0]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"];
    ensure!(
        *tgps == 1,
        "the old ReplicaSet's terminationGracePeriodSeconds should stay 1, got {tgps}"
    );
    Ok(Vec::new())
}

/// Upstream's TestScalePausedDeployment: a paused Deployment still scales.
pub(super) fn scale_paused_deployment(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut d = new_deployment("test-scale-paused-deployment", 1, c.images.v(1));
    d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(1);
    let t = Tester::create(c, ns, d)?;
    t.wait_revision_and_image("1", c.images.v(1))?;
    t.wait_complete()?;
    t.expect_new_rs()?;
    let generation = t.update(json!({"spec": {"paused": true}}))?;
    t.wait_observed(generation)?;
    let replicas = 10;
    let generation = t.update(json!({"spec": {"replicas": replicas}}))?;
    t.wait_observed(generation)?;
    let rs = t.expect_new_rs()?;
    ensure!(
        int(&rs["spec"]["replicas"]) == replicas,
        "expected the new ReplicaSet to have {replicas} replicas, got {}",
        rs["spec"]["replicas"]
    );
    t.wait_complete()?;
    Ok(Vec::new())
}

/// Upstream's TestDeploymentHashCollision: a ReplicaSet whose template was changed under the
/// Deployment's feet makes it count a collision and create a new one.
pub(super) fn deployment_hash_collision(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let t = Tester::create(
        c,
        ns,
        new_deployment("test-hash-collision-deployment", 1, c.images.v(1)),
    )?;
    t.wait_revision_and_image("1", c.images.v(1))?;
    let rs = t.expect_new_rs()?;
    merge_patch(
        c,
        ns,
        &format!("replicaset/{}", name(&rs)),
        &json!({"spec": {"template": {"spec": {"terminationGracePeriodSeconds": 5}}}}),
    )?;
    crate::cluster::wait_for("collisionCount 1", c.timeout(), || {
        Ok((t.get()?["status"]["collisionCount"] == 1).then_some(()))
    })?;
    t.wait_revision_and_image("2", c.images.v(1))?;
    Ok(Vec::new())
}

/// Upstream's TestFailedDeployment: unready pods past the progress deadline, then Ready.
pub(super) fn failed_deployment(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut d = new_deployment("progress-check", 1, c.images.v(1));
    d["spec"]["progressDeadlineSeconds"] = json!(3);
    hold(&mut d["spec"]["template"]);
    let t = Tester::create(c, ns, d)?;
    t.wait_updated_at_least(1)?;
    let rs = name(&t.expect_new_rs()?);
    t.wait_condition(
        "Progressing",
        "ProgressDeadlineExceeded",
        &format!("ReplicaSet {rs:?} has timed out progressing."),
    )?;
    set_ready(c, ns, &t.updated_pods()?, true, SystemTime::now())?;
    t.wait_complete()?;
    t.wait_condition(
        "Progressing",
        "NewReplicaSetAvailable",
        &format!("ReplicaSet {rs:?} has successfully progressed."),
    )?;
    Ok(Vec::new())
}

/// Upstream's TestOverlappingDeployments: two Deployments with one selector keep their own
/// ReplicaSets.
pub(super) fn overlapping_deployments(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut testers = Vec::new();
    let mut rss = Vec::new();
    for n in ["first-deployment", "second-deployment"] {
        let t = Tester::create(c, ns, new_deployment(n, 1, c.images.v(1)))?;
        t.wait_revision_and_image("1", c.images.v(1))?;
        t.wait_complete()?;
        rss.push(t.expect_new_rs()?);
        testers.push(t);
    }
    ensure!(
        uid(&rss[0]) != uid(&rss[1]),
        "overlapping Deployments must not share a ReplicaSet"
    );
    testers[0].update(json!({"spec": {"replicas": 2}}))?;
    testers[0].wait_complete()?;
    for (t, rs) in testers.iter().zip(&rss) {
        let now = c.get_json(&["replicaset", &name(rs), "-n", ns])?;
        let want = int(&t.get()?["spec"]["replicas"]);
        ensure!(
            int(&now["spec"]["replicas"]) == want,
            "expected ReplicaSet {} of {} to have {want} replicas, got {}",
            name(rs),
            t.name,
            now["spec"]["replicas"]
        );
    }
    Ok(Vec::new())
}

/// The desired-replicas annotation of each ReplicaSet in `rss` must be `want`.
fn check_desired_annotation(c: &Ctx, ns: &str, rss: &[&str], want: i64) -> anyhow::Result<()> {
    for rs in rss {
        let now = c.get_json(&["replicaset", rs, "-n", ns])?;
        let got = &now["metadata"]["annotations"][DESIRED_REPLICAS];
        ensure!(
            got.as_str() == Some(want.to_string().as_str()),
            "unexpected desired-replicas annotation on ReplicaSet {rs}: want {want}, got {got}"
        );
    }
    Ok(())
}

/// Upstream's TestScaledRolloutDeployment: scaling and changing the template at once, while
/// the previous rollout is stuck, neither blocks the rollout nor leaves stale annotations.
pub(super) fn scaled_rollout_deployment(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut d = new_deployment("test-scaled-rollout-deployment", 10, c.images.v(1));
    d["spec"]["strategy"]["rollingUpdate"] = json!({"maxSurge": 3, "maxUnavailable": 2});
    let t = Tester::create(c, ns, d)?;
    t.wait_revision_and_image("1", c.images.v(1))?;
    t.wait_complete()?;
    let first = name(&t.expect_new_rs()?);
    // A rollout whose pods are never Ready, then a check it kept the minimum available.
    let stuck_rollout = |revision: &str, image: &str| -> anyhow::Result<()> {
        t.update(template_patch(image, true))?;
        t.wait_revision_and_image(revision, image)?;
        let d = t.get()?;
        let min_available = int(&d["spec"]["replicas"]) - 2;
        ensure!(
            int(&d["status"]["availableReplicas"]) >= min_available,
            "Deployment has {} available replicas after rollout {revision}, fewer than {min_available}",
            d["status"]["availableReplicas"]
        );
        Ok(())
    };
    stuck_rollout("2", c.images.v(2))?;
    wait_rs_stable(c, ns, &first)?;
    let second = name(&t.expect_new_rs()?);
    wait_rs_stable(c, ns, &second)?;

    let mut scaled = template_patch(c.images.v(3), false);
    scaled["spec"]["replicas"] = json!(20);
    t.update(scaled)?;
    t.wait_revision_and_image("3", c.images.v(3))?;
    t.wait_complete()?;
    let third = name(&t.expect_new_rs()?);
    check_desired_annotation(c, ns, &[&first, &second, &third], 20)?;

    stuck_rollout("4", c.images.v(4))?;
    wait_rs_stable(c, ns, &third)?;
    let fourth = name(&t.expect_new_rs()?);
    wait_rs_stable(c, ns, &fourth)?;

    // Revision 1's image with an annotation: a fifth template, not a rollback to the first.
    let mut scaled = template_patch(c.images.v(1), false);
    scaled["spec"]["replicas"] = json!(5);
    scaled["spec"]["template"]["metadata"] = json!({"annotations": {"kcm-rs.io/e2e-rollout": "5"}});
    t.update(scaled)?;
    t.wait_revision_and_image("5", c.images.v(1))?;
    t.wait_complete()?;
    let fifth = name(&t.expect_new_rs()?);
    ensure!(fifth != first, "revision 5 must be a new ReplicaSet");
    check_desired_annotation(c, ns, &[&third, &fourth, &fifth], 5)?;
    Ok(Vec::new())
}

/// Upstream's TestSpecReplicasChange (Deployment): scaling a Recreate Deployment, and a spec
/// change other than replicas being observed.
pub(super) fn spec_replicas_change(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut d = new_deployment("deployment", 1, c.images.v(1));
    d["spec"]["strategy"] = json!({"type": "Recreate"});
    let t = Tester::create(c, ns, d)?;
    for n in [2, 0, 1] {
        t.scale(n)?;
    }
    let old_generation = int(&t.get()?["metadata"]["generation"]);
    let generation = t.update(json!({"spec": {"revisionHistoryLimit": 4}}))?;
    ensure!(
        generation != old_generation,
        "the Deployment's generation must change with its spec"
    );
    t.wait_observed(generation)?;
    Ok(Vec::new())
}

/// Upstream's TestDeploymentAvailableCondition: the Available condition and the status counts
/// through unready, ready-not-yet-available and available pods.
pub(super) fn deployment_available_condition(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let replicas = 10;
    let mut d = new_deployment("deployment", replicas, c.images.v(1));
    d["spec"]["minReadySeconds"] = json!(3600);
    d["spec"]["progressDeadlineSeconds"] = json!(7200);
    hold(&mut d["spec"]["template"]);
    let t = Tester::create(c, ns, d)?;
    let unavailable = "Deployment does not have minimum availability.";
    t.wait_updated_at_least(replicas)?;
    t.wait_condition("Available", "MinimumReplicasUnavailable", unavailable)?;
    let counts = |ready, available, unavailable| Counts {
        replicas,
        updated: replicas,
        ready,
        available,
        unavailable,
        terminating: Some(0),
    };
    t.check_counts(counts(0, 0, 10))?;
    set_ready(c, ns, &t.updated_pods()?, true, SystemTime::now())?;
    t.wait_ready_replicas()?;
    t.wait_condition("Available", "MinimumReplicasUnavailable", unavailable)?;
    t.check_counts(counts(10, 0, 10))?;
    let generation = t.update(json!({"spec": {"minReadySeconds": 1}}))?;
    t.wait_observed(generation)?;
    t.wait_condition(
        "Available",
        "MinimumReplicasAvailable",
        "Deployment has minimum availability.",
    )?;
    t.check_counts(counts(10, 10, 0))?;
    Ok(Vec::new())
}
