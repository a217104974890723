//! Table tests for [`super`], incl. upstream `TestActivePodFiltering`,
//! `TestCountTerminatingPods` and the availability-check tests.
use super::*;
use crate::clock::FakeClock;
use crate::pod_view::{PodConditionView, PodView};
use std::sync::Arc;

fn t(s: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + s).unwrap()
}

fn pod(name: &str, phase: &str) -> PodView {
    let mut p = PodView::default();
    p.metadata.name = Some(name.into());
    p.metadata.namespace = Some("default".into());
    p.status.phase = Some(phase.into());
    p
}

fn ready_at(mut p: PodView, ltt: Option<Timestamp>) -> PodView {
    p.status.conditions.push(PodConditionView {
        type_: "Ready".into(),
        status: "True".into(),
        last_transition_time: ltt.map(Time),
    });
    p
}

/// Upstream `TestActivePodFiltering`.
#[test]
fn test_active_pod_filtering() {
    let pods: Vec<Arc<PodView>> = vec![
        Arc::new(pod("pod-1", "Succeeded")),
        Arc::new(pod("pod-2", "Failed")),
        Arc::new(pod("pod-3", "")),
        Arc::new(pod("pod-4", "")),
        Arc::new(pod("pod-5", "")),
    ];
    let names: Vec<_> = filter_active_pods(&pods)
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["pod-3", "pod-4", "pod-5"]);
}

/// Upstream `TestCountTerminatingPods`.
#[test]
fn test_count_terminating_pods() {
    let deleting = |mut p: PodView| {
        p.metadata.deletion_timestamp = Some(Time(t(0)));
        p
    };
    let pods: Vec<Arc<PodView>> = vec![
        Arc::new(pod("a", "Succeeded")),
        Arc::new(pod("b", "Failed")),
        Arc::new(deleting(pod("c", "Pending"))),
        Arc::new(deleting(pod("d", "Running"))),
        Arc::new(pod("e", "Running")),
        Arc::new(pod("f", "Running")),
        Arc::new(pod("g", "Running")),
    ];
    assert_eq!(count_terminating_pods(&pods), 2);
    assert_eq!(filter_terminating_pods(&pods).len(), 2);
    assert_eq!(filter_active_pods(&pods).len(), 3);
}

/// Spec derived vector D2.
#[test]
fn deletion_cost_parsing() {
    let cases: &[(Option<&str>, i32)] = &[
        (None, 0),
        (Some("10"), 10),
        (Some("-10"), -10),
        (Some("0"), 0),
        (Some("-0"), 0),
        (Some("+10"), 0),
        (Some("010"), 0),
        (Some(""), 0),
        (Some("abc"), 0),
        (Some("1.5"), 0),
        (Some("2147483647"), 2_147_483_647),
        (Some("2147483648"), 0),
        (Some("-2147483648"), -2_147_483_648),
        (Some("-"), 0),
    ];
    for (value, want) in cases {
        let mut p = pod("p", "Running");
        if let Some(v) = value {
            p.metadata.annotations = Some(
                [(POD_DELETION_COST_ANNOTATION.to_string(), v.to_string())]
                    .into_iter()
                    .collect(),
            );
        }
        assert_eq!(pod_deletion_cost(&p), *want, "value {value:?}");
    }
    assert!(parse_deletion_cost("+10").is_err());
    assert_eq!(parse_deletion_cost("-5"), Ok(-5));
}

/// Spec derived vector D3 and upstream `IsPodAvailable` table.
#[test]
fn availability() {
    let now = t(100);
    let cases: &[(&str, PodView, i32, bool)] = &[
        ("not ready", pod("p", "Running"), 0, false),
        (
            "ready, m=0",
            ready_at(pod("p", "Running"), Some(now)),
            0,
            true,
        ),
        (
            "ready zero ltt, m=0",
            ready_at(pod("p", "Running"), None),
            0,
            true,
        ),
        (
            "ready zero ltt, m=1",
            ready_at(pod("p", "Running"), None),
            1,
            false,
        ),
        (
            "boundary counts",
            ready_at(pod("p", "Running"), Some(t(95))),
            5,
            true,
        ),
        (
            "just short",
            ready_at(
                pod("p", "Running"),
                Some(now.checked_sub(SignedDuration::from_millis(4999)).unwrap()),
            ),
            5,
            false,
        ),
        (
            "long ago",
            ready_at(pod("p", "Running"), Some(t(0))),
            5,
            true,
        ),
    ];
    for (name, p, m, want) in cases {
        assert_eq!(is_pod_available(p, *m, now), *want, "{name}");
    }
}

#[test]
fn ready_requires_true_status() {
    let mut p = pod("p", "Running");
    p.status.conditions.push(PodConditionView {
        type_: "Ready".into(),
        status: "False".into(),
        last_transition_time: None,
    });
    assert!(!is_pod_ready(&p));
    assert!(pod_ready_time(&p).is_none());
    let p = ready_at(pod("p", "Running"), Some(t(3)));
    assert!(is_pod_ready(&p));
    assert_eq!(pod_ready_time(&p), Some(&Time(t(3))));
}

