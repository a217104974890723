//! Ports of upstream's ReplicaSet integration tests (test/integration/replicaset in
//! k8s.io/kubernetes v1.37.2): their steps and assertions, run against whichever ReplicaSet
//! controller the cluster has.
//!
//! Adaptations (upstream runs the controller without nodes, and starts it only after the
//! test's objects exist):
//! - Pods whose status a test writes (phase, Ready, restart counts) are held (see
//!   `ported_support`); other pods are run and made Ready by the kubelets.
//! - TestAdoption creates its pods after the ReplicaSet (their owner references need its uid),
//!   and the controller already runs, so the ReplicaSet has made a pod of its own by then. Its
//!   template is held and the test pod carries a higher deletion cost, so the surplus pod the
//!   controller removes is always its own. The four cases run side by side, each with a label
//!   of its own; the "other ReplicaSet" controlling case 4's pod exists (our clusters run a
//!   garbage collector, which drops references to owners that do not).
//! - Owners of another kind are Leases: see `ported_support::foreign_owner`.
//! - The finalizers the tests leave on objects are removed at the end, so that the namespace
//!   can be deleted.
//!
//! Not ported: TestPodDeletionCost's case with the PodDeletionCost gate off, and
//! TestTerminatingReplicas, which switch gates within a test (our controllers get their gates
//! once, at start); TestTerminatingReplicas also keeps pods terminating on a node that does not
//! exist, which the real control plane's pod garbage collector removes.

use std::time::{Duration, SystemTime};

use anyhow::{Context, ensure};
use serde_json::{Value, json};

use super::ported_support::{
    DELETION_COST, container, controller_of, create, expect_selector_immutable, foreign_owner,
    hold, int, merge_patch, name, owner_count, owner_ref, pods, replace_field,
    scale_via_subresource, selector_of, set_ready, uid, wait_rs_stable,
};
use super::{Ctx, Sample};
use crate::cluster::wait_for;

/// Upstream's `newRS`: `replicas` pods labelled (and selected by) `labels`.
fn new_rs(name: &str, replicas: i64, labels: &Value, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [container(image)]}}
        }
    })
}

/// Upstream's `newMatchingPod`: a bare pod labelled `labels`.
fn new_matching_pod(name: &str, labels: &Value, image: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "labels": labels},
           "spec": {"containers": [container(image)]}})
}

/// Upstream's label map.
fn label_map() -> Value {
    json!({"foo": "bar"})
}

/// Creates ReplicaSet `manifest` and waits until it is stable; returns it.
fn create_stable(c: &Ctx, ns: &str, manifest: Value) -> anyhow::Result<Value> {
    let rs = create(c, ns, &[manifest])?
        .pop()
        .context("kubectl created no ReplicaSet")?;
    wait_rs_stable(c, ns, &name(&rs))?;
    Ok(rs)
}

/// The pod `pod` now, or `None` once it is gone.
fn find_pod(c: &Ctx, ns: &str, pod: &str) -> anyhow::Result<Option<Value>> {
    let out = c.kubectl(&[
        "get",
        "pod",
        pod,
        "-n",
        ns,
        "--ignore-not-found",
        "-o",
        "json",
    ])?;
    if out.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(serde_json::from_str(&out)?))
}

/// Upstream's TestAdoption: which owner references a ReplicaSet leaves, completes or adds on a
/// matching pod, in four cases.
pub(super) fn adoption(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let image = c.images.v(1);
    let labels: Vec<Value> = (0..4)
        .map(|i| json!({"foo": "bar", "adoption-case": i.to_string()}))
        .collect();
    let mut rss = Vec::new();
    for (i, l) in labels.iter().enumerate() {
        let mut m = new_rs(&format!("rs-{i}"), 1, l, image);
        hold(&mut m["spec"]["template"]);
        rss.push(create_stable(c, ns, m)?);
    }
    let mut another = new_rs("another-rs", 1, &labels[3], image);
    hold(&mut another["spec"]["template"]);
    let another = create_stable(c, ns, another)?;

    let plain = |rs: &Value| owner_ref(rs, None);
    let controlling = |rs: &Value| {
        let mut r = owner_ref(rs, Some(true));
        r["blockOwnerDeletion"] = json!(true);
        r
    };
    // (existing references, expected references) per case, in upstream's order.
    let cases = [
        (vec![plain(&rss[0])], vec![controlling(&rss[0])]),
        (vec![], vec![controlling(&rss[1])]),
        (
            vec![owner_ref(&rss[2], Some(true))],
            vec![owner_ref(&rss[2], Some(true))],
        ),
        (
            vec![owner_ref(&another, Some(true)), plain(&rss[3])],
            vec![owner_ref(&another, Some(true)), plain(&rss[3])],
        ),
    ];
    let mut pod_manifests = Vec::new();
    for (i, (existing, _)) in cases.iter().enumerate() {
        let mut p = new_matching_pod(&format!("pod{i}"), &labels[i], image);
        p["metadata"]["ownerReferences"] = json!(existing);
        p["metadata"]["annotations"] = json!({DELETION_COST: "1"});
        pod_manifests.push(p);
    }
    create(c, ns, &pod_manifests)?;
    for (i, (_, expected)) in cases.iter().enumerate() {
        let pod = format!("pod{i}");
        let mut last = Value::Null;
        wait_for(
            &format!("case {} owner references", i + 1),
            c.timeout(),
            || {
                let p = find_pod(c, ns, &pod)?.with_context(|| format!("pod {pod} is gone"))?;
                last = p["metadata"]["ownerReferences"].clone();
                let got = last.as_array().cloned().unwrap_or_default();
                Ok((got == *expected).then_some(()))
            },
        )
        .with_context(|| format!("pod {pod}: expected {expected:?}, last {last}"))?;
    }
    Ok(Vec::new())
}

