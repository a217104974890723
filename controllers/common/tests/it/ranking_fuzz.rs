//! Property tests for the deletion ranking (upstream `ActivePodsWithRanks.Less`) with arbitrary
//! pods: the comparator is irreflexive and asymmetric, transitive whenever distinct timestamps
//! fall in distinct log2 buckets, and sorting yields a permutation that is ordered by it.
//!
//! Upstream's comparator is not transitive in one corner, kept here as it is upstream: two pods
//! with the same ready (or creation) time fall through to later rules, while a third pod whose
//! time differs but shares the log2 bucket is ordered against each of them by UID. The sort
//! must still terminate with a permutation there ([`upstream_cycle_is_sorted_without_panic`]).
//!
//! Case count: proptest's default (256), scaled with `PROPTEST_CASES`.

use std::sync::Arc;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kcm_controller::pod_view::PodView;
use kcm_controller::ranking::{RankingOptions, pod_deletion_less, sort_active_pods_with_ranks};
use proptest::prelude::*;
use serde_json::json;

const NOW: i64 = 1_700_000_000;

/// Seconds before `NOW`: spaced by 16x (distinct log2 buckets) or dense (shared buckets).
const SPACED: &[i64] = &[2, 32, 512, 8192];
const DENSE: &[i64] = &[2, 3, 32, 33, 40, 512];

fn ts(secs_ago: i64) -> String {
    (Timestamp::from_second(NOW).expect("now") - SignedDuration::from_secs(secs_ago)).to_string()
}

fn pod_strategy(times: &'static [i64]) -> impl Strategy<Value = Arc<PodView>> {
    let time = prop::option::weighted(0.8, prop::sample::select(times));
    (
        (prop::sample::select(&["", "n1", "n2"][..]), prop::sample::select(&["Pending", "Running", "Unknown", "Failed"][..]), any::<bool>()),
        (time.clone(), time, prop::option::of(-2..3i32)),
        (0..3i32, 0..2i32, prop::sample::select(&["a", "b", "c", "d"][..])),
    )
        .prop_map(|((node, phase, ready), (ready_at, created_at, cost), (restarts, sidecar_restarts, uid))| {
            let mut meta = json!({"name": uid, "namespace": "ns", "uid": uid});
            if let Some(c) = created_at {
                meta["creationTimestamp"] = json!(ts(c));
            }
            if let Some(c) = cost {
                meta["annotations"] = json!({"controller.kubernetes.io/pod-deletion-cost": c.to_string()});
            }
            let mut cond = json!({"type": "Ready", "status": if ready { "True" } else { "False" }});
            if let Some(t) = ready_at {
                cond["lastTransitionTime"] = json!(ts(t));
            }
            let v = json!({
                "metadata": meta,
                "spec": {"nodeName": node, "initContainers": [{"name": "side", "restartPolicy": "Always"}]},
                "status": {"phase": phase, "conditions": [cond],
                    "containerStatuses": [{"name": "c", "ready": ready, "restartCount": restarts}],
                    "initContainerStatuses": [{"name": "side", "ready": true, "restartCount": sidecar_restarts}]}
            });
            Arc::new(serde_json::from_value::<PodView>(v).expect("pod"))
        })
}

fn now() -> Option<Timestamp> {
    Timestamp::from_second(NOW).ok()
}

fn less(a: &(Arc<PodView>, i32), b: &(Arc<PodView>, i32)) -> bool {
    pod_deletion_less(&*a.0, a.1, &*b.0, b.1, now(), RankingOptions::default())
}

fn ranked(
    times: &'static [i64],
    n: std::ops::Range<usize>,
) -> impl Strategy<Value = Vec<(Arc<PodView>, i32)>> {
    prop::collection::vec((pod_strategy(times), 0..3i32), n)
}

proptest! {
    #[test]
    fn irreflexive_and_asymmetric(p in ranked(DENSE, 2..3)) {
        prop_assert!(!less(&p[0], &p[0]));
        prop_assert!(!(less(&p[0], &p[1]) && less(&p[1], &p[0])));
    }

    #[test]
    fn transitive_when_times_are_bucket_separated(p in ranked(SPACED, 3..4)) {
        let (a, b, c) = (&p[0], &p[1], &p[2]);
        if less(a, b) && less(b, c) {
            prop_assert!(less(a, c));
        }
        // Incomparability is transitive too (a strict weak order).
        let eq = |x, y| !less(x, y) && !less(y, x);
        if eq(a, b) && eq(b, c) {
            prop_assert!(eq(a, c));
        }
    }

    #[test]
    fn sorting_orders_a_permutation(p in ranked(SPACED, 0..12), dense in ranked(DENSE, 0..12)) {
        for (input, must_be_ordered) in [(p, true), (dense, false)] {
            let mut pods: Vec<Arc<PodView>> = input.iter().map(|(p, _)| p.clone()).collect();
            let mut ranks: Vec<i32> = input.iter().map(|(_, r)| *r).collect();
            sort_active_pods_with_ranks(&mut pods, &mut ranks, now(), RankingOptions::default());
            let sorted: Vec<(Arc<PodView>, i32)> = pods.into_iter().zip(ranks).collect();
            let id = |x: &(Arc<PodView>, i32)| format!("{:?}", x);
            let mut before: Vec<String> = input.iter().map(id).collect();
            let mut after: Vec<String> = sorted.iter().map(id).collect();
            before.sort();
            after.sort();
            prop_assert_eq!(before, after, "pods and ranks stay paired, none lost");
            if must_be_ordered {
                for i in 0..sorted.len() {
                    for j in i + 1..sorted.len() {
                        prop_assert!(!less(&sorted[j], &sorted[i]), "{} before {}", i, j);
                    }
                }
            }
        }
    }
}

/// The upstream corner described in the module docs: A and C are ready since the same instant
/// and A has more restarts, B is ready 1 s later (same log2 bucket): A < C (restarts), C < B
/// and B < A (UIDs). Sorting must not panic and must keep every pod.
#[test]
fn upstream_cycle_is_sorted_without_panic() {
    let pod = |uid: &str, ready_at: i64, restarts: i32| {
        Arc::new(
            serde_json::from_value::<PodView>(json!({
                "metadata": {"name": uid, "uid": uid, "creationTimestamp": ts(100)},
                "spec": {"nodeName": "n1"},
                "status": {"phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ts(ready_at)}],
                    "containerStatuses": [{"name": "c", "ready": true, "restartCount": restarts}]}
            }))
            .expect("pod"),
        )
    };
    let (a, b, c) = (pod("3", 40, 5), pod("2", 41, 0), pod("1", 40, 0));
    let l = |x: &Arc<PodView>, y: &Arc<PodView>| {
        pod_deletion_less(&**x, 0, &**y, 0, now(), RankingOptions::default())
    };
    assert!(l(&a, &c) && l(&c, &b) && l(&b, &a), "the cycle exists");
    let mut pods = vec![a, b, c];
    let mut ranks = vec![0; 3];
    sort_active_pods_with_ranks(&mut pods, &mut ranks, now(), RankingOptions::default());
    let mut uids: Vec<&str> = pods
        .iter()
        .filter_map(|p| p.metadata.uid.as_deref())
        .collect();
    uids.sort_unstable();
    assert_eq!(uids, ["1", "2", "3"]);
}
