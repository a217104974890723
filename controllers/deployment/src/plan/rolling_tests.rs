use super::*;
use crate::plan::scale::apply_scale_steps;
use crate::testing::{int, rolling_deployment, rs};

fn sizes(rss: &[&ReplicaSet], steps: &[ScaleStep], d: &Deployment) -> Vec<i32> {
    apply_scale_steps(rss, steps, d)
        .iter()
        .map(rs_replicas)
        .collect()
}

/// Upstream's `scaled` result of `reconcileOldReplicaSets`, had every step succeeded.
fn scaled(plan: &OldReplicaSetsPlan) -> bool {
    !plan.steps.is_empty() && plan.aborted.is_none()
}

#[test]
fn test_deployment_controller_reconcile_new_replica_set() {
    // (name, deploymentReplicas, maxSurge, oldReplicas, newReplicas, scaleExpected, expectedNewReplicas)
    let cases = [
        (
            "should not scale up when old replica set is fully saturated",
            10,
            0,
            10,
            0,
            false,
            0,
        ),
        (
            "should scale up according to the maxSurge when old replica set is fully saturated",
            10,
            2,
            10,
            0,
            true,
            2,
        ),
        (
            "should scale up according to the maxSurge",
            10,
            2,
            5,
            0,
            true,
            7,
        ),
        (
            "should not scale when maxSurge is fully saturated",
            10,
            2,
            10,
            2,
            false,
            0,
        ),
        (
            "should scale down when there are replicas above maxSurge",
            10,
            2,
            2,
            11,
            true,
            10,
        ),
    ];
    for (name, dr, surge, old_r, new_r, scale_expected, want) in cases {
        let d = rolling_deployment("foo", dr, Some(int(surge)), Some(int(0)));
        let new_rs = rs("foo-v2", new_r, 0, 100);
        let old_rs = rs("foo-v1", old_r, old_r, 50);
        let got = reconcile_new_replica_set(&[&new_rs, &old_rs], &new_rs, &d).expect("no error");
        assert_eq!(got.is_some(), scale_expected, "{name}");
        if let Some(step) = got {
            assert_eq!(step.new_replicas, want, "{name}");
            assert_eq!(step.rs_name, "foo-v2", "{name}");
        }
    }
}

#[test]
fn test_deployment_controller_reconcile_old_replica_sets() {
    // (name, deploymentReplicas, maxUnavailable, oldReplicas, oldAvailable, newReplicas, newAvailable, expectedOld)
    let cases = [
        (
            "scale down old: maxUnavailable 0 resolves to 1",
            10,
            0,
            10,
            10,
            0,
            0,
            Some(9),
        ),
        (
            "scale down old by maxUnavailable",
            10,
            2,
            10,
            10,
            0,
            0,
            Some(8),
        ),
        (
            "clean up unhealthy replicas only",
            10,
            2,
            10,
            8,
            0,
            0,
            Some(8),
        ),
        (
            "clean up one unhealthy, scale down one healthy",
            10,
            2,
            10,
            9,
            0,
            0,
            Some(8),
        ),
        (
            "blocked by unavailable new replicas",
            10,
            2,
            8,
            8,
            2,
            0,
            None,
        ),
    ];
    for (name, dr, unav, old_r, old_a, new_r, new_a, want) in cases {
        let d = rolling_deployment("foo", dr, Some(int(0)), Some(int(unav)));
        let old_rs = rs("foo-old", old_r, old_a, 50);
        let new_rs = rs("foo-new", new_r, new_a, 100);
        let all = [&old_rs, &new_rs];
        let plan = reconcile_old_replica_sets(&all, &[&old_rs], &new_rs, &d);
        assert_eq!(scaled(&plan), want.is_some(), "{name}");
        if let Some(w) = want {
            assert_eq!(sizes(&[&old_rs], &plan.steps, &d), vec![w], "{name}");
        }
    }
}

