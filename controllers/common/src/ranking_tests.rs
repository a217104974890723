//! Table tests for [`super`]: upstream `TestSortingActivePodsWithRanks`,
//! `TestGetPodsToDelete`, and cases derived from `ActivePodsWithRanks.Less`'s rules.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

use super::*;
use crate::pod_util::POD_DELETION_COST_ANNOTATION;
use crate::pod_view::{ContainerStatusView, InitContainerView, PodConditionView, PodView};

/// Fixed "now": 2024-05-15T00:00:00Z.
fn now() -> Timestamp {
    "2024-05-15T00:00:00Z".parse().unwrap()
}

/// One calendar month before `now()`.
fn month_ago() -> Timestamp {
    "2024-04-15T00:00:00Z".parse().unwrap()
}

fn hours_ago(h: i64) -> Timestamp {
    now().checked_sub(SignedDuration::from_hours(h)).unwrap()
}

#[derive(Default, Clone)]
struct Spec {
    name: &'static str,
    node: &'static str,
    phase: &'static str,
    ready: bool,
    restarts: i32,
    sidecar_restarts: i32,
    ready_since: Option<Timestamp>,
    created: Option<Timestamp>,
    cost: Option<&'static str>,
    uid: &'static str,
}

fn build(s: Spec) -> Arc<PodView> {
    let mut p = PodView::default();
    p.metadata.name = Some(s.name.into());
    p.metadata.namespace = Some("default".into());
    if !s.uid.is_empty() {
        p.metadata.uid = Some(s.uid.into());
    }
    p.metadata.creation_timestamp = s.created.map(Time);
    if let Some(c) = s.cost {
        p.metadata.annotations = Some(
            [(POD_DELETION_COST_ANNOTATION.to_string(), c.to_string())]
                .into_iter()
                .collect(),
        );
    }
    if !s.node.is_empty() {
        p.spec.node_name = Some(s.node.into());
    }
    p.status.phase = Some(s.phase.into());
    if s.ready {
        p.status.conditions.push(PodConditionView {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: s.ready_since.map(Time),
        });
        p.status.container_statuses.push(ContainerStatusView {
            name: "c".into(),
            ready: true,
            restart_count: s.restarts,
        });
        if s.sidecar_restarts > 0 {
            p.spec.init_containers.push(InitContainerView {
                name: "sidecar".into(),
                restart_policy: Some("Always".into()),
            });
            p.status.init_container_statuses.push(ContainerStatusView {
                name: "sidecar".into(),
                ready: true,
                restart_count: s.sidecar_restarts,
            });
        }
    }
    Arc::new(p)
}

fn ready(
    name: &'static str,
    node: &'static str,
    since: Option<Timestamp>,
    created: Option<Timestamp>,
) -> Spec {
    Spec {
        name,
        node,
        phase: "Running",
        ready: true,
        ready_since: since,
        created,
        ..Spec::default()
    }
}

fn name(p: &Arc<PodView>) -> &str {
    p.metadata.name.as_deref().unwrap_or_default()
}

