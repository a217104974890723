//! `DeploymentReplicaSetTerminatingReplicas` off, and a server that drops
//! `status.terminatingReplicas` (v1.33/v1.34 with default gates).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::config::ReplicaSetFeatures;
use crate::testing::{Harness, key, new_pod, new_replica_set, t0};

/// One running pod and one terminating pod of a 1-replica ReplicaSet, whose stored status
/// already counts the running one.
fn harness(features: ReplicaSetFeatures) -> Harness {
    let h = Harness::with_features(features);
    let rs = new_replica_set(1, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.add_pod(new_pod("running", &rs, "Running", Some(t0()), true));
    let mut t = new_pod("old", &rs, "Running", Some(t0()), true);
    t.metadata.deletion_timestamp = Some(Time(t0()));
    h.add_pod(t);
    h
}

/// Syncs, then feeds the last status PUT's answer back into the cache (the watch event);
/// returns how many PUTs the sync made.
async fn sync_and_observe(h: &Harness) -> usize {
    let before = h.api.updates.lock().len();
    h.controller.sync_replica_set(&key()).await.expect("sync");
    let updates = h.api.updates.lock().clone();
    if let Some(sent) = updates.last().filter(|_| updates.len() > before) {
        let mut stored = sent.clone();
        if *h.api.drops_terminating_replicas.lock()
            && let Some(s) = stored.status.as_mut()
        {
            s.terminating_replicas = None;
        }
        h.add_rs(&stored);
    }
    updates.len() - before
}

#[tokio::test]
async fn gate_off_writes_no_terminating_count_and_reaches_a_steady_state() {
    for features in [
        ReplicaSetFeatures {
            deployment_replica_set_terminating_replicas: false,
            ..Default::default()
        },
        ReplicaSetFeatures {
            enable_status_terminating_replicas: false,
            ..Default::default()
        },
    ] {
        assert!(!features.terminating_replicas());
        let h = harness(features);
        assert_eq!(sync_and_observe(&h).await, 1, "{features:?}");
        let sent = h.api.updates.lock()[0].status.clone().unwrap_or_default();
        assert_eq!((sent.replicas, sent.terminating_replicas), (1, None));
        assert_eq!(sync_and_observe(&h).await, 0, "{features:?}: no second PUT");
    }
}

#[tokio::test]
async fn gate_on_counts_terminating_pods() {
    let h = harness(ReplicaSetFeatures::default());
    assert_eq!(sync_and_observe(&h).await, 1);
    let sent = h.api.updates.lock()[0].status.clone().unwrap_or_default();
    assert_eq!(sent.terminating_replicas, Some(1));
    assert_eq!(sync_and_observe(&h).await, 0);
}

/// Upstream v1.37.2 with the gate on, against a server that drops the field: the computed
/// count never equals the stored absence, so `updateReplicaSetStatus` PUTs on every sync (the
/// server stores nothing new: no new resourceVersion, no watch event, no sync loop). kcm does
/// the same; turning the gate off stops it (previous test).
#[tokio::test]
async fn gate_on_against_a_server_dropping_the_field_puts_every_sync_like_upstream() {
    let h = harness(ReplicaSetFeatures::default());
    *h.api.drops_terminating_replicas.lock() = true;
    for _ in 0..3 {
        assert_eq!(sync_and_observe(&h).await, 1);
    }
}