/// Upstream `TestNextPodAvailabilityCheck` (master).
#[test]
fn test_next_pod_availability_check() {
    let now = t(0);
    let mut not_ready = pod("p", "Running");
    not_ready.status.conditions.push(PodConditionView {
        type_: "Ready".into(),
        status: "False".into(),
        last_transition_time: Some(Time(now)),
    });
    let cases: &[(&str, PodView, i32, Option<Duration>)] = &[
        ("not ready", not_ready, 0, None),
        (
            "ready m0",
            ready_at(pod("p", "Running"), Some(now)),
            0,
            None,
        ),
        ("zero ltt m1", ready_at(pod("p", "Running"), None), 1, None),
        (
            "ready now m1",
            ready_at(pod("p", "Running"), Some(now)),
            1,
            Some(Duration::from_secs(1)),
        ),
        (
            "ready 20s ago m30",
            ready_at(pod("p", "Running"), Some(t(-20))),
            30,
            Some(Duration::from_secs(10)),
        ),
        (
            "ready 51s ago m50",
            ready_at(pod("p", "Running"), Some(t(-51))),
            50,
            None,
        ),
    ];
    for (name, p, m, want) in cases {
        assert_eq!(next_pod_availability_check(p, *m, now), *want, "{name}");
    }
}

/// Upstream `TestFindMinNextPodAvailabilitySimpleCheck` and
/// `TestFindMinNextPodAvailability` (master).
#[test]
fn test_find_min_next_pod_availability() {
    let now = t(0);
    let unready = pod("u", "Running");
    let ready = |s: i64| Arc::new(ready_at(pod("r", "Running"), Some(t(s))));
    let empty: Vec<Arc<PodView>> = vec![];
    assert_eq!(
        find_min_next_pod_availability_simple_check(&empty, 0, now),
        None
    );
    let two_unready = vec![Arc::new(unready.clone()), Arc::new(unready.clone())];
    assert_eq!(
        find_min_next_pod_availability_simple_check(&two_unready, 0, now),
        None
    );
    assert_eq!(
        find_min_next_pod_availability_simple_check(&[ready(0), ready(0)], 0, now),
        None
    );
    let mixed = vec![
        Arc::new(unready.clone()),
        ready(-2),
        ready(0),
        ready(-4),
        Arc::new(unready.clone()),
    ];
    assert_eq!(
        find_min_next_pod_availability_simple_check(&mixed, 10, now),
        Some((Duration::from_secs(6), 3))
    );
    let boundary = vec![
        Arc::new(unready.clone()),
        ready(-15),
        ready(-11),
        ready(-10),
        Arc::new(unready),
    ];
    assert_eq!(
        find_min_next_pod_availability_simple_check(&boundary, 10, now),
        None
    );

    let clock = FakeClock::new(t(2));
    assert_eq!(
        find_min_next_pod_availability_check(&mixed, 10, now, &clock),
        Some(Duration::from_secs(4))
    );
    clock.set(t(7));
    assert_eq!(
        find_min_next_pod_availability_check(&mixed, 10, now, &clock),
        Some(Duration::ZERO)
    );
}

#[test]
fn controller_ref_picks_first_controller() {
    let mk = |uid: &str, controller: Option<bool>| OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: uid.into(),
        uid: uid.into(),
        controller,
        block_owner_deletion: None,
    };
    let mut meta = ObjectMeta::default();
    assert!(controller_ref(&meta).is_none());
    meta.owner_references = Some(vec![
        mk("a", None),
        mk("b", Some(true)),
        mk("c", Some(true)),
    ]);
    assert_eq!(controller_ref(&meta).unwrap().uid, "b");
    assert!(is_controlled_by(&meta, "b"));
    assert!(!is_controlled_by(&meta, "c"));
}

#[test]
fn full_pod_and_view_agree() {
    let json = include_str!("../tests/data/pod.json");
    let full: Pod = serde_json::from_str(json).unwrap();
    let view: PodView = serde_json::from_str(json).unwrap();
    assert_eq!(full.max_container_restarts(), (2, 1));
    assert_eq!(view.max_container_restarts(), (2, 1));
    assert_eq!(is_pod_ready(&full), is_pod_ready(&view));
    assert_eq!(pod_ready_time(&full), pod_ready_time(&view));
    assert_eq!(pod_deletion_cost(&full), 10);
    assert_eq!(pod_deletion_cost(&view), 10);
    assert_eq!(full.node_name(), view.node_name());
    assert_eq!(pod_key(&view), "default/web-7c5ddbdf54-x2x7k");
    assert!(is_pod_terminating(&view) && is_pod_terminating(&full));
}
