use k8s_openapi::api::apps::v1::ReplicaSetStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::testing::{at, int, recreate_deployment, rolling_deployment, rs, status_mut};
use crate::util::conditions::{DEPLOYMENT_PROGRESSING, get_deployment_condition, reason_of};

fn rs_with(
    name: &str,
    spec: i32,
    status: i32,
    ready: i32,
    available: i32,
    terminating: Option<i32>,
) -> ReplicaSet {
    let mut r = rs(name, spec, available, 0);
    r.status = Some(ReplicaSetStatus {
        replicas: status,
        ready_replicas: Some(ready),
        available_replicas: Some(available),
        observed_generation: Some(1),
        terminating_replicas: terminating,
        ..Default::default()
    });
    r
}

#[test]
fn calculate_status_fields() {
    let mut d = rolling_deployment("foo", 10, Some(int(2)), Some(int(2)));
    d.metadata.generation = Some(7);
    status_mut(&mut d).collision_count = Some(3);
    let old = rs_with("old", 4, 5, 4, 4, Some(1));
    let new = rs_with("new", 6, 4, 3, 2, Some(0));
    let s = calculate_status(
        &[&old, &new],
        Some(&new),
        &d,
        &FeatureGates::default(),
        at(100),
    );
    assert_eq!(s.observed_generation, Some(7));
    assert_eq!(s.replicas, Some(9));
    assert_eq!(s.updated_replicas, Some(4));
    assert_eq!(s.ready_replicas, Some(7));
    assert_eq!(s.available_replicas, Some(6));
    assert_eq!(s.unavailable_replicas, Some(4));
    assert_eq!(s.collision_count, Some(3));
    assert_eq!(s.terminating_replicas, Some(1));
    // 6 < 10 - 2 -> unavailable
    let c = get_deployment_condition(&s, DEPLOYMENT_AVAILABLE).expect("Available set");
    assert_eq!(
        (c.status.as_deref().unwrap_or_default(), reason_of(&c)),
        (CONDITION_FALSE, MINIMUM_REPLICAS_UNAVAILABLE)
    );
    assert_eq!(c.message.as_deref(), Some(NO_MINIMUM_AVAILABILITY_MESSAGE));
    assert_eq!(c.last_transition_time, Some(Time(at(100))));

    let off = FeatureGates {
        deployment_replica_set_terminating_replicas: false,
    };
    assert_eq!(
        calculate_status(&[&old, &new], Some(&new), &d, &off, at(100)).terminating_replicas,
        None
    );
}

#[test]
fn calculate_status_unavailable_never_negative() {
    let d = rolling_deployment("foo", 2, Some(int(1)), Some(int(0)));
    // Scaling down: 2 desired in spec, 5 available.
    let old = rs_with("old", 0, 3, 3, 3, None);
    let new = rs_with("new", 2, 2, 2, 2, None);
    let s = calculate_status(
        &[&old, &new],
        Some(&new),
        &d,
        &FeatureGates::default(),
        at(0),
    );
    assert_eq!(s.unavailable_replicas, None);
    assert_eq!(s.available_replicas, Some(5));
    let c = get_deployment_condition(&s, DEPLOYMENT_AVAILABLE).expect("Available set");
    assert_eq!(
        (c.status.as_deref().unwrap_or_default(), reason_of(&c)),
        (CONDITION_TRUE, MINIMUM_REPLICAS_AVAILABLE)
    );
    assert_eq!(c.message.as_deref(), Some(MINIMUM_AVAILABILITY_MESSAGE));
    // Unknown terminating count (synced RS without the field).
    assert_eq!(s.terminating_replicas, None);
}

#[test]
fn calculate_status_recreate_needs_all_available() {
    let d = recreate_deployment("foo", 3);
    let new = rs_with("new", 3, 3, 3, 2, Some(0));
    let s = calculate_status(&[&new], Some(&new), &d, &FeatureGates::default(), at(0));
    let c = get_deployment_condition(&s, DEPLOYMENT_AVAILABLE).expect("Available set");
    assert_eq!(c.status.as_deref(), Some(CONDITION_FALSE));
}

