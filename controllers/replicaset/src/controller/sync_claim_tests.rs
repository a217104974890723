//! Claiming in a sync: adoption with the live recheck, release, patch
//! failures, and ReplicaSets being deleted (upstream `TestPatchPodFails`,
//! `TestDoNotAdoptOrCreateIfBeingDeleted*`, `TestDoNotPatchPodWithOtherControlRef`).

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_controller::ControlError;

use crate::testing::{Harness, key, labels, new_pod, new_replica_set, t0};

fn fail_with(h: &Harness, msg: &'static str) {
    h.pods
        .set_error(Some(Arc::new(move || ControlError::Other(msg.to_string()))));
}

#[tokio::test]
async fn test_do_not_patch_pod_with_other_control_ref() {
    let h = Harness::new(500);
    let rs = new_replica_set(2, &[("foo", "bar")]);
    h.add_rs(&rs);
    let mut other = new_replica_set(2, &[("foo", "bar")]);
    other.metadata.name = Some("AnotherRS".into());
    h.add_pod(new_pod("pod", &other, "Running", None, true));
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (2, 0, 0));
}

#[tokio::test]
async fn test_patch_pod_fails() {
    let h = Harness::new(500);
    let rs = new_replica_set(2, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.add_pod(new_pod("pod1", &rs, "Running", None, false));
    h.add_pod(new_pod("pod2", &rs, "Running", None, false));
    fail_with(&h, "fake Error");
    let err = h
        .controller
        .sync_replica_set(&key())
        .await
        .expect_err("patch error");
    assert!(err.to_string().contains("fake Error"), "{err}");
    assert_eq!(h.cdp(), (0, 0, 2));
    assert!(
        h.api.updates.lock().is_empty(),
        "no status write after a claim error"
    );
}

#[tokio::test]
async fn adopts_matching_orphans_with_one_live_recheck() {
    let h = Harness::new(500);
    let rs = new_replica_set(2, &[("foo", "bar")]);
    h.add_rs(&rs);
    let p1 = h.add_pod(new_pod("pod1", &rs, "Running", None, false));
    h.add_pod(new_pod("pod2", &rs, "Running", None, false));
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (0, 0, 2), "both adopted, none created");
    assert_eq!(h.api.gets.lock().len(), 1, "one uncached GET per sync");
    let patch = h
        .pods
        .state()
        .patches
        .into_iter()
        .find(|p| p.1 == "pod1")
        .expect("patch");
    let uid = rs.metadata.uid.clone().unwrap_or_default();
    let want = format!(
        r#"{{"metadata":{{"ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"foobar","uid":"{uid}","controller":true,"blockOwnerDeletion":true}}],"uid":"{}"}}}}"#,
        p1.metadata.uid.clone().unwrap_or_default()
    );
    assert_eq!(patch.2, want);
}

#[tokio::test]
async fn releases_owned_pods_that_stopped_matching() {
    let h = Harness::new(500);
    let rs = new_replica_set(1, &[("foo", "bar")]);
    h.add_rs(&rs);
    let mut pod = new_pod("pod1", &rs, "Running", None, true);
    pod.metadata.labels = Some(labels(&[("foo", "other")]));
    let pod = h.add_pod(pod);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    let st = h.pods.state();
    assert_eq!(st.patches.len(), 1);
    let uid = rs.metadata.uid.clone().unwrap_or_default();
    assert_eq!(
        st.patches[0].2,
        format!(
            r#"{{"metadata":{{"uid":"{}","ownerReferences":[{{"$patch":"delete","uid":"{uid}"}}]}}}}"#,
            pod.metadata.uid.clone().unwrap_or_default()
        )
    );
    assert_eq!(st.templates.len(), 1, "released pod is replaced");
}

#[tokio::test]
async fn test_do_not_adopt_or_create_if_being_deleted() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(2, &[("foo", "bar")]);
    rs.metadata.deletion_timestamp = Some(Time(t0()));
    h.add_rs(&rs);
    h.add_pod(new_pod("pod1", &rs, "Running", None, false));
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (0, 0, 0));
}

#[tokio::test]
async fn test_do_not_adopt_or_create_if_being_deleted_race() {
    let h = Harness::new(500);
    let rs = new_replica_set(2, &[("foo", "bar")]);
    h.add_rs(&rs);
    let mut live = rs.clone();
    live.metadata.deletion_timestamp = Some(Time(t0()));
    *h.api.stored.lock() = Some(live);
    h.add_pod(new_pod("pod1", &rs, "Running", None, false));
    let err = h
        .controller
        .sync_replica_set(&key())
        .await
        .expect_err("recheck rejects");
    assert!(err.to_string().contains("has just been deleted"), "{err}");
    assert_eq!(h.cdp(), (0, 0, 0));
}

#[tokio::test]
async fn deleting_rs_does_not_release_owned_non_matching_pod() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(1, &[("foo", "bar")]);
    rs.metadata.deletion_timestamp = Some(Time(t0()));
    h.add_rs(&rs);
    let mut pod = new_pod("pod1", &rs, "Running", None, true);
    pod.metadata.labels = Some(labels(&[("foo", "other")]));
    h.add_pod(pod);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (0, 0, 0));
}
