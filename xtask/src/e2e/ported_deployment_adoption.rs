//! Ports of upstream's Deployment integration tests on ReplicaSet ownership and the scale
//! subresource (test/integration/deployment in k8s.io/kubernetes v1.37.2); the adaptations
//! are those listed in `ported_deployment.rs`.

use anyhow::{Context, ensure};
use serde_json::{Value, json};

use super::ported_deployment_util::{Tester, new_deployment, test_labels};
use super::ported_support::{
    controller_of, foreign_owner, name, owner_count, owner_ref, replace_field,
    scale_via_subresource, uid,
};
use super::{Ctx, Sample};
use crate::cluster::wait_for;

/// Creates Deployment `deployment` of one replica and waits for its first complete rollout;
/// returns its tester and new ReplicaSet.
fn rolled_out<'a, 'c>(c: &'a Ctx<'c>, ns: &str) -> anyhow::Result<(Tester<'a, 'c>, Value)> {
    let t = Tester::create(c, ns, new_deployment("deployment", 1, c.images.v(1)))?;
    t.wait_revision_and_image("1", c.images.v(1))?;
    t.wait_complete()?;
    let rs = t.expect_new_rs()?;
    Ok((t, rs))
}

/// Sets `rs`'s owner references to `refs` alone, waits for a controller reference to appear,
/// and checks it is the Deployment's and that `want_refs` references remain (upstream's
/// `testRSControllerRefPatch`).
fn controller_ref_patch(t: &Tester, rs: &str, refs: Value, want_refs: usize) -> anyhow::Result<()> {
    let target = format!("replicaset/{rs}");
    replace_field(t.c, &t.ns, &target, "/metadata/ownerReferences", refs)?;
    let now = wait_for(
        &format!("ReplicaSet {rs} to get a controller reference"),
        t.c.timeout(),
        || {
            let r = t.c.get_json(&["replicaset", rs, "-n", &t.ns])?;
            Ok(controller_of(&r).is_some().then_some(r))
        },
    )?;
    let owner = controller_of(&now).context("controller reference")?;
    let d = t.get()?;
    ensure!(
        owner["uid"] == uid(&d).as_str(),
        "the controller reference of ReplicaSet {rs} is {owner}, not Deployment {}",
        t.name
    );
    ensure!(
        owner_count(&now) == want_refs,
        "ReplicaSet {rs} has {} owner references, want {want_refs}: {}",
        owner_count(&now),
        now["metadata"]["ownerReferences"]
    );
    Ok(())
}

/// Upstream's TestGeneralReplicaSetAdoption: a Deployment adds its controller reference to a
/// matching ReplicaSet owned by another object, and sets `controller` on its own plain one.
pub(super) fn general_replica_set_adoption(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (t, rs) = rolled_out(c, ns)?;
    let rs = name(&rs);
    let other = foreign_owner(c, ns, "deployment")?;
    controller_ref_patch(&t, &rs, json!([owner_ref(&other, Some(false))]), 2)?;
    let d = t.get()?;
    controller_ref_patch(&t, &rs, json!([owner_ref(&d, Some(false))]), 1)?;
    Ok(Vec::new())
}

/// Upstream's TestDeploymentScaleSubresource.
pub(super) fn deployment_scale_subresource(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let t = Tester::create(c, ns, new_deployment("deployment", 2, c.images.v(1)))?;
    t.wait_revision_and_image("1", c.images.v(1))?;
    t.wait_complete()?;
    for replicas in [3, 0] {
        scale_via_subresource(c, ns, "deployments", &t.name, replicas)?;
    }
    Ok(Vec::new())
}

/// Upstream's TestReplicaSetOrphaningAndAdoptionWhenLabelsChange: a ReplicaSet relabelled out of
/// the selector is released (and a new one made under another name), relabelled back it is
/// adopted again.
pub(super) fn replica_set_orphaning_and_adoption(c: &Ctx, ns: &str) -> anyhow::Result<Vec<Sample>> {
    let (t, rs) = rolled_out(c, ns)?;
    let d = t.get()?;
    let owner = controller_of(&rs).context("the new ReplicaSet has no controller reference")?;
    ensure!(
        owner["uid"] == uid(&d).as_str(),
        "the controller reference of ReplicaSet {} is {owner}, not the Deployment",
        name(&rs)
    );
    let target = format!("replicaset/{}", name(&rs));
    let get_rs = || c.get_json(&["replicaset", &name(&rs), "-n", ns]);
    replace_field(
        c,
        ns,
        &target,
        "/metadata/labels",
        json!({"new-name": "new-test"}),
    )?;
    wait_for("the ReplicaSet to be released", c.timeout(), || {
        Ok(controller_of(&get_rs()?).is_none().then_some(()))
    })?;
    let new_rs = wait_for("a new ReplicaSet after the release", c.timeout(), || {
        t.new_rs()
    })?;
    ensure!(
        uid(&new_rs) != uid(&rs),
        "the Deployment must create a ReplicaSet other than the released one"
    );
    replace_field(c, ns, &target, "/metadata/labels", test_labels())?;
    wait_for("the ReplicaSet to be adopted again", c.timeout(), || {
        let adopted = controller_of(&get_rs()?).is_some_and(|o| o["uid"] == uid(&d).as_str());
        Ok(adopted.then_some(()))
    })?;
    Ok(Vec::new())
}