/// Upstream `TestSortingActivePodsWithRanks`.
#[test]
fn test_sorting_active_pods_with_ranks() {
    let (t, mo) = (Some(now()), Some(month_ago()));
    let pods: HashMap<&str, Arc<PodView>> = [
        Spec {
            name: "unscheduled",
            phase: "Pending",
            ..Spec::default()
        },
        Spec {
            name: "pending",
            node: "node",
            phase: "Pending",
            ..Spec::default()
        },
        Spec {
            name: "unknown-phase",
            node: "node",
            phase: "Unknown",
            ..Spec::default()
        },
        Spec {
            name: "not-ready",
            node: "node",
            phase: "Running",
            ..Spec::default()
        },
        ready("ready-no-ltt", "node", None, None),
        ready("ready-now", "node", t, t),
        ready("ready-then", "node", mo, mo),
        Spec {
            restarts: 9001,
            ..ready("ready-high-restarts", "node", t, t)
        },
        Spec {
            restarts: 9001,
            sidecar_restarts: 9001,
            ..ready("ready-high-side-restarts", "node", t, t)
        },
        ready("ready-now-created-then", "node", t, mo),
        Spec {
            cost: Some("10"),
            ..ready("low-cost", "node", t, mo)
        },
        Spec {
            cost: Some("100"),
            ..ready("high-cost", "node", t, mo)
        },
        Spec {
            name: "unscheduled-5h",
            phase: "Pending",
            created: Some(hours_ago(5)),
            ..Spec::default()
        },
        Spec {
            name: "unscheduled-8h",
            phase: "Pending",
            created: Some(hours_ago(8)),
            ..Spec::default()
        },
        ready("ready-2h", "", Some(hours_ago(2)), mo),
        ready("ready-5h", "", Some(hours_ago(5)), mo),
        ready("ready-8h", "", Some(hours_ago(8)), mo),
    ]
    .into_iter()
    .map(|s| (s.name, build(s)))
    .collect();
    let on = RankingOptions::default();
    let off = RankingOptions {
        pod_deletion_cost: false,
    };
    let less = |a: &str, ra: i32, b: &str, rb: i32, opts: RankingOptions| {
        pod_deletion_less(&*pods[a], ra, &*pods[b], rb, Some(now()), opts)
    };

    let equal = [
        ("unscheduled", "unscheduled"),
        ("pending", "pending"),
        ("unknown-phase", "unknown-phase"),
        ("not-ready", "not-ready"),
        ("ready-now-created-then", "ready-now-created-then"),
        ("ready-now", "ready-now"),
        ("ready-then", "ready-then"),
        ("ready-high-restarts", "ready-high-restarts"),
        ("unscheduled-5h", "unscheduled-8h"),
        ("ready-5h", "ready-8h"),
    ];
    for (a, b) in equal {
        assert!(!less(a, 1, b, 1, on), "{a} < {b} should be false");
        assert!(!less(b, 1, a, 1, on), "{b} < {a} should be false");
    }

    let lesser = [
        ("unscheduled", 1, "pending", 2, on),
        ("unscheduled", 2, "pending", 1, on),
        ("pending", 1, "unknown-phase", 2, on),
        ("unknown-phase", 1, "not-ready", 2, on),
        ("not-ready", 1, "ready-no-ltt", 1, on),
        ("ready-no-ltt", 1, "ready-now", 1, on),
        ("ready-now", 2, "ready-no-ltt", 1, on),
        ("ready-now", 1, "ready-then", 1, on),
        ("ready-now", 2, "ready-then", 1, on),
        ("ready-high-restarts", 1, "ready-now", 1, on),
        ("ready-high-side-restarts", 1, "ready-high-restarts", 1, on),
        ("ready-now", 2, "ready-high-restarts", 1, on),
        ("ready-now", 1, "ready-now-created-then", 1, on),
        ("ready-now-created-then", 2, "ready-now", 1, on),
        ("low-cost", 2, "high-cost", 1, on),
        ("high-cost", 2, "low-cost", 1, off),
        ("ready-2h", 1, "ready-5h", 1, on),
    ];
    for (i, (a, ra, b, rb, opts)) in lesser.into_iter().enumerate() {
        assert!(
            less(a, ra, b, rb, opts),
            "case {i}: ({a},{ra}) < ({b},{rb})"
        );
        assert!(
            !less(b, rb, a, ra, opts),
            "case {i}: ({b},{rb}) < ({a},{ra}) should be false"
        );
    }
}