#[test]
fn reconcile_old_replica_sets_upstream_comment_example() {
    // R=10, maxUnavailable=2, maxSurge=3: new RS crashlooping at 5, old at 8 -> blocked.
    let d = rolling_deployment("foo", 10, Some(int(3)), Some(int(2)));
    let old_rs = rs("foo-old", 8, 8, 50);
    let new_rs = rs("foo-new", 5, 0, 100);
    let plan = reconcile_old_replica_sets(&[&old_rs, &new_rs], &[&old_rs], &new_rs, &d);
    assert!(plan.steps.is_empty());
    // Rolled back to the good RS: newUnavailable 1 -> maxScaledDown 4 (the bad RS is now old).
    let good = rs("foo-good", 8, 7, 100);
    let bad = rs("foo-bad", 5, 0, 50);
    let plan = reconcile_old_replica_sets(&[&bad, &good], &[&bad], &good, &d);
    // All 5 bad replicas are unavailable: cleanup takes 4 of them.
    assert_eq!(sizes(&[&bad], &plan.steps, &d), vec![1]);
}

/// Chaos seed 363256345404178072: a Deployment scaled from 10 to 4 in the middle of a rollout
/// (maxSurge 2, maxUnavailable 1). The proportional scale left the new ReplicaSet at 2 while its
/// status still counted 3 available pods (the ReplicaSet controller had not yet deleted the
/// surplus). Upstream's `newRSUnavailablePodCount` is then negative (2 - 3), so it scales the old
/// ReplicaSet to 0 although only 2 pods stay available, below 4 - 1. kcm does as upstream
/// (rolling.go, `reconcileOldReplicaSets`): the availability bound does not hold across a
/// scale-down in the middle of a rollout, which is why the chaos scenario checks only the surge
/// bound there.
#[test]
fn reconcile_old_replica_sets_counts_the_surplus_a_scale_down_has_not_yet_removed() {
    let d = rolling_deployment("web", 4, Some(int(2)), Some(int(1)));
    let old_rs = rs("web-old", 4, 4, 50);
    let new_rs = rs("web-new", 2, 3, 100);
    let plan = reconcile_old_replica_sets(&[&old_rs, &new_rs], &[&old_rs], &new_rs, &d);
    // maxScaledDown = 6 - 3 - (2 - 3) = 4; available 4 + 3 - minAvailable 3 = 4 scaled down.
    assert_eq!(sizes(&[&old_rs], &plan.steps, &d), vec![0]);
    // With the new ReplicaSet's status caught up (2 available), only 3 may go.
    let caught_up = rs("web-new", 2, 2, 100);
    let plan = reconcile_old_replica_sets(&[&old_rs, &caught_up], &[&old_rs], &caught_up, &d);
    assert_eq!(sizes(&[&old_rs], &plan.steps, &d), vec![1]);
}

#[test]
fn test_deployment_controller_cleanup_unhealthy_replicas() {
    // (name, oldReplicas, readyPods(available), unHealthyPods, maxCleanupCount, cleanupCountExpected)
    let cases = [
        ("maxCleanupCount 1", 10, 8, 1, 1),
        ("maxCleanupCount 3", 10, 8, 3, 2),
        ("maxCleanupCount 0", 10, 8, 0, 0),
        ("no unhealthy", 10, 10, 3, 0),
    ];
    let d = rolling_deployment("foo", 10, Some(int(2)), Some(int(2)));
    for (name, old_r, available, max, want) in cases {
        let old_rs = rs("foo-v2", old_r, available, 50);
        let c = cleanup_unhealthy_replicas(&[&old_rs], &d, max);
        assert_eq!(c.cleaned, want, "{name}");
        assert_eq!(c.error, None, "{name}");
        assert_eq!(
            c.old_rss.iter().map(rs_replicas).collect::<Vec<_>>(),
            vec![old_r - want],
            "{name}"
        );
    }
}

