use super::*;
use crate::testing::{int, rolling_deployment, rs, spec_mut, status_mut, with_annotation};
use crate::util::annotations::MAX_REPLICAS_ANNOTATION;

#[test]
fn test_new_rs_new_replicas() {
    // (name, strategy, depReplicas, newRSReplicas, maxSurge, expected)
    let cases = [
        (
            "can not scale up - to newRSReplicas",
            ROLLING_UPDATE_STRATEGY,
            1,
            5,
            1,
            5,
        ),
        (
            "scale up - to depReplicas",
            ROLLING_UPDATE_STRATEGY,
            6,
            2,
            10,
            6,
        ),
        ("recreate - to depReplicas", RECREATE_STRATEGY, 3, 1, 1, 3),
    ];
    let rs5 = rs("rs5", 5, 0, 0);
    for (name, strategy, dep, new_replicas, surge, want) in cases {
        let mut d = rolling_deployment("nginx", dep, Some(int(surge)), Some(int(1)));
        if let Some(s) = spec_mut(&mut d).strategy.as_mut() {
            s.type_ = Some(strategy.into());
        }
        let new_rs = rs("new", new_replicas, 0, 1);
        assert_eq!(
            new_rs_new_replicas(&d, &[&rs5], &new_rs),
            Ok(want),
            "{name}"
        );
    }
}

#[test]
fn new_rs_new_replicas_errors() {
    let mut d = rolling_deployment("nginx", 3, None, Some(int(1)));
    let new_rs = rs("new", 0, 0, 1);
    assert_eq!(
        new_rs_new_replicas(&d, &[], &new_rs),
        Err(DeploymentError::NilIntOrString)
    );
    if let Some(s) = spec_mut(&mut d).strategy.as_mut() {
        s.type_ = Some("Canary".into());
    }
    assert_eq!(
        new_rs_new_replicas(&d, &[], &new_rs),
        Err(DeploymentError::UnsupportedStrategy("Canary".into()))
    );
}

#[test]
fn new_rs_new_replicas_rolling_update_zero_surge() {
    // maxSurge 0: the new RS can only grow into room freed by old ones.
    let d = rolling_deployment("nginx", 10, Some(int(0)), Some(int(2)));
    let old = rs("old", 8, 8, 0);
    let new_rs = rs("new", 0, 0, 1);
    assert_eq!(new_rs_new_replicas(&d, &[&old, &new_rs], &new_rs), Ok(2));
    let old = rs("old", 10, 10, 0);
    assert_eq!(new_rs_new_replicas(&d, &[&old, &new_rs], &new_rs), Ok(0));
}

#[test]
fn test_get_replica_set_fraction() {
    // (name, deploymentReplicas, deploymentStatusReplicas, maxSurge, rsReplicas, maxReplicasAnnotation, expected)
    let cases: [(&str, i32, i32, i32, i32, Option<&str>, i32); 9] = [
        (
            "empty deployment always scales to 0",
            0,
            0,
            0,
            10,
            None,
            -10,
        ),
        (
            "unsynced deployment does not scale when max-replicas annotation is missing (removed by a 3rd party)",
            10,
            0,
            0,
            5,
            None,
            0,
        ),
        (
            "unsynced deployment does not scale when max-replicas annotation is incorrectly set to 0 (by a 3rd party)",
            10,
            0,
            0,
            5,
            Some("0"),
            0,
        ),
        (
            "scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation is missing (removed by a 3rd party)",
            120,
            100,
            0,
            50,
            None,
            10,
        ),
        (
            "scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation is incorrectly set to 0 (by a 3rd party)",
            120,
            100,
            0,
            50,
            Some("0"),
            10,
        ),
        (
            "scale up by 1/5 should increase RS replicas by 1/5",
            120,
            0,
            0,
            50,
            Some("100"),
            10,
        ),
        (
            "scale up with maxSurge by 1/5 should increase RS replicas approximately by 1/5",
            120,
            0,
            10,
            50,
            Some("110"),
            9,
        ),
        (
            "scale down by 1/6 should decrease RS replicas by 1/6",
            10,
            0,
            0,
            6,
            Some("12"),
            -1,
        ),
        (
            "scale down with maxSurge by 1/6 should decrease RS replicas approximately by 1/6",
            100,
            0,
            10,
            50,
            Some("130"),
            -8,
        ),
    ];
    for (name, dep, status_replicas, surge, rs_r, annotation, want) in cases {
        let mut d = rolling_deployment("nginx", dep, Some(int(surge)), Some(int(1)));
        status_mut(&mut d).replicas = Some(status_replicas);
        let mut r = rs("nginx-rs", rs_r, 0, 0);
        if let Some(a) = annotation {
            r = with_annotation(r, MAX_REPLICAS_ANNOTATION, a);
        }
        assert_eq!(get_replica_set_fraction(&r, &d), want, "{name}");
    }
}

#[test]
fn get_proportion_clamps_to_allowed() {
    let d = rolling_deployment("d", 20, Some(int(0)), Some(int(1)));
    let r = with_annotation(rs("r", 5, 0, 0), MAX_REPLICAS_ANNOTATION, "10");
    // fraction = 5*20/10 - 5 = 5; scaling up by 10 with 7 already added -> only 3 allowed.
    assert_eq!(get_proportion(Some(&r), &d, 10, 0), 5);
    assert_eq!(get_proportion(Some(&r), &d, 10, 7), 3);
    assert_eq!(get_proportion(Some(&r), &d, 10, 10), 0);
    assert_eq!(get_proportion(Some(&r), &d, 0, 0), 0);
    assert_eq!(get_proportion(None, &d, 10, 0), 0);
    let zero = rs("z", 0, 0, 0);
    assert_eq!(get_proportion(Some(&zero), &d, 10, 0), 0);
    // Scaling down: d 4, annotation 10 -> fraction = round(5*4/10) - 5 = -3, allowed -2 -> -2.
    let d = rolling_deployment("d", 4, Some(int(0)), Some(int(1)));
    assert_eq!(get_proportion(Some(&r), &d, -6, -4), -2);
    assert_eq!(get_proportion(Some(&r), &d, -6, 0), -3);
}

/// Go's int32 arithmetic wraps; absurd but valid user input (a huge absolute maxSurge, huge
/// replica counts) must not panic here either.
#[test]
fn huge_values_do_not_panic() {
    let d = rolling_deployment("d", i32::MAX, Some(int(i32::MAX)), Some(int(0)));
    let big = rs("big", i32::MAX, i32::MAX, 0);
    let other = rs("other", i32::MAX, 0, 1);
    let _ = max_surge(&d);
    let _ = new_rs_new_replicas(&d, &[&big, &other], &other);
    let _ = get_replica_set_fraction(&big, &d);
    let _ = get_proportion(Some(&big), &d, i32::MAX, -5);
    let _ = crate::plan::scale::scale(&d, Some(&big), &[&other]);
    let _ = crate::plan::rolling::plan_rolling(&d, &big, &[&other]);
    let _ = crate::plan::status::calculate_status(
        &[&big, &other],
        Some(&big),
        &d,
        &Default::default(),
        crate::testing::at(0),
    );
}