/// Upstream's TestRSSelectorImmutability (an API validation test: no controller acts).
pub(super) fn rs_selector_immutability(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    create(c, ns, &[new_rs("rs", 0, &label_map(), c.images.v(1))])?;
    let mut rs = c.get_json(&["replicaset", "rs", "-n", ns])?;
    let labels = json!({"changed_name_apps_v1": "changed_test_apps_v1"});
    rs["spec"]["selector"]["matchLabels"] = labels.clone();
    rs["spec"]["template"]["metadata"]["labels"] = labels;
    expect_selector_immutable(c, ns, &rs)?;
    Ok(Vec::new())
}

/// Sets `spec.replicas` of ReplicaSet `rs` and waits until it is stable (upstream's `scaleRS`).
fn scale_rs(c: &Ctx, ns: &str, rs: &str, replicas: i64) -> anyhow::Result<()> {
    merge_patch(
        c,
        ns,
        &format!("replicaset/{rs}"),
        &json!({"spec": {"replicas": replicas}}),
    )?;
    wait_rs_stable(c, ns, rs).map(|_| ())
}

/// Upstream's TestSpecReplicasChange (ReplicaSet): status follows spec.replicas, and a template
/// change is observed.
pub(super) fn rs_spec_replicas_change(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    create_stable(c, ns, new_rs("rs", 2, &label_map(), c.images.v(1)))?;
    for n in [3, 0, 2] {
        scale_rs(c, ns, "rs", n)?;
    }
    let old_generation =
        int(&c.get_json(&["replicaset", "rs", "-n", ns])?["metadata"]["generation"]);
    merge_patch(
        c,
        ns,
        "replicaset/rs",
        &json!({"spec": {"template": {"metadata": {"annotations": {"test": "annotation"}}}}}),
    )?;
    let generation = int(&c.get_json(&["replicaset", "rs", "-n", ns])?["metadata"]["generation"]);
    ensure!(
        generation != old_generation,
        "the ReplicaSet's generation must change with its template"
    );
    wait_for("the new generation to be observed", c.timeout(), || {
        let rs = c.get_json(&["replicaset", "rs", "-n", ns])?;
        Ok((int(&rs["status"]["observedGeneration"]) >= generation).then_some(()))
    })?;
    Ok(Vec::new())
}

/// Upstream's TestDeletingAndFailedPods: a pod being deleted and a failed pod are replaced,
/// and both stay listed.
pub(super) fn deleting_and_failed_pods(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut m = new_rs("rs", 2, &label_map(), c.images.v(1));
    hold(&mut m["spec"]["template"]);
    create_stable(c, ns, m)?;
    let sel = selector_of(&label_map());
    let before = pods(c, ns, &sel)?;
    ensure!(before.len() == 2, "len(pods) = {}, want 2", before.len());
    let (deleting, failed) = (&before[0], &before[1]);
    let finalizer = "fake.example.com/blockDeletion";
    merge_patch(
        c,
        ns,
        &format!("pod/{}", name(deleting)),
        &json!({"metadata": {"finalizers": [finalizer]}}),
    )?;
    c.kubectl(&["-n", ns, "delete", "pod", &name(deleting), "--wait=false"])?;
    c.kubectl(&[
        "-n",
        ns,
        "patch",
        "pod",
        &name(failed),
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Failed"}}"#,
    ])?;
    let after = wait_for("two replacement pods (4 in all)", c.timeout(), || {
        let now = pods(c, ns, &sel)?;
        Ok((now.len() == 4).then_some(now))
    })?;
    for (what, p) in [("deleting", deleting), ("failed", failed)] {
        ensure!(
            after.iter().any(|x| uid(x) == uid(p)),
            "expected the {what} pod {} among the four, it is not",
            name(p)
        );
    }
    replace_field(
        c,
        ns,
        &format!("pod/{}", name(deleting)),
        "/metadata/finalizers",
        json!([]),
    )?;
    Ok(Vec::new())
}

