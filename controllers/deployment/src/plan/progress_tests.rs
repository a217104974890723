use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::testing::{at, recreate_deployment, rs, spec_mut, with_status_replicas};
use crate::util::conditions::{CONDITION_FALSE, CONDITION_TRUE};

/// 2017-02-15T18:49:00Z, upstream's fixed time in progress_test.go.
const T0: i64 = 1_487_184_540;

fn cond(status: &str, reason: &str, time: Option<i64>) -> DeploymentCondition {
    DeploymentCondition {
        type_: Some(DEPLOYMENT_PROGRESSING.into()),
        status: Some(status.into()),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        last_update_time: time.map(|t| Time(at(t))),
        last_transition_time: time.map(|t| Time(at(t))),
        ..Default::default()
    }
}

/// Upstream `currentDeployment(pds, replicas, statusReplicas, updatedReplicas, availableReplicas, conditions)`.
fn current_deployment(
    pds: Option<i32>,
    replicas: i32,
    st_replicas: i32,
    st_updated: i32,
    st_available: i32,
    conds: Vec<DeploymentCondition>,
) -> Deployment {
    let mut d = recreate_deployment("progress-test", replicas);
    spec_mut(&mut d).progress_deadline_seconds = pds;
    d.status = Some(DeploymentStatus {
        replicas: Some(st_replicas),
        updated_replicas: Some(st_updated),
        available_replicas: Some(st_available),
        conditions: (!conds.is_empty()).then_some(conds),
        ..Default::default()
    });
    d
}

/// Upstream `newRSWithAvailable(name, specReplicas, statusReplicas, availableReplicas)`.
fn rs_available(name: &str, spec: i32, st_replicas: i32, available: i32) -> ReplicaSet {
    with_status_replicas(rs(name, spec, available, 0), st_replicas)
}

fn status(r: i32, u: i32, a: i32) -> DeploymentStatus {
    DeploymentStatus {
        replicas: Some(r),
        updated_replicas: Some(u),
        available_replicas: Some(a),
        ..Default::default()
    }
}

#[test]
fn test_requeue_stuck_deployment() {
    let stuck = || vec![cond(CONDITION_TRUE, "", Some(T0))];
    let failed = || vec![cond(CONDITION_FALSE, TIMED_OUT_REASON, None)];
    let ms = |s: i64| SignedDuration::from_secs(s);
    let cases: Vec<(&str, Deployment, DeploymentStatus, Timestamp, StuckRequeue)> = vec![
        (
            "nil progressDeadlineSeconds specified",
            current_deployment(None, 4, 3, 3, 2, vec![]),
            status(3, 3, 2),
            at(T0),
            StuckRequeue::NotNeeded,
        ),
        (
            "infinite progressDeadlineSeconds specified",
            current_deployment(Some(i32::MAX), 4, 3, 3, 2, vec![]),
            status(3, 3, 2),
            at(T0),
            StuckRequeue::NotNeeded,
        ),
        (
            "no progressing condition found",
            current_deployment(Some(60), 4, 3, 3, 2, vec![]),
            status(3, 3, 2),
            at(T0),
            StuckRequeue::NotNeeded,
        ),
        (
            "complete deployment does not need to be requeued",
            current_deployment(Some(60), 3, 3, 3, 3, vec![]),
            status(3, 3, 3),
            at(T0),
            StuckRequeue::NotNeeded,
        ),
        (
            "already failed deployment does not need to be requeued",
            current_deployment(Some(60), 3, 3, 3, 0, failed()),
            status(3, 3, 0),
            at(T0),
            StuckRequeue::NotNeeded,
        ),
        (
            "stuck deployment - 30s",
            current_deployment(Some(60), 3, 3, 3, 1, stuck()),
            status(3, 3, 1),
            at(T0 + 30),
            StuckRequeue::After(ms(30)),
        ),
        (
            "stuck deployment - 1s",
            current_deployment(Some(60), 3, 3, 3, 1, stuck()),
            status(3, 3, 1),
            at(T0 + 59),
            StuckRequeue::After(ms(1)),
        ),
        (
            "failed deployment - less than a second => now",
            current_deployment(Some(60), 3, 3, 3, 1, stuck()),
            status(3, 3, 1),
            at(T0 + 59)
                .checked_add(SignedDuration::from_nanos(1))
                .expect("valid"),
            StuckRequeue::Now,
        ),
        (
            "failed deployment - now",
            current_deployment(Some(60), 3, 3, 3, 1, stuck()),
            status(3, 3, 1),
            at(T0 + 60),
            StuckRequeue::Now,
        ),
        (
            "failed deployment - 1s after deadline",
            current_deployment(Some(60), 3, 3, 3, 1, stuck()),
            status(3, 3, 1),
            at(T0 + 61),
            StuckRequeue::Now,
        ),
        (
            "failed deployment - 60s after deadline",
            current_deployment(Some(60), 3, 3, 3, 1, stuck()),
            status(3, 3, 1),
            at(T0 + 120),
            StuckRequeue::Now,
        ),
    ];
    for (name, d, new_status, now, want) in cases {
        assert_eq!(
            requeue_stuck_deployment(&d, &new_status, now),
            want,
            "{name}"
        );
    }
    assert_eq!(
        StuckRequeue::After(ms(30)).enqueue_after(),
        Some(ms(31)),
        "AddAfter gets one extra second"
    );
    assert_eq!(StuckRequeue::Now.enqueue_after(), None);
}

