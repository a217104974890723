use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetCondition, ReplicaSetStatus};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kcm_controller::pod_view::PodView;

use super::*;
use crate::testing::{labels, new_pod, new_replica_set, t0};

fn at(secs_before_now: i64) -> Timestamp {
    t0() - SignedDuration::from_secs(secs_before_now)
}

fn tuple(s: &ReplicaSetStatus) -> (i32, i32, i32, i32, Option<i32>) {
    (
        s.replicas,
        s.fully_labeled_replicas.unwrap_or(0),
        s.ready_replicas.unwrap_or(0),
        s.available_replicas.unwrap_or(0),
        s.terminating_replicas,
    )
}

#[test]
fn test_calculate_status() {
    let full = new_replica_set(2, &[("name", "foo"), ("type", "production")]);
    let not_full = new_replica_set(1, &[("name", "foo")]);
    let mut long = new_replica_set(1, &[("name", "foo"), ("type", "production")]);
    long.spec.min_ready_seconds = Some(3600);
    let running = |rs: &ReplicaSet, n: &str| new_pod(n, rs, "Running", Some(t0()), true);
    let ready_at = |rs: &ReplicaSet, secs: i64| new_pod("p", rs, "Running", Some(at(secs)), true);
    struct Case {
        name: &'static str,
        rs: ReplicaSet,
        pods: Vec<PodView>,
        terminating: Option<usize>,
        want: (i32, i32, i32, i32, Option<i32>),
    }
    let cases = vec![
        Case {
            name: "1 fully labelled pod",
            rs: full.clone(),
            pods: vec![running(&full, "a")],
            terminating: None,
            want: (1, 1, 1, 1, None),
        },
        Case {
            name: "1 not fully labelled pod",
            rs: not_full.clone(),
            pods: vec![running(&not_full, "a")],
            terminating: None,
            want: (1, 0, 1, 1, None),
        },
        Case {
            name: "2 fully labelled pods",
            rs: full.clone(),
            pods: vec![running(&full, "a"), running(&full, "b")],
            terminating: None,
            want: (2, 2, 2, 2, None),
        },
        Case {
            name: "2 fully labelled pods, terminating feature on",
            rs: full.clone(),
            pods: vec![running(&full, "a"), running(&full, "b")],
            terminating: Some(0),
            want: (2, 2, 2, 2, Some(0)),
        },
        Case {
            name: "2 not fully labelled pods",
            rs: not_full.clone(),
            pods: vec![running(&not_full, "a"), running(&not_full, "b")],
            terminating: None,
            want: (2, 0, 2, 2, None),
        },
        Case {
            name: "1 fully + 1 not fully labelled",
            rs: not_full.clone(),
            pods: vec![running(&not_full, "a"), running(&full, "b")],
            terminating: None,
            want: (2, 1, 2, 2, None),
        },
        Case {
            name: "1 pending pod",
            rs: full.clone(),
            pods: vec![new_pod("a", &full, "Pending", None, true)],
            terminating: None,
            want: (1, 1, 0, 0, None),
        },
        Case {
            name: "ready just now, minReadySeconds 3600",
            rs: long.clone(),
            pods: vec![ready_at(&long, 0)],
            terminating: None,
            want: (1, 1, 1, 0, None),
        },
        Case {
            name: "ready exactly minReadySeconds ago (boundary available)",
            rs: long.clone(),
            pods: vec![ready_at(&long, 3600)],
            terminating: None,
            want: (1, 1, 1, 1, None),
        },
        Case {
            name: "ready long ago",
            rs: long.clone(),
            pods: vec![ready_at(&long, 7200)],
            terminating: None,
            want: (1, 1, 1, 1, None),
        },
        Case {
            name: "1 terminating, feature off",
            rs: full.clone(),
            pods: vec![running(&full, "a")],
            terminating: None,
            want: (1, 1, 1, 1, None),
        },
        Case {
            name: "2 terminating, feature on",
            rs: full.clone(),
            pods: vec![running(&full, "a")],
            terminating: Some(2),
            want: (1, 1, 1, 1, Some(2)),
        },
    ];
    for c in cases {
        let pods: Vec<Arc<PodView>> = c.pods.into_iter().map(Arc::new).collect();
        let s = calculate_status(&c.rs, &pods, c.terminating, None, t0());
        assert_eq!(tuple(&s), c.want, "{}", c.name);
    }
}

fn rf(reason: Option<&str>, message: Option<&str>) -> ReplicaSetCondition {
    ReplicaSetCondition {
        type_: Some(REPLICA_FAILURE.into()),
        status: Some("True".into()),
        reason: reason.map(Into::into),
        message: message.map(Into::into),
        last_transition_time: None,
    }
}

fn strip_times(s: &ReplicaSetStatus) -> Option<Vec<ReplicaSetCondition>> {
    s.conditions.clone().map(|v| {
        v.into_iter()
            .map(|mut c| {
                c.last_transition_time = None;
                c
            })
            .collect()
    })
}