/// Upstream's TestPodDeletionCost, with the PodDeletionCost gate on (its default): which of two
/// pods a scale-down to one keeps, by cost and then restart count.
pub(super) fn pod_deletion_cost(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    // (case, costs, restart counts, index of the pod that remains)
    let cases: [(&str, &[&str], [i64; 2], usize); 3] = [
        ("enabled-with-different-costs", &["1000", "100"], [5, 0], 0),
        ("enabled-with-same-costs", &["100", "100"], [5, 0], 1),
        ("enabled-with-no-costs", &[], [5, 0], 1),
    ];
    let labels = |case: &str| json!({"foo": "bar", "case": case});
    for (case, ..) in &cases {
        let mut m = new_rs(case, 2, &labels(case), c.images.v(1));
        hold(&mut m["spec"]["template"]);
        create_stable(c, ns, m)?;
    }
    let mut remaining = Vec::new();
    for (case, costs, restarts, keep) in &cases {
        let sel = selector_of(&labels(case));
        let two = wait_for(&format!("{case}: two pods"), c.timeout(), || {
            let now = pods(c, ns, &sel)?;
            Ok((now.len() == 2).then_some(now))
        })?;
        remaining.push(uid(&two[*keep]));
        for (i, p) in two.iter().enumerate() {
            let target = format!("pod/{}", name(p));
            if let Some(cost) = costs.get(i) {
                replace_field(
                    c,
                    ns,
                    &target,
                    "/metadata/annotations",
                    json!({DELETION_COST: cost}),
                )?;
            }
            let status = json!({"status": {"containerStatuses": [
                {"name": "fake-name", "restartCount": restarts[i]}]}});
            c.kubectl(&[
                "-n",
                ns,
                "patch",
                &target,
                "--subresource=status",
                "--type=merge",
                "-p",
                &status.to_string(),
            ])?;
        }
    }
    for (case, ..) in &cases {
        merge_patch(
            c,
            ns,
            &format!("replicaset/{case}"),
            &json!({"spec": {"replicas": 1}}),
        )?;
    }
    for ((case, ..), want) in cases.iter().zip(&remaining) {
        let sel = selector_of(&labels(case));
        let one = wait_for(&format!("{case}: the scale-down to 1"), c.timeout(), || {
            let now = pods(c, ns, &sel)?;
            Ok((now.len() == 1).then_some(now))
        })?;
        ensure!(
            uid(&one[0]) == *want,
            "{case}: expected pod uid {want} to remain, got {} ({}) with container statuses {}",
            uid(&one[0]),
            name(&one[0]),
            one[0]["status"]["containerStatuses"]
        );
    }
    Ok(Vec::new())
}

/// Upstream's TestOverlappingRSs: two ReplicaSets with one selector each keep their own pods.
pub(super) fn overlapping_rss(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    for i in 1..=2 {
        create_stable(
            c,
            ns,
            new_rs(&format!("rs-{i}"), i, &label_map(), c.images.v(1)),
        )?;
    }
    let all = pods(c, ns, &selector_of(&label_map()))?;
    ensure!(all.len() == 3, "len(pods) = {}, want 3", all.len());
    for i in 1..=2 {
        let rs = c.get_json(&["replicaset", &format!("rs-{i}"), "-n", ns])?;
        ensure!(
            int(&rs["status"]["replicas"]) == int(&rs["spec"]["replicas"]),
            "rs-{i}: status.replicas {} is not spec.replicas {}",
            rs["status"]["replicas"],
            rs["spec"]["replicas"]
        );
    }
    Ok(Vec::new())
}