/// Upstream `TestGetPodsToDelete`.
#[test]
fn test_get_pods_to_delete() {
    let u = build(Spec {
        name: "U",
        phase: "Pending",
        ..Spec::default()
    });
    let sp = build(Spec {
        name: "SP",
        node: "fake-node",
        phase: "Pending",
        ..Spec::default()
    });
    let nr = {
        let mut p = (*build(Spec {
            name: "NR",
            node: "fake-node",
            phase: "Running",
            ..Spec::default()
        }))
        .clone();
        p.status.conditions.push(PodConditionView {
            type_: "Ready".into(),
            status: "False".into(),
            last_transition_time: None,
        });
        Arc::new(p)
    };
    let r1 = build(ready("R1", "fake-node-1", None, None));
    let r2 = build(ready("R2", "fake-node-2", None, None));

    struct Case {
        name: &'static str,
        pods: Vec<Arc<PodView>>,
        related: Option<Vec<Arc<PodView>>>,
        n: usize,
        want: Vec<&'static str>,
    }
    let c = |p: &Arc<PodView>| p.clone();
    let cases = vec![
        Case {
            name: "len(pods) = 0 (i.e., diff = 0 too)",
            pods: vec![],
            related: None,
            n: 0,
            want: vec![],
        },
        Case {
            name: "diff = len(pods)",
            pods: vec![c(&nr), c(&r1)],
            related: None,
            n: 2,
            want: vec!["NR", "R1"],
        },
        Case {
            name: "diff < len(pods)",
            pods: vec![c(&r1), c(&nr)],
            related: None,
            n: 1,
            want: vec!["NR"],
        },
        Case {
            name: "various pod phases and conditions, diff = len(pods)",
            pods: vec![c(&r1), c(&r1), c(&r2), c(&nr), c(&sp), c(&u)],
            related: None,
            n: 6,
            want: vec!["R1", "R1", "R2", "NR", "SP", "U"],
        },
        Case {
            name: "various pod phases and conditions, diff = len(pods), relatedPods empty",
            pods: vec![c(&r1), c(&r1), c(&r2), c(&nr), c(&sp), c(&u)],
            related: Some(vec![]),
            n: 6,
            want: vec!["R1", "R1", "R2", "NR", "SP", "U"],
        },
        Case {
            name: "scheduled vs unscheduled, diff < len(pods)",
            pods: vec![c(&sp), c(&u)],
            related: None,
            n: 1,
            want: vec!["U"],
        },
        Case {
            name: "ready vs not-ready, diff < len(pods)",
            pods: vec![c(&r1), c(&nr), c(&nr)],
            related: None,
            n: 2,
            want: vec!["NR", "NR"],
        },
        Case {
            name: "ready and colocated with another ready pod vs not colocated, diff < len(pods)",
            pods: vec![c(&r1), c(&r2)],
            related: Some(vec![c(&r1), c(&r2), c(&r2)]),
            n: 1,
            want: vec!["R2"],
        },
        Case {
            name: "pending vs running, diff < len(pods)",
            pods: vec![c(&sp), c(&nr)],
            related: None,
            n: 1,
            want: vec!["SP"],
        },
        Case {
            name: "various pod phases and conditions, diff < len(pods)",
            pods: vec![c(&r1), c(&r2), c(&nr), c(&sp), c(&u)],
            related: None,
            n: 3,
            want: vec!["U", "SP", "NR"],
        },
    ];
    for case in cases {
        let related = case.related.clone().unwrap_or_else(|| case.pods.clone());
        let got = get_pods_to_delete(
            &case.pods,
            &related,
            case.n,
            now(),
            RankingOptions::default(),
        );
        let got: Vec<&str> = got.iter().map(name).collect();
        assert_eq!(got, case.want, "{}", case.name);
    }
}

/// Spec derived vector D1.
#[test]
fn log_rank_vectors() {
    let cases: &[(i128, i64)] = &[
        (0, -1),
        (-5, -1),
        (1, 0),
        (1_000_000_000, 29),
        (7_200_000_000_000, 42),
        (18_000_000_000_000, 44),
        (28_800_000_000_000, 44),
        (2_592_000_000_000_000, 51),
        (1 << 40, 40),
        ((1 << 40) - 1, 39),
    ];
    for (d, want) in cases {
        assert_eq!(log_rank(*d), *want, "log_rank({d})");
    }
}

/// Spec derived vector D4: same log bucket → lower UID deleted first.
#[test]
fn log_tie_breaks_on_uid() {
    let t = |ms: i64| Some(now().checked_sub(SignedDuration::from_millis(ms)).unwrap());
    let created = Some(month_ago());
    let z = build(Spec {
        uid: "z",
        ..ready("z", "node", t(100), created)
    });
    let a = build(Spec {
        uid: "a",
        ..ready("a", "node", t(120), created)
    });
    let pods = vec![z.clone(), a.clone()];
    let got = get_pods_to_delete(&pods, &pods, 1, now(), RankingOptions::default());
    assert_eq!(name(&got[0]), "a");
}