#[test]
fn calculate_status_keeps_other_conditions_and_transition_time() {
    let mut d = rolling_deployment("foo", 1, Some(int(1)), Some(int(0)));
    let new = rs_with("new", 1, 1, 1, 1, Some(0));
    let first = calculate_status(&[&new], Some(&new), &d, &FeatureGates::default(), at(10));
    let mut stored = first.clone();
    crate::util::conditions::set_deployment_condition(
        &mut stored,
        crate::util::conditions::new_deployment_condition(
            DEPLOYMENT_PROGRESSING,
            CONDITION_TRUE,
            "X",
            "m",
            at(5),
        ),
    );
    d.status = Some(stored);
    let second = calculate_status(&[&new], Some(&new), &d, &FeatureGates::default(), at(20));
    let c = get_deployment_condition(&second, DEPLOYMENT_AVAILABLE).expect("Available set");
    assert_eq!(
        c.last_update_time,
        Some(Time(at(10))),
        "unchanged condition untouched"
    );
    assert!(get_deployment_condition(&second, DEPLOYMENT_PROGRESSING).is_some());
    // Nothing changed: no status write.
    assert_eq!(
        status_update(&[&new], Some(&new), &d, &FeatureGates::default(), at(30)),
        None
    );
}

#[test]
fn sync_deployment_status_writes_on_change() {
    let d = rolling_deployment("foo", 1, Some(int(1)), Some(int(0)));
    let new = rs_with("new", 1, 1, 1, 1, Some(0));
    let s =
        status_update(&[&new], Some(&new), &d, &FeatureGates::default(), at(30)).expect("changed");
    assert_eq!(s.available_replicas, Some(1));
}

#[test]
fn status_equal_treats_zero_as_absent() {
    let a = DeploymentStatus {
        replicas: Some(0),
        conditions: Some(vec![]),
        ..Default::default()
    };
    assert!(status_equal(&a, &DeploymentStatus::default()));
    let b = DeploymentStatus {
        collision_count: Some(0),
        ..Default::default()
    };
    assert!(!status_equal(&b, &DeploymentStatus::default()));
}

/// A Deployment status as the server stores it: the computed one without
/// `terminatingReplicas` (gate off on the server, which drops the field).
fn stored_without_terminating(s: DeploymentStatus) -> DeploymentStatus {
    DeploymentStatus {
        terminating_replicas: None,
        ..s
    }
}

#[test]
fn gate_off_leaves_terminating_unset_and_writes_nothing_more() {
    let off = FeatureGates {
        deployment_replica_set_terminating_replicas: false,
    };
    let mut d = rolling_deployment("foo", 2, Some(int(1)), Some(int(0)));
    // The ReplicaSets report the field (their controller has it on); this one does not.
    let old = rs_with("old", 0, 1, 0, 0, Some(1));
    let new = rs_with("new", 2, 2, 2, 2, Some(0));
    let first = status_update(&[&old, &new], Some(&new), &d, &off, at(10)).expect("first write");
    assert_eq!(first.terminating_replicas, None);
    d.status = Some(first);
    assert_eq!(
        status_update(&[&old, &new], Some(&new), &d, &off, at(20)),
        None,
        "steady state: no second write"
    );
}

#[test]
fn server_dropping_the_field_causes_no_repeated_writes() {
    // Gate on here, off on the server: synced ReplicaSets carry no terminatingReplicas, so the
    // sum is unknown (absent), which is what the server stores.
    let mut d = rolling_deployment("foo", 2, Some(int(1)), Some(int(0)));
    let old = rs_with("old", 0, 0, 0, 0, None);
    let new = rs_with("new", 2, 2, 2, 2, None);
    let gates = FeatureGates::default();
    let first = status_update(&[&old, &new], Some(&new), &d, &gates, at(10)).expect("write");
    assert_eq!(first.terminating_replicas, None);
    d.status = Some(stored_without_terminating(first));
    assert_eq!(
        status_update(&[&old, &new], Some(&new), &d, &gates, at(20)),
        None
    );
}