/// Upstream's TestPodOrphaningAndAdoptionWhenLabelsChange: a pod relabelled out of the selector
/// is released; relabelled back it is adopted again (or deleted as a surplus, leaving one).
pub(super) fn pod_orphaning_and_adoption(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let rs = create_stable(c, ns, new_rs("rs", 1, &label_map(), c.images.v(1)))?;
    let sel = selector_of(&label_map());
    let one = pods(c, ns, &sel)?;
    ensure!(one.len() == 1, "len(pods) = {}, want 1", one.len());
    let pod = name(&one[0]);
    ensure!(
        controller_of(&one[0]).is_some(),
        "the controller reference of pod {pod} is missing"
    );
    let target = format!("pod/{pod}");
    replace_field(
        c,
        ns,
        &target,
        "/metadata/labels",
        json!({"new-foo": "new-bar"}),
    )?;
    wait_for(&format!("pod {pod} to be released"), c.timeout(), || {
        let p = find_pod(c, ns, &pod)?.with_context(|| format!("pod {pod} is gone"))?;
        Ok(controller_of(&p).is_none().then_some(()))
    })?;
    replace_field(c, ns, &target, "/metadata/labels", label_map())?;
    let kept = wait_for(&format!("pod {pod} to be adopted"), c.timeout(), || {
        match find_pod(c, ns, &pod)? {
            Some(p) => Ok(controller_of(&p).is_some().then_some(p)),
            // Picked as the surplus pod and deleted: one pod must remain.
            None => {
                let now = pods(c, ns, &sel)?;
                ensure!(now.len() == 1, "expected 1 pod, got {}", now.len());
                Ok(now.into_iter().next())
            }
        }
    })?;
    let owner = controller_of(&kept).context("controller reference")?;
    ensure!(
        owner["uid"] == uid(&rs).as_str(),
        "the controller of pod {} is {owner}, not ReplicaSet rs",
        name(&kept)
    );
    Ok(Vec::new())
}

/// Sets pod `pod`'s owner references to `refs` alone, waits for a controller reference, and
/// checks it is `rs`'s and that `want_refs` references remain (upstream's
/// `testPodControllerRefPatch`).
fn pod_controller_ref_patch(
    c: &Ctx,
    ns: &str,
    pod: &str,
    refs: Value,
    rs: &Value,
    want_refs: usize,
) -> anyhow::Result<()> {
    replace_field(
        c,
        ns,
        &format!("pod/{pod}"),
        "/metadata/ownerReferences",
        refs,
    )?;
    let p = wait_for(
        &format!("pod {pod} to get a controller reference"),
        c.timeout(),
        || {
            let p = find_pod(c, ns, pod)?.with_context(|| format!("pod {pod} is gone"))?;
            Ok(controller_of(&p).is_some().then_some(p))
        },
    )?;
    let owner = controller_of(&p).context("controller reference")?;
    ensure!(
        owner["uid"] == uid(rs).as_str(),
        "the controller of pod {pod} is {owner}, not ReplicaSet {}",
        name(rs)
    );
    ensure!(
        owner_count(&p) == want_refs,
        "pod {pod} has {} owner references, want {want_refs}: {}",
        owner_count(&p),
        p["metadata"]["ownerReferences"]
    );
    Ok(())
}

/// Upstream's TestGeneralPodAdoption: a ReplicaSet adds its controller reference to a pod owned
/// by another object, and sets `controller` on its own plain one.
pub(super) fn general_pod_adoption(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let rs = create_stable(c, ns, new_rs("rs", 1, &label_map(), c.images.v(1)))?;
    let one = pods(c, ns, &selector_of(&label_map()))?;
    ensure!(one.len() == 1, "len(pods) = {}, want 1", one.len());
    let pod = name(&one[0]);
    let other = foreign_owner(c, ns, &name(&rs))?;
    pod_controller_ref_patch(c, ns, &pod, json!([owner_ref(&other, Some(false))]), &rs, 2)?;
    pod_controller_ref_patch(c, ns, &pod, json!([owner_ref(&rs, Some(false))]), &rs, 1)?;
    Ok(Vec::new())
}