#[test]
fn indirectly_related_pods_dedup_by_uid_and_skip_invalid() {
    let p1 = build(Spec {
        uid: "1",
        ..ready("p1", "n", None, None)
    });
    let p2 = build(Spec {
        uid: "2",
        ..ready("p2", "n", None, None)
    });
    let sets = ["rs-a", "rs-invalid", "rs-b"];
    let got = get_indirectly_related_pods(&sets, |s| match *s {
        "rs-a" => Some(vec![p1.clone()]),
        "rs-b" => Some(vec![p1.clone(), p2.clone()]),
        _ => None,
    });
    let got: Vec<&str> = got.iter().map(name).collect();
    assert_eq!(got, ["p1", "p2"]);
}

#[test]
fn ranks_count_active_related_pods_per_node() {
    let a = build(ready("a", "n1", None, None));
    let b = build(ready("b", "n1", None, None));
    let c = build(ready("c", "n2", None, None));
    let mut dead = (*build(ready("d", "n2", None, None))).clone();
    dead.status.phase = Some("Failed".into());
    let dead = Arc::new(dead);
    let ranks = rank_by_related_pods_on_same_node(&[a.clone(), c.clone()], &[a, b, c, dead]);
    assert_eq!(ranks, [2, 1]);
}

#[test]
fn age_ratios() {
    let older = build(ready("old", "n", Some(hours_ago(4)), Some(hours_ago(4))));
    let young = build(ready("young", "n", Some(hours_ago(1)), Some(hours_ago(1))));
    let pods = vec![older, young];
    assert_eq!(sorting_deletion_age_ratios(&pods, 2, now()), vec![4.0, 1.0]);
    assert_eq!(sorting_deletion_age_ratios(&pods, 1, now()), vec![4.0]);
}

fn arb_pod() -> impl Strategy<Value = Arc<PodView>> {
    (
        prop_oneof![Just(""), Just("n1"), Just("n2")],
        prop_oneof![Just("Pending"), Just("Running"), Just("Unknown")],
        any::<bool>(),
        0..3i32,
        proptest::option::of(0..100_000i64),
        proptest::option::of(0..100_000i64),
        prop_oneof![Just(None), Just(Some("5")), Just(Some("-1"))],
        prop_oneof![Just(""), Just("a"), Just("b")],
    )
        .prop_map(
            |(node, phase, is_ready, restarts, ready_s, created_s, cost, uid)| {
                let ago = |s: i64| now().checked_sub(SignedDuration::from_secs(s)).unwrap();
                build(Spec {
                    name: "p",
                    node,
                    phase,
                    ready: is_ready,
                    restarts,
                    ready_since: ready_s.map(ago),
                    created: created_s.map(ago),
                    cost,
                    uid,
                    ..Spec::default()
                })
            },
        )
}

proptest! {
    /// Irreflexive and asymmetric, and sorting never panics and is a permutation.
    #[test]
    fn ordering_is_asymmetric(pods in proptest::collection::vec(arb_pod(), 1..12), ranks in proptest::collection::vec(0..3i32, 12)) {
        let opts = RankingOptions::default();
        for (i, a) in pods.iter().enumerate() {
            prop_assert!(!pod_deletion_less(&**a, ranks[i], &**a, ranks[i], Some(now()), opts));
            for (j, b) in pods.iter().enumerate() {
                let ab = pod_deletion_less(&**a, ranks[i], &**b, ranks[j], Some(now()), opts);
                let ba = pod_deletion_less(&**b, ranks[j], &**a, ranks[i], Some(now()), opts);
                prop_assert!(!(ab && ba));
            }
        }
        let mut sorted = pods.clone();
        let mut r = ranks[..pods.len()].to_vec();
        sort_active_pods_with_ranks(&mut sorted, &mut r, Some(now()), opts);
        // A permutation that keeps each pod paired with its rank.
        let key = |p: &Arc<PodView>, r: i32| (Arc::as_ptr(p) as usize, r);
        let mut before: Vec<_> = pods.iter().zip(&ranks).map(|(p, r)| key(p, *r)).collect();
        let mut after: Vec<_> = sorted.iter().zip(&r).map(|(p, r)| key(p, *r)).collect();
        before.sort_unstable();
        after.sort_unstable();
        prop_assert_eq!(before, after);
    }
}
