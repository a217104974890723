//! Property tests for the rollout arithmetic with arbitrary inputs:
//!
//! * `maxSurge` / `maxUnavailable` resolution (`ResolveFenceposts`, `GetScaledValueFromIntOrPercent`)
//!   against exact integer arithmetic and Go's `int32(int)` conversion, and never both zero
//!   within the `i32` range, as upstream enforces;
//! * `NewRSNewReplicas`: the new ReplicaSet never exceeds `replicas + maxSurge` in total and
//!   never passes `spec.replicas` when it grows; it only shrinks from above `spec.replicas`
//!   down to exactly that;
//! * proportional scaling (`scale()`): never a negative ReplicaSet, exactly the delta is handed
//!   out (unless the leftover would take the largest ReplicaSet below zero), and every
//!   ReplicaSet moves in the direction of the scaling when the annotations are consistent.
//!
//! Case count: proptest's default (256), scaled with `PROPTEST_CASES`.

use crate::plan::scale::{apply_scale_steps, scale};
use crate::util::intstr::scaled_value_go_int;
use crate::util::sizing::new_rs_new_replicas;
use crate::util::strategy::resolve_fenceposts;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;
use serde_json::json;

fn int_or_percent() -> impl Strategy<Value = IntOrString> {
    prop_oneof![
        (0..20i32).prop_map(IntOrString::Int),
        any::<i32>().prop_map(IntOrString::Int),
        (0..=100i64).prop_map(|p| IntOrString::String(format!("{p}%"))),
        any::<i64>().prop_map(|p| IntOrString::String(format!("{p}%"))),
        prop::sample::select(&["", "%", "x%", "1.5%", "+5%", "-0%", "25", " 5%", "05%"][..])
            .prop_map(|s| IntOrString::String(s.to_string())),
    ]
}

/// Go's `GetScaledValueFromIntOrPercent` computed exactly (the f64 math agrees while
/// `|percent * total|` stays below 2^46); `None` when outside that range or malformed.
fn exact_scaled(v: &IntOrString, total: i32, round_up: bool) -> Option<i128> {
    match v {
        IntOrString::Int(n) => Some(i128::from(*n)),
        IntOrString::String(s) => {
            let p: i64 = s.strip_suffix('%')?.parse().ok()?;
            let num = i128::from(p) * i128::from(total);
            if num.abs() >= 1 << 46 {
                return None;
            }
            let (q, r) = (num.div_euclid(100), num.rem_euclid(100));
            Some(if round_up && r != 0 { q + 1 } else { q })
        }
    }
}

fn deployment(replicas: i32, surge: &IntOrString, unavailable: &IntOrString) -> Deployment {
    let mut d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "d", "namespace": "ns", "uid": "d-uid"},
        "spec": {"replicas": replicas, "selector": {},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {}}},
        "status": {"replicas": replicas}
    }))
    .expect("deployment");
    if let Some(ru) = d
        .spec
        .strategy
        .as_mut()
        .and_then(|s| s.rolling_update.as_mut())
    {
        ru.max_surge = Some(surge.clone());
        ru.max_unavailable = Some(unavailable.clone());
    }
    d
}