#[test]
fn test_sync_rollout_status() {
    let rsu = || cond(CONDITION_TRUE, REPLICA_SET_UPDATED_REASON, Some(T0));
    let nra = || cond(CONDITION_TRUE, NEW_RS_AVAILABLE_REASON, Some(T0));
    let to = || cond(CONDITION_FALSE, TIMED_OUT_REASON, None);
    let now = at(T0 + 86_400);
    struct Case {
        name: &'static str,
        d: Deployment,
        all_rss: Vec<ReplicaSet>,
        new_rs: Option<ReplicaSet>,
        // (status, reason, lastUpdate, lastTransition, message); None = no Progressing condition.
        want: Option<(
            &'static str,
            &'static str,
            Option<i64>,
            Option<i64>,
            Option<&'static str>,
        )>,
    }
    let n = now.as_second();
    let cases = vec![
        Case {
            name: "General: remove Progressing condition and do not estimate progress if deployment has no Progress Deadline",
            d: current_deployment(None, 3, 2, 2, 2, vec![rsu()]),
            all_rss: vec![rs_available("bar", 0, 1, 1)],
            new_rs: Some(rs_available("foo", 3, 2, 2)),
            want: None,
        },
        Case {
            name: "General: do not estimate progress of deployment with only one active ReplicaSet",
            d: current_deployment(Some(60), 3, 3, 3, 3, vec![nra()]),
            all_rss: vec![rs_available("bar", 3, 3, 3)],
            new_rs: None,
            want: Some((
                CONDITION_TRUE,
                NEW_RS_AVAILABLE_REASON,
                Some(T0),
                Some(T0),
                None,
            )),
        },
        Case {
            name: "DeploymentProgressing: dont update lastTransitionTime if deployment already has Progressing=True",
            d: current_deployment(Some(60), 3, 2, 2, 2, vec![rsu()]),
            all_rss: vec![rs_available("bar", 0, 1, 1)],
            new_rs: Some(rs_available("foo", 3, 2, 2)),
            want: Some((
                CONDITION_TRUE,
                REPLICA_SET_UPDATED_REASON,
                Some(n),
                Some(T0),
                Some("ReplicaSet \"foo\" is progressing."),
            )),
        },
        Case {
            name: "DeploymentProgressing: update everything if deployment has Progressing=False",
            d: current_deployment(Some(60), 3, 2, 2, 2, vec![to()]),
            all_rss: vec![rs_available("bar", 0, 1, 1)],
            new_rs: Some(rs_available("foo", 3, 2, 2)),
            want: Some((
                CONDITION_TRUE,
                REPLICA_SET_UPDATED_REASON,
                Some(n),
                Some(n),
                Some("ReplicaSet \"foo\" is progressing."),
            )),
        },
        Case {
            name: "DeploymentProgressing: create Progressing condition if it does not exist",
            d: current_deployment(Some(60), 3, 2, 2, 2, vec![]),
            all_rss: vec![rs_available("bar", 0, 1, 1)],
            new_rs: Some(rs_available("foo", 3, 2, 2)),
            want: Some((
                CONDITION_TRUE,
                REPLICA_SET_UPDATED_REASON,
                Some(n),
                Some(n),
                None,
            )),
        },
        Case {
            name: "DeploymentComplete: dont update lastTransitionTime if deployment already has Progressing=True",
            d: current_deployment(Some(60), 3, 3, 3, 3, vec![rsu()]),
            all_rss: vec![],
            new_rs: Some(rs_available("foo", 3, 3, 3)),
            want: Some((
                CONDITION_TRUE,
                NEW_RS_AVAILABLE_REASON,
                Some(n),
                Some(T0),
                Some("ReplicaSet \"foo\" has successfully progressed."),
            )),
        },
        Case {
            name: "DeploymentComplete: update everything if deployment has Progressing=False",
            d: current_deployment(Some(60), 3, 3, 3, 3, vec![to()]),
            all_rss: vec![],
            new_rs: Some(rs_available("foo", 3, 3, 3)),
            want: Some((
                CONDITION_TRUE,
                NEW_RS_AVAILABLE_REASON,
                Some(n),
                Some(n),
                None,
            )),
        },
        Case {
            name: "DeploymentComplete: create Progressing condition if it does not exist",
            d: current_deployment(Some(60), 3, 3, 3, 3, vec![]),
            all_rss: vec![],
            new_rs: Some(rs_available("foo", 3, 3, 3)),
            want: Some((
                CONDITION_TRUE,
                NEW_RS_AVAILABLE_REASON,
                Some(n),
                Some(n),
                None,
            )),
        },
        Case {
            name: "DeploymentComplete: defend against NPE when newRS=nil",
            d: current_deployment(Some(60), 0, 3, 3, 3, vec![rsu()]),
            all_rss: vec![rs_available("foo", 0, 0, 0)],
            new_rs: None,
            want: Some((
                CONDITION_TRUE,
                NEW_RS_AVAILABLE_REASON,
                Some(n),
                Some(T0),
                Some("Deployment \"progress-test\" has successfully progressed."),
            )),
        },
        Case {
            name: "DeploymentTimedOut: update status if rollout exceeds Progress Deadline",
            d: current_deployment(Some(60), 3, 2, 2, 2, vec![rsu()]),
            all_rss: vec![],
            new_rs: Some(rs_available("foo", 3, 2, 2)),
            want: Some((
                CONDITION_FALSE,
                TIMED_OUT_REASON,
                Some(n),
                Some(n),
                Some("ReplicaSet \"foo\" has timed out progressing."),
            )),
        },
        Case {
            name: "DeploymentTimedOut: do not update status if deployment has existing timedOut condition",
            d: current_deployment(Some(60), 3, 2, 2, 2, vec![to()]),
            all_rss: vec![],
            new_rs: Some(rs_available("foo", 3, 2, 2)),
            want: Some((CONDITION_FALSE, TIMED_OUT_REASON, None, None, None)),
        },
    ];
    for c in cases {
        let mut all: Vec<&ReplicaSet> = c.all_rss.iter().collect();
        all.extend(c.new_rs.as_ref());
        let s = rollout_status(&all, c.new_rs.as_ref(), &c.d, &FeatureGates::default(), now);
        let got = get_deployment_condition(&s, DEPLOYMENT_PROGRESSING);
        match (got, c.want) {
            (None, None) => {}
            (Some(g), Some((status, reason, update, transition, message))) => {
                assert_eq!(
                    (g.status.as_deref().unwrap_or_default(), reason_of(&g)),
                    (status, reason),
                    "{}",
                    c.name
                );
                assert_eq!(
                    g.last_update_time,
                    update.map(|t| Time(at(t))),
                    "{}: lastUpdateTime",
                    c.name
                );
                assert_eq!(
                    g.last_transition_time,
                    transition.map(|t| Time(at(t))),
                    "{}: lastTransitionTime",
                    c.name
                );
                if let Some(m) = message {
                    assert_eq!(g.message.as_deref(), Some(m), "{}", c.name);
                }
            }
            (got, want) => panic!("{}: got {got:?}, want {want:?}", c.name),
        }
    }
}

