//! Property tests for the JSON decoding of the projected pod type, [`PodView`], against
//! k8s-openapi's full `Pod` as the reference: pod-shaped JSON with random omissions, nulls and
//! wrong types is answered without panicking, and whenever `Pod` accepts it `PodView` does too
//! and every predicate the controllers use (readiness, activity, deletion cost, ready time,
//! restarts, owner references) gives the same answer on both.
//!
//! Case count: proptest's default (256), scaled with `PROPTEST_CASES`.

use k8s_openapi::api::core::v1::Pod;
use kcm_controller::pod_util::{
    PodLike, is_pod_active, is_pod_ready, is_pod_terminating, pod_deletion_cost, pod_ready_time,
};
use kcm_controller::pod_view::PodView;
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

fn pick<'a>(rng: &mut SmallRng, v: &[&'a str]) -> &'a str {
    v[rng.random_range(0..v.len())]
}

fn time(rng: &mut SmallRng) -> Value {
    json!(pick(
        rng,
        &[
            "2024-05-01T10:00:12Z",
            "2024-05-01T10:00:13.5Z",
            "1970-01-01T00:00:00Z"
        ]
    ))
}

/// A pod as kube-apiserver would send it, with random parts left out.
fn pod(rng: &mut SmallRng) -> Value {
    let mut meta = json!({"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "7"});
    if rng.random_bool(0.5) {
        meta["labels"] = json!({"app": "web", "pod-template-hash": "abc"});
    }
    if rng.random_bool(0.5) {
        let cost = pick(rng, &["10", "-5", "2147483648", "x", "", " 1", "+3", "0"]);
        meta["annotations"] = json!({"controller.kubernetes.io/pod-deletion-cost": cost});
    }
    if rng.random_bool(0.5) {
        meta["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "name": "rs", "uid": "rs-uid", "controller": rng.random_bool(0.5)}]);
    }
    if rng.random_bool(0.3) {
        meta["deletionTimestamp"] = time(rng);
        meta["deletionGracePeriodSeconds"] = json!(30);
    }
    if rng.random_bool(0.7) {
        meta["creationTimestamp"] = time(rng);
    }
    if rng.random_bool(0.3) {
        meta["managedFields"] = json!([{"manager": "kubectl", "operation": "Update"}]);
    }
    let mut spec = json!({"containers": [{"name": "c", "image": "nginx"}]});
    if rng.random_bool(0.6) {
        spec["nodeName"] = json!(pick(rng, &["", "node-a"]));
    }
    if rng.random_bool(0.4) {
        spec["initContainers"] = json!([{"name": "side", "image": "x", "restartPolicy": "Always"}]);
    }
    let mut status = json!({});
    if rng.random_bool(0.8) {
        status["phase"] = json!(pick(
            rng,
            &["Pending", "Running", "Succeeded", "Failed", "Unknown", ""]
        ));
    }
    if rng.random_bool(0.7) {
        let mut ready =
            json!({"type": "Ready", "status": pick(rng, &["True", "False", "Unknown"])});
        if rng.random_bool(0.7) {
            ready["lastTransitionTime"] = time(rng);
        }
        status["conditions"] = json!([{"type": "PodScheduled", "status": "True"}, ready]);
    }
    if rng.random_bool(0.6) {
        status["containerStatuses"] = json!([{"name": "c", "image": "nginx", "imageID": "",
            "ready": rng.random_bool(0.5), "restartCount": rng.random_range(0..5)}]);
        status["initContainerStatuses"] = json!([{"name": "side", "image": "x", "imageID": "",
            "ready": true, "restartCount": rng.random_range(0..5)}]);
    }
    if rng.random_bool(0.5) {
        status["startTime"] = time(rng);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})
}

/// Replaces a random node of `v` with null, a wrong type, or removes it.
fn mutate(rng: &mut SmallRng, v: &mut Value) {
    let replacement = match rng.random_range(0..6) {
        0 => Value::Null,
        1 => json!(42),
        2 => json!("str"),
        3 => json!([]),
        4 => json!({}),
        _ => json!(true),
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = &keys[rng.random_range(0..keys.len())];
            if rng.random_bool(0.5) {
                if let Some(child) = m.get_mut(k) {
                    mutate(rng, child);
                }
            } else if rng.random_bool(0.3) {
                m.remove(k);
            } else {
                m.insert(k.clone(), replacement);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let i = rng.random_range(0..a.len());
            if rng.random_bool(0.5) {
                mutate(rng, &mut a[i]);
            } else {
                a[i] = replacement;
            }
        }
        other => *other = replacement,
    }
}

/// Everything the controllers read through [`PodLike`], as comparable text.
fn projection(p: &impl PodLike) -> String {
    let m = p.meta();
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {} {} {} {:?}",
        m.name,
        m.namespace,
        m.uid,
        m.resource_version,
        m.labels,
        m.annotations,
        m.owner_references,
        m.deletion_timestamp,
        m.creation_timestamp,
        p.phase(),
        p.node_name(),
        p.max_container_restarts(),
        is_pod_ready(p),
        is_pod_active(p),
        is_pod_terminating(p),
        pod_deletion_cost(p),
        pod_ready_time(p),
    )
}

proptest! {
    #[test]
    fn pod_view_accepts_what_pod_accepts_and_agrees(seed in any::<u64>(), mutations in 0..4usize) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut v = pod(&mut rng);
        for _ in 0..mutations {
            mutate(&mut rng, &mut v);
        }
        let text = v.to_string();
        let view = serde_json::from_str::<PodView>(&text);
        if let Ok(full) = serde_json::from_str::<Pod>(&text) {
            let view = view.map_err(|e| TestCaseError::fail(format!("PodView rejects what Pod accepts: {e}\n{text}")))?;
            prop_assert_eq!(projection(&view), projection(&full), "{}", text);
            prop_assert!(view.metadata.managed_fields.is_none());
        }
    }

    #[test]
    fn truncated_and_arbitrary_bytes_never_panic(seed in any::<u64>(), cut in any::<prop::sample::Index>(), junk in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let text = pod(&mut rng).to_string();
        let _ = serde_json::from_str::<PodView>(&text[..cut.index(text.len() + 1)]);
        let _ = serde_json::from_slice::<PodView>(&junk);
    }
}

/// Guards the agreement property against being vacuous: most unmutated pods and a fair share
/// of mutated ones are accepted by the reference type.
#[test]
fn generator_yields_pods_the_reference_accepts() {
    let mut accepted = [0, 0];
    for seed in 0..400 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut v = pod(&mut rng);
        accepted[0] += usize::from(serde_json::from_value::<Pod>(v.clone()).is_ok());
        mutate(&mut rng, &mut v);
        accepted[1] += usize::from(serde_json::from_value::<Pod>(v).is_ok());
    }
    assert!(accepted[0] == 400 && accepted[1] > 100, "{accepted:?}");
}