/// Upstream's TestReadyAndAvailableReplicas: with minReadySeconds 3600, a pod Ready just now
/// is ready but not available, one Ready for two hours is both.
pub(super) fn ready_and_available_replicas(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let mut m = new_rs("rs", 3, &label_map(), c.images.v(1));
    m["spec"]["minReadySeconds"] = json!(3600);
    hold(&mut m["spec"]["template"]);
    let rs = create_stable(c, ns, m)?;
    let stable = c.get_json(&["replicaset", &name(&rs), "-n", ns])?;
    ensure!(
        int(&stable["status"]["availableReplicas"]) == 0,
        "expected no available replica yet, saw {}",
        stable["status"]["availableReplicas"]
    );
    let three: Vec<String> = pods(c, ns, &selector_of(&label_map()))?
        .iter()
        .map(name)
        .collect();
    ensure!(three.len() == 3, "len(pods) = {}, want 3", three.len());
    let now = SystemTime::now();
    let long_ago = now - Duration::from_secs(120 * 60);
    set_ready(c, ns, &three[..1], false, now)?;
    set_ready(c, ns, &three[1..2], true, now)?;
    set_ready(c, ns, &three[2..], true, long_ago)?;
    wait_for("3 replicas, 2 ready, 1 available", c.timeout(), || {
        let r = c.get_json(&["replicaset", "rs", "-n", ns])?;
        let s = &r["status"];
        let ok = int(&s["replicas"]) == 3
            && int(&s["readyReplicas"]) == 2
            && int(&s["availableReplicas"]) == 1;
        Ok(ok.then_some(()))
    })?;
    Ok(Vec::new())
}

/// Upstream's TestRSScaleSubresource.
pub(super) fn rs_scale_subresource(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    create_stable(c, ns, new_rs("rs", 1, &label_map(), c.images.v(1)))?;
    for replicas in [3, 0] {
        scale_via_subresource(c, ns, "replicasets", "rs", replicas)?;
    }
    Ok(Vec::new())
}

/// Upstream's TestExtraPodsAdoptionAndDeletion: of three matching orphans, a ReplicaSet of two
/// adopts two and deletes the third.
pub(super) fn extra_pods_adoption_and_deletion(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let orphans: Vec<Value> = (1..=3)
        .map(|i| new_matching_pod(&format!("pod-{i}"), &label_map(), c.images.v(1)))
        .collect();
    create(c, ns, &orphans)?;
    create_stable(c, ns, new_rs("rs", 2, &label_map(), c.images.v(1)))?;
    let sel = selector_of(&label_map());
    wait_for("the pods to match spec.replicas (2)", c.timeout(), || {
        Ok((pods(c, ns, &sel)?.len() == 2).then_some(()))
    })?;
    Ok(Vec::new())
}

/// Upstream's TestFullyLabeledReplicas: only pods with every template label count as fully
/// labelled.
pub(super) fn fully_labeled_replicas(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    create_stable(c, ns, new_rs("rs", 2, &label_map(), c.images.v(1)))?;
    let extra = json!({"foo": "bar", "extraKey": "extraValue"});
    replace_field(
        c,
        ns,
        "replicaset/rs",
        "/spec/template/metadata/labels",
        extra.clone(),
    )?;
    let two = pods(c, ns, &selector_of(&label_map()))?;
    ensure!(two.len() == 2, "len(pods) = {}, want 2", two.len());
    replace_field(
        c,
        ns,
        &format!("pod/{}", name(&two[0])),
        "/metadata/labels",
        extra,
    )?;
    wait_for("2 replicas, 1 fully labelled", c.timeout(), || {
        let s = c.get_json(&["replicaset", "rs", "-n", ns])?["status"].clone();
        Ok((int(&s["replicas"]) == 2 && int(&s["fullyLabeledReplicas"]) == 1).then_some(()))
    })?;
    Ok(Vec::new())
}

/// Upstream's TestReplicaSetsAppsV1DefaultGCPolicy: deleting an apps/v1 ReplicaSet without a
/// propagation policy adds no orphan finalizer.
pub(super) fn replica_sets_default_gc_policy(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let finalizer = "kube.io/dummy-finalizer";
    let mut m = new_rs("rs", 2, &label_map(), c.images.v(1));
    m["metadata"]["finalizers"] = json!([finalizer]);
    create_stable(c, ns, m)?;
    let two = pods(c, ns, &selector_of(&label_map()))?;
    ensure!(two.len() == 2, "len(pods) = {}, want 2", two.len());
    // A DELETE without a body: the server's default policy, which kubectl delete would set.
    c.kubectl(&[
        "delete",
        "--raw",
        &format!("/apis/apps/v1/namespaces/{ns}/replicasets/rs"),
    ])?;
    wait_for("the ReplicaSet to be deleting", c.timeout(), || {
        let rs = c.get_json(&["replicaset", "rs", "-n", ns])?;
        if rs["metadata"]["deletionTimestamp"].is_null() {
            return Ok(None);
        }
        ensure!(
            rs["metadata"]["finalizers"] == json!([finalizer]),
            "got finalizers {}, want [{finalizer}]",
            rs["metadata"]["finalizers"]
        );
        Ok(Some(()))
    })?;
    replace_field(c, ns, "replicaset/rs", "/metadata/finalizers", json!([]))?;
    Ok(Vec::new())
}