#[test]
fn replica_failure_copied_from_new_rs_first() {
    use k8s_openapi::api::apps::v1::ReplicaSetCondition;
    let failure = |msg: &str, t: i64| ReplicaSetCondition {
        type_: Some(DEPLOYMENT_REPLICA_FAILURE.into()),
        status: Some(CONDITION_TRUE.into()),
        reason: Some("FailedCreate".into()),
        message: Some(msg.into()),
        last_transition_time: Some(Time(at(t))),
    };
    let mut old = rs_available("old", 1, 1, 1);
    let mut new = rs_available("new", 1, 0, 0);
    if let Some(s) = old.status.as_mut() {
        s.conditions = Some(vec![failure("old quota", 5)]);
    }
    let d = current_deployment(None, 2, 1, 0, 1, vec![]);
    let s = rollout_status(
        &[&old, &new],
        Some(&new),
        &d,
        &FeatureGates::default(),
        at(100),
    );
    let c =
        get_deployment_condition(&s, DEPLOYMENT_REPLICA_FAILURE).expect("copied from an old RS");
    assert_eq!(c.message.as_deref(), Some("old quota"));
    assert_eq!(c.last_update_time, Some(Time(at(5))));
    if let Some(st) = new.status.as_mut() {
        st.conditions = Some(vec![failure("new quota", 7)]);
    }
    let s = rollout_status(
        &[&old, &new],
        Some(&new),
        &d,
        &FeatureGates::default(),
        at(100),
    );
    let c =
        get_deployment_condition(&s, DEPLOYMENT_REPLICA_FAILURE).expect("copied from the new RS");
    assert_eq!(c.message.as_deref(), Some("new quota"));
    // No failures anywhere: removed from the stored status.
    let mut with_failure = d.clone();
    with_failure.status = Some(s);
    let healthy = rs_available("new", 1, 0, 0);
    let s = rollout_status(
        &[&healthy],
        Some(&healthy),
        &with_failure,
        &FeatureGates::default(),
        at(100),
    );
    assert!(get_deployment_condition(&s, DEPLOYMENT_REPLICA_FAILURE).is_none());
}

#[test]
fn sync_rollout_status_writes_or_requeues() {
    let d = current_deployment(
        Some(60),
        3,
        3,
        3,
        1,
        vec![cond(CONDITION_TRUE, REPLICA_SET_UPDATED_REASON, Some(T0))],
    );
    let new_rs = rs_available("foo", 3, 3, 1);
    // First pass adds the Available condition -> write.
    let first = plan_rollout_status(
        &[&new_rs],
        Some(&new_rs),
        &d,
        &FeatureGates::default(),
        at(T0 + 30),
    );
    let RolloutStatusPlan::Update(s) = first else {
        panic!("expected an update, got {first:?}");
    };
    let mut stored = d.clone();
    stored.status = Some(s);
    // Second pass: nothing changed -> requeue for the deadline.
    assert_eq!(
        plan_rollout_status(
            &[&new_rs],
            Some(&new_rs),
            &stored,
            &FeatureGates::default(),
            at(T0 + 30)
        ),
        RolloutStatusPlan::Unchanged(StuckRequeue::After(SignedDuration::from_secs(30)))
    );
}
