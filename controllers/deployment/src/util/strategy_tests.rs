use super::*;
use crate::test_support::{
    int, pct, recreate_deployment, rolling_deployment, rs, set_rolling, spec_mut, status_mut,
    with_annotation,
};
use crate::util::annotations::MAX_REPLICAS_ANNOTATION;

#[test]
fn test_resolve_fenceposts() {
    // (maxSurge, maxUnavailable, desired, expectSurge, expectUnavailable, expectError)
    let cases: [(Option<&str>, Option<&str>, i32, i32, i32, bool); 7] = [
        (Some("0%"), Some("0%"), 0, 0, 1, false),
        (Some("39%"), Some("39%"), 10, 4, 3, false),
        (Some("oops"), Some("39%"), 10, 0, 0, true),
        (Some("55%"), Some("urg"), 10, 0, 0, true),
        (None, Some("39%"), 10, 0, 3, false),
        (Some("39%"), None, 10, 4, 0, false),
        (None, None, 10, 0, 1, false),
    ];
    for (num, (surge, unav, desired, want_surge, want_unav, want_err)) in
        cases.into_iter().enumerate()
    {
        let surge = surge.map(pct);
        let unav = unav.map(pct);
        let got = resolve_fenceposts(surge.as_ref(), unav.as_ref(), desired);
        assert_eq!(got.is_err(), want_err, "#{num}");
        assert_eq!(got.unwrap_or((0, 0)), (want_surge, want_unav), "#{num}");
    }
}

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
fn test_max_unavailable() {
    let cases = [
        ("maxUnavailable less than replicas", 10, int(5), 5),
        ("maxUnavailable equal replicas", 10, int(10), 10),
        ("maxUnavailable greater than replicas", 5, int(10), 5),
        ("maxUnavailable with replicas is 0", 0, int(10), 0),
        (
            "maxUnavailable less than replicas with percents",
            10,
            pct("50%"),
            5,
        ),
        (
            "maxUnavailable equal replicas with percents",
            10,
            pct("100%"),
            10,
        ),
        (
            "maxUnavailable greater than replicas with percents",
            5,
            pct("100%"),
            5,
        ),
    ];
    for (name, replicas, unav, want) in cases {
        let d = rolling_deployment("d", replicas, Some(int(1)), Some(unav));
        assert_eq!(max_unavailable(&d), want, "{name}");
    }
    assert_eq!(
        max_unavailable(&recreate_deployment("d", 3)),
        0,
        "maxUnavailable with Recreate deployment strategy"
    );
}

#[test]
fn test_min_available() {
    let cases = [
        ("replicas greater than maxUnavailable", 10, int(5), 5),
        ("replicas equal maxUnavailable", 10, int(10), 0),
        ("replicas less than maxUnavailable", 5, int(10), 0),
        ("replicas is 0", 0, int(10), 0),
        (
            "replicas greater than maxUnavailable with percents",
            10,
            pct("60%"),
            4,
        ),
        (
            "replicas equal maxUnavailable with percents",
            10,
            pct("100%"),
            0,
        ),
        (
            "replicas less than maxUnavailable with percents",
            5,
            pct("100%"),
            0,
        ),
    ];
    for (name, replicas, unav, want) in cases {
        let d = rolling_deployment("d", replicas, Some(int(1)), Some(unav));
        assert_eq!(min_available(&d), want, "{name}");
    }
    assert_eq!(
        min_available(&recreate_deployment("d", 10)),
        0,
        "minAvailable with Recreate deployment strategy"
    );
}

#[test]
fn max_surge_values() {
    assert_eq!(
        max_surge(&rolling_deployment(
            "d",
            10,
            Some(pct("25%")),
            Some(pct("25%"))
        )),
        3
    );
    assert_eq!(
        max_surge(&rolling_deployment("d", 0, Some(pct("25%")), None)),
        0
    );
    assert_eq!(
        max_surge(&rolling_deployment("d", 0, Some(int(4)), None)),
        4
    );
    assert_eq!(max_surge(&recreate_deployment("d", 10)), 0);
    let mut d = rolling_deployment("d", 10, None, None);
    set_rolling(&mut d, pct("bogus"), int(1));
    assert_eq!(max_surge(&d), 0);
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
    let _ = crate::sync::scale::scale(&d, Some(&big), &[&other]);
    let _ = crate::rolling::rollout_rolling(&d, &big, &[&other]);
    let _ = crate::sync::status::calculate_status(
        &[&big, &other],
        Some(&big),
        &d,
        &Default::default(),
        crate::test_support::at(0),
    );
}