#[test]
fn cleanup_unhealthy_replicas_invalid_scale_down() {
    let d = rolling_deployment("foo", 10, Some(int(2)), Some(int(2)));
    let ok = rs("a-unhealthy", 4, 2, 10);
    let weird = rs("b-weird", 3, 5, 20);
    let c = cleanup_unhealthy_replicas(&[&weird, &ok], &d, 10);
    assert_eq!(c.steps.len(), 1, "the older RS is cleaned before the error");
    assert!(matches!(
        c.error,
        Some(DeploymentError::InvalidScaleDown { from: 3, to: 5, .. })
    ));
    let new_rs = rs("new", 0, 0, 30);
    let d = rolling_deployment("foo", 4, Some(int(2)), Some(int(2)));
    let plan = reconcile_old_replica_sets(&[&weird, &ok, &new_rs], &[&weird, &ok], &new_rs, &d);
    assert_eq!(plan.steps.len(), 1);
    assert!(!scaled(&plan));
    assert!(plan.aborted.is_some());
}

#[test]
fn test_deployment_controller_scale_down_old_replica_sets_for_rolling_update() {
    // (name, maxUnavailable, readyPods(available), oldReplicas, scaleExpected, expectedOldReplicas)
    let cases = [
        ("maxUnavailable 0 resolves to 1", 0, 10, 10, true, 9),
        ("scale down by maxUnavailable", 2, 10, 10, true, 8),
        ("not enough available", 2, 8, 10, false, 0),
        ("old RS already empty", 2, 10, 0, false, 0),
        ("only 1 available", 2, 1, 10, false, 0),
    ];
    for (name, unav, available, old_r, expected, want) in cases {
        let d = rolling_deployment("foo", 10, Some(int(0)), Some(int(unav)));
        let old_rs = rs("foo-v2", old_r, available, 50);
        let steps = scale_down_old_replica_sets_for_rolling_update(&[&old_rs], &[&old_rs], &d);
        assert_eq!(!steps.is_empty(), expected, "{name}");
        if expected {
            assert_eq!(sizes(&[&old_rs], &steps, &d), vec![want], "{name}");
        }
    }
}

#[test]
fn scale_down_oldest_first() {
    let d = rolling_deployment("foo", 4, Some(int(0)), Some(int(1)));
    let older = rs("a", 2, 2, 10);
    let newer = rs("b", 2, 2, 20);
    let new_rs = rs("new", 1, 1, 30);
    // available 5, min 3 -> remove 2, all from the oldest.
    let steps = scale_down_old_replica_sets_for_rolling_update(
        &[&newer, &older, &new_rs],
        &[&newer, &older],
        &d,
    );
    assert_eq!(
        steps
            .iter()
            .map(|s| (s.rs_name.as_str(), s.new_replicas))
            .collect::<Vec<_>>(),
        [("a", 0)]
    );
}

#[test]
fn rollout_rolling_decisions() {
    let d = rolling_deployment("foo", 3, Some(int(1)), Some(int(0)));
    let old_rs = rs("old", 3, 3, 10);
    let new_rs = rs("new", 0, 0, 20);
    assert!(matches!(
        plan_rolling(&d, &new_rs, &[&old_rs]),
        Ok(RollingPlan::ScaleNewReplicaSet(ScaleStep {
            new_replicas: 1,
            ..
        }))
    ));
    let new_rs = rs("new", 1, 1, 20);
    match plan_rolling(&d, &new_rs, &[&old_rs]) {
        Ok(RollingPlan::ScaleDownOldReplicaSets(plan)) => {
            assert_eq!(sizes(&[&old_rs], &plan.steps, &d), vec![2])
        }
        other => panic!("unexpected {other:?}"),
    }
    let new_rs = rs("new", 3, 3, 20);
    let empty_old = rs("old", 0, 0, 10);
    assert_eq!(
        plan_rolling(&d, &new_rs, &[&empty_old]),
        Ok(RollingPlan::Idle { cleanup: false })
    );
    let mut done = d.clone();
    done.status = Some(k8s_openapi::api::apps::v1::DeploymentStatus {
        replicas: Some(3),
        updated_replicas: Some(3),
        available_replicas: Some(3),
        ..Default::default()
    });
    assert_eq!(
        plan_rolling(&done, &new_rs, &[&empty_old]),
        Ok(RollingPlan::Idle { cleanup: true })
    );
}