#[test]
fn test_calculate_status_conditions() {
    let rs = new_replica_set(2, &[("name", "foo")]);
    let mut with_failure = new_replica_set(10, &[("name", "foo")]);
    with_failure.status = Some(ReplicaSetStatus {
        conditions: Some(vec![rf(None, None)]),
        ..Default::default()
    });
    let pods = |rs: &ReplicaSet, n: usize| -> Vec<Arc<PodView>> {
        (0..n)
            .map(|i| Arc::new(new_pod(&format!("p{i}"), rs, "Running", None, true)))
            .collect()
    };
    let err = "fake manageReplicasErr";
    type Case<'a> = (
        &'a str,
        &'a ReplicaSet,
        usize,
        Option<&'a str>,
        Option<Vec<ReplicaSetCondition>>,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "manageReplicasErr != nil && failureCond == nil, diff < 0",
            &rs,
            1,
            Some(err),
            Some(vec![rf(Some("FailedCreate"), Some(err))]),
        ),
        (
            "manageReplicasErr != nil && failureCond == nil, diff > 0",
            &rs,
            3,
            Some(err),
            Some(vec![rf(Some("FailedDelete"), Some(err))]),
        ),
        (
            "manageReplicasErr == nil && failureCond != nil",
            &with_failure,
            1,
            None,
            None,
        ),
        (
            "manageReplicasErr != nil && failureCond != nil",
            &with_failure,
            1,
            Some(err),
            Some(vec![rf(None, None)]),
        ),
        (
            "manageReplicasErr == nil && failureCond == nil",
            &rs,
            1,
            None,
            None,
        ),
    ];
    for (name, rs, n, e, want) in cases {
        let s = calculate_status(rs, &pods(rs, n), None, e, t0());
        assert_eq!(strip_times(&s), want, "{name}");
    }
}

#[test]
fn new_failure_condition_is_stamped_now() {
    let rs = new_replica_set(2, &[("name", "foo")]);
    let s = calculate_status::<PodView, Arc<PodView>>(&rs, &[], None, Some("boom"), t0());
    let c = get_condition(&s, REPLICA_FAILURE).expect("condition");
    assert_eq!(c.last_transition_time.as_ref().map(|t| t.0), Some(t0()));
}

#[test]
fn test_get_set_remove_condition() {
    let other = rf(Some("OtherFailure"), None);
    let another = rf(Some("AnotherFailure"), None);
    let ipb = ReplicaSetCondition {
        type_: Some("ImagePullBackOff".into()),
        status: Some("True".into()),
        reason: Some("NonExistentImage".into()),
        ..Default::default()
    };
    let st = |c: Vec<ReplicaSetCondition>| ReplicaSetStatus {
        conditions: Some(c),
        ..Default::default()
    };
    // GetCondition
    assert!(get_condition(&st(vec![other.clone()]), REPLICA_FAILURE).is_some());
    assert!(get_condition(&st(vec![other.clone()]), "ImagePullBackOff").is_none());
    // SetCondition
    let mut s = ReplicaSetStatus::default();
    set_condition(&mut s, other.clone());
    assert_eq!(s.conditions, Some(vec![other.clone()]));
    let mut s = st(vec![ipb.clone()]);
    set_condition(&mut s, other.clone());
    assert_eq!(s.conditions, Some(vec![ipb.clone(), other.clone()]));
    let mut s = st(vec![other.clone()]);
    set_condition(&mut s, another.clone());
    assert_eq!(s.conditions, Some(vec![another.clone()]));
    // Same status and reason: unchanged (message/time not refreshed).
    let mut s = st(vec![rf(Some("OtherFailure"), Some("old"))]);
    set_condition(&mut s, rf(Some("OtherFailure"), Some("new")));
    assert_eq!(
        s.conditions,
        Some(vec![rf(Some("OtherFailure"), Some("old"))])
    );
    // RemoveCondition
    let mut s = ReplicaSetStatus::default();
    remove_condition(&mut s, REPLICA_FAILURE);
    assert_eq!(s.conditions, None);
    let mut s = st(vec![other.clone()]);
    remove_condition(&mut s, REPLICA_FAILURE);
    assert_eq!(s.conditions, None);
    let mut s = st(vec![other.clone()]);
    remove_condition(&mut s, "ImagePullBackOff");
    assert_eq!(s.conditions, Some(vec![other]));
}

#[test]
fn fully_labelled_requires_every_template_label() {
    let rs = new_replica_set(1, &[("name", "foo")]);
    let mut p = new_pod("p", &rs, "Running", None, true);
    p.metadata.labels = Some(labels(&[("name", "foo"), ("type", "staging")]));
    let s = calculate_status(&rs, &[Arc::new(p)], None, None, t0());
    assert_eq!(s.fully_labeled_replicas, None);
}
