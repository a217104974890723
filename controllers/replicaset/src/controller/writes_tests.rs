//! Tests of the status write (upstream `TestControllerUpdateStatusWithFailure`).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ReplicaSetStatus;

use super::*;
use crate::testing::{FakeRsApi, new_replica_set};

#[tokio::test]
async fn test_controller_update_status_with_failure() {
    let rs = new_replica_set(1, &[("foo", "bar")]);
    let api = Arc::new(FakeRsApi::default());
    *api.stored.lock() = Some(rs.clone());
    *api.update_error.lock() = Some("fake error".into());
    let new = ReplicaSetStatus {
        replicas: 10,
        ..Default::default()
    };
    let err = update_replica_set_status(&api.client(), &rs, new)
        .await
        .expect_err("must fail");
    assert_eq!(err.to_string(), "fake error");
    assert_eq!(*api.gets.lock(), vec!["foobar".to_string()]);
    let updates = api.updates.lock();
    assert_eq!(updates.len(), 2);
    assert!(
        updates
            .iter()
            .all(|u| u.status.as_ref().map(|s| s.replicas) == Some(10))
    );
}

#[tokio::test]
async fn unchanged_status_is_not_written() {
    let mut rs = new_replica_set(1, &[("foo", "bar")]);
    rs.metadata.generation = Some(3);
    rs.status = Some(ReplicaSetStatus {
        replicas: 1,
        ready_replicas: Some(1),
        observed_generation: Some(3),
        terminating_replicas: Some(0),
        ..Default::default()
    });
    let api = Arc::new(FakeRsApi::default());
    let same = ReplicaSetStatus {
        replicas: 1,
        ready_replicas: Some(1),
        terminating_replicas: Some(0),
        ..Default::default()
    };
    update_replica_set_status(&api.client(), &rs, same)
        .await
        .expect("ok");
    assert!(api.updates.lock().is_empty());
}

#[tokio::test]
async fn terminating_nil_vs_zero_and_new_generation_are_written() {
    // D5: absent vs 0 differ → exactly one PUT.
    let mut rs = new_replica_set(1, &[("foo", "bar")]);
    rs.status = Some(ReplicaSetStatus {
        replicas: 1,
        ..Default::default()
    });
    let api = Arc::new(FakeRsApi::default());
    let new = ReplicaSetStatus {
        replicas: 1,
        terminating_replicas: Some(0),
        ..Default::default()
    };
    update_replica_set_status(&api.client(), &rs, new)
        .await
        .expect("ok");
    assert_eq!(api.updates.lock().len(), 1);
    // A new generation is written with observedGeneration = generation.
    let mut rs = new_replica_set(1, &[("foo", "bar")]);
    rs.metadata.generation = Some(2);
    rs.status = Some(ReplicaSetStatus {
        replicas: 1,
        observed_generation: Some(1),
        ..Default::default()
    });
    let api = Arc::new(FakeRsApi::default());
    let new = rs.status.clone().unwrap_or_default();
    let out = update_replica_set_status(&api.client(), &rs, new)
        .await
        .expect("ok");
    assert_eq!(out.status.and_then(|s| s.observed_generation), Some(2));
}