fn replica_set(i: usize, replicas: i32, annotations: Option<(i32, i32)>) -> ReplicaSet {
    let mut rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": format!("rs-{i}"), "namespace": "ns", "uid": format!("uid-{i}"),
                     "creationTimestamp": format!("2024-01-01T00:{:02}:00Z", i % 60)},
        "spec": {"replicas": replicas, "selector": {}},
        "status": {"replicas": replicas, "availableReplicas": 0}
    }))
    .expect("replica set");
    if let Some((desired, max)) = annotations {
        rs.metadata.annotations = Some(
            [
                ("deployment.kubernetes.io/desired-replicas", desired),
                ("deployment.kubernetes.io/max-replicas", max),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
    }
    rs
}

fn small_int_or_percent() -> impl Strategy<Value = IntOrString> {
    prop_oneof![
        (0..5i32).prop_map(IntOrString::Int),
        (0..=100i64).prop_map(|p| IntOrString::String(format!("{p}%"))),
    ]
}

proptest! {
    #[test]
    fn fenceposts_follow_go_arithmetic(surge in int_or_percent(), unavailable in int_or_percent(), desired in prop_oneof![0..1000i32, any::<i32>()]) {
        let got = resolve_fenceposts(Some(&surge), Some(&unavailable), desired);
        let (s, u) = (
            scaled_value_go_int(Some(&surge), desired, true),
            scaled_value_go_int(Some(&unavailable), desired, false),
        );
        match (&got, s, u) {
            (Ok((gs, gu)), Ok(s), Ok(u)) => {
                prop_assert_eq!(*gs, s as i32);
                prop_assert_eq!(*gu, if s == 0 && u == 0 { 1 } else { u as i32 });
                if let (Some(es), Some(eu)) = (exact_scaled(&surge, desired, true), exact_scaled(&unavailable, desired, false)) {
                    prop_assert_eq!(i128::from(s), es);
                    prop_assert_eq!(i128::from(u), eu);
                    // Within the int32 range the two can never both be zero.
                    if i32::try_from(es).is_ok() && i32::try_from(eu).is_ok() {
                        prop_assert!((*gs, *gu) != (0, 0));
                    }
                }
            }
            (Err(_), s, u) => prop_assert!(s.is_err() || u.is_err()),
            (Ok(_), s, u) => prop_assert!(false, "resolved although {:?} / {:?}", s, u),
        }
    }

    #[test]
    fn new_rs_never_overshoots(
        desired in 0..200i32,
        surge in small_int_or_percent(),
        unavailable in small_int_or_percent(),
        new_size in 0..250i32,
        old_sizes in prop::collection::vec(0..100i32, 0..4),
    ) {
        let d = deployment(desired, &surge, &unavailable);
        let new_rs = replica_set(0, new_size, None);
        let olds: Vec<ReplicaSet> = old_sizes.iter().enumerate().map(|(i, r)| replica_set(i + 1, *r, None)).collect();
        let mut all: Vec<&ReplicaSet> = olds.iter().collect();
        all.push(&new_rs);
        let got = new_rs_new_replicas(&d, &all, &new_rs).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (max_surge, _) = resolve_fenceposts(Some(&surge), Some(&unavailable), desired)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let total: i32 = old_sizes.iter().sum::<i32>() + new_size;
        prop_assert!(got >= 0);
        if got > new_size {
            prop_assert!(got <= desired, "grew to {} past {}", got, desired);
            prop_assert!(total - new_size + got <= desired + max_surge, "total {} + {} past {} + {}", total - new_size, got, desired, max_surge);
        } else if got < new_size {
            // Only a new ReplicaSet above `spec.replicas` is brought back, to exactly that.
            prop_assert_eq!(got, desired, "shrank from {}", new_size);
            prop_assert!(total < desired + max_surge);
        }
    }

    #[test]
    fn proportional_scaling_hands_out_exactly_the_delta(
        desired in 0..300i32,
        old_desired in 1..300i32,
        surge in small_int_or_percent(),
        old_surge in 0..5i32,
        sizes in prop::collection::vec(0..120i32, 2..6),
        with_new in any::<bool>(),
        consistent in any::<bool>(),
        stale in prop::collection::vec((0..300i32, 0..300i32), 6),
    ) {
        let d = deployment(desired, &surge, &IntOrString::Int(0));
        let rss: Vec<ReplicaSet> = sizes
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let ann = if consistent { (old_desired, old_desired + old_surge) } else { stale[i] };
                replica_set(i, *r, Some(ann))
            })
            .collect();
        let (new_rs, old_rss): (Option<&ReplicaSet>, Vec<&ReplicaSet>) = if with_new {
            (rss.last(), rss[..rss.len() - 1].iter().collect())
        } else {
            (None, rss.iter().collect())
        };
        let steps = scale(&d, new_rs, &old_rss);
        let all: Vec<&ReplicaSet> = rss.iter().collect();
        let after = apply_scale_steps(&all, &steps, &d);
        let before: Vec<i32> = sizes.clone();
        let now: Vec<i32> = after.iter().map(|rs| rs.spec.replicas.unwrap_or(0)).collect();
        prop_assert!(now.iter().all(|r| *r >= 0), "negative size: {:?} -> {:?}", before, now);
        let active = before.iter().filter(|r| **r > 0).count();
        let (max_surge, _) = resolve_fenceposts(Some(&surge), Some(&IntOrString::Int(0)), desired)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        // The new RS is never saturated here (nothing is available), so with two or more
        // active ReplicaSets this is the proportional branch.
        if active >= 2 {
            let allowed = if desired > 0 { desired + max_surge } else { 0 };
            let sum: i32 = now.iter().sum();
            let first_clamped = steps.first().is_some_and(|s| s.new_replicas == 0);
            prop_assert!(sum == allowed || (first_clamped && sum > allowed),
                "{:?} -> {:?}: sum {} vs allowed {}", before, now, sum, allowed);
            prop_assert!(before.iter().zip(&now).all(|(b, n)| *b > 0 || *n == 0), "an inactive ReplicaSet grew: {:?} -> {:?}", before, now);
            let old_allowed = old_desired + old_surge;
            let total: i32 = before.iter().sum();
            if consistent && desired > 0 && (allowed - total).signum() == (allowed - old_allowed).signum() {
                let up = allowed >= total;
                prop_assert!(before.iter().zip(&now).all(|(b, n)| if up { n >= b } else { n <= b }),
                    "not all moved {}: {:?} -> {:?}", if up { "up" } else { "down" }, before, now);
            }
        } else {
            prop_assert!(steps.len() <= 1);
        }
    }
}
