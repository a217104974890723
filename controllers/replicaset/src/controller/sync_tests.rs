use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ReplicaSetCondition, ReplicaSetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::SignedDuration;
use kcm_controller::ControlError;
use kcm_controller::error::NAMESPACE_TERMINATING_CAUSE;
use kcm_controller::worker::{RetryPolicy, process_item};

use super::*;
use crate::error::SyncError;
use crate::status::{REPLICA_FAILURE, get_condition};
use crate::testing::{Harness, key, new_pod, new_replica_set, pod_list, t0};

fn fail_with(h: &Harness, msg: &'static str) {
    h.pods
        .set_error(Some(Arc::new(move || ControlError::Other(msg.to_string()))));
}

fn status(replicas: i32, ready: i32, available: i32) -> ReplicaSetStatus {
    ReplicaSetStatus {
        replicas,
        ready_replicas: Some(ready),
        available_replicas: Some(available),
        terminating_replicas: Some(0),
        ..Default::default()
    }
}

#[tokio::test]
async fn test_sync_replica_set_does_nothing() {
    let h = Harness::new(500);
    let rs = new_replica_set(2, &[("foo", "bar")]);
    h.add_rs(&rs);
    for p in pod_list(2, "Running", &rs, "pod") {
        h.add_pod(p);
    }
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (0, 0, 0));
}

#[tokio::test]
async fn test_sync_replica_set_create_failures() {
    let h = Harness::new(500);
    let rs = new_replica_set(100, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.pods.set_create_limit(10);
    let err = h
        .controller
        .sync_replica_set(&key())
        .await
        .expect_err("create error");
    assert!(matches!(err, SyncError::Manage(_)), "{err}");
    let st = h.pods.state();
    assert_eq!(st.templates.len(), 10);
    assert_eq!(
        st.create_call_count, 15,
        "batches 1,2,4,8: the 4th batch is issued entirely"
    );
    // 100 expected, 90 never happen: 10 still outstanding.
    assert_eq!(
        h.controller.expectations().get_expectations(&key()),
        Some((10, 0))
    );
    // The failure is reported in the status.
    let updates = h.api.updates.lock();
    let last = updates
        .last()
        .and_then(|u| u.status.clone())
        .expect("status written");
    let cond = get_condition(&last, REPLICA_FAILURE).expect("ReplicaFailure");
    assert_eq!(cond.reason.as_deref(), Some("FailedCreate"));
}

/// v1.37.2 `syncReplicaSet` returns a manage error right after the status write, before it
/// plans the availability check: no `AddAfter` then (the error's rate-limited requeue only).
#[tokio::test(start_paused = true)]
async fn manage_error_skips_the_availability_requeue() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(2, &[("foo", "bar")]);
    rs.spec.min_ready_seconds = Some(5);
    h.add_rs(&rs);
    // Ready but not yet available: without the error a check would be planned in 5 s.
    h.add_pod(new_pod("foobar-1", &rs, "Running", Some(t0()), true));
    fail_with(&h, "boom");
    let err = h
        .controller
        .sync_replica_set(&key())
        .await
        .expect_err("create");
    assert!(matches!(err, SyncError::Manage(_)), "{err}");
    let st = h.api.updates.lock()[0].status.clone().unwrap_or_default();
    assert_eq!((st.ready_replicas, st.available_replicas), (Some(1), None));
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(h.controller.queue().len(), 0);
}

#[tokio::test]
async fn test_sync_replica_set_dormancy() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(2, &[("foo", "bar")]);
    rs.status = Some(status(1, 1, 1));
    h.add_rs(&rs);
    h.add_pod(new_pod("pod0", &rs, "Running", None, true));
    // 1. Status as computed: one create, no PUT.
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (1, 0, 0));
    assert_eq!(h.api.updates.lock().len(), 0);
    // 2. Expectations pending: no create, but a stale status is still written.
    rs.status = Some(status(0, 0, 0));
    h.add_rs(&rs);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (1, 0, 0));
    assert_eq!(h.api.updates.lock().len(), 1);
    // 3. Expectation observed; the create fails: condition added, PUT #2.
    h.controller.expectations().creation_observed(&key());
    rs.status = Some(status(1, 1, 1));
    h.add_rs(&rs);
    fail_with(&h, "fake Error");
    h.controller
        .sync_replica_set(&key())
        .await
        .expect_err("create fails");
    assert_eq!(h.cdp(), (2, 0, 0));
    assert_eq!(h.api.updates.lock().len(), 2);
    assert!(
        h.controller.expectations().satisfied_expectations(&key()),
        "failed create lowered"
    );
    // 4. Error gone: create again, status unchanged vs cache: no PUT.
    h.pods.set_error(None);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (3, 0, 0));
    assert_eq!(h.api.updates.lock().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn test_controller_update_requeue() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(1, &[("foo", "bar")]);
    rs.status = Some(ReplicaSetStatus {
        replicas: 2,
        ..Default::default()
    });
    h.add_rs(&rs);
    h.add_pod(new_pod("pod0", &rs, "Running", None, true));
    *h.api.update_error.lock() = Some("fake error".into());
    let ctx = h.controller.context().clone();
    let queue = h.controller.queue().clone();
    process_item(
        &queue,
        &RetryPolicy::unlimited(),
        &move |key: &ObjectKey| {
            let ctx = ctx.clone();
            Box::pin(async move { sync_replica_set(&ctx, key).await })
        },
        key(),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(queue.len(), 1, "failed status update requeues the key");
    assert_eq!(queue.num_requeues(&key()), 1);
}

async fn observe_creates(
    h: &Harness,
    rs: &k8s_openapi::api::apps::v1::ReplicaSet,
    from: usize,
    n: usize,
) {
    for i in from..from + n {
        h.add_pod(new_pod(&format!("pod{i}"), rs, "Running", None, true));
    }
}

/// Upstream `TestControllerBurstReplicas` (doTest): scale n→0 in bursts.
async fn burst_case(burst: usize, n: usize) {
    let h = Harness::new(burst);
    let mut rs = new_replica_set(i32::try_from(n).unwrap_or(0), &[("foo", "bar")]);
    h.add_rs(&rs);
    let exp = h.controller.expectations();
    let mut created = 0;
    while created < n {
        h.pods.clear();
        h.controller.sync_replica_set(&key()).await.expect("sync");
        let want = burst.min(n - created);
        assert_eq!(h.cdp(), (want, 0, 0), "burst {burst} n {n} after {created}");
        assert_eq!(
            exp.get_expectations(&key()),
            Some((i64::try_from(want).unwrap_or(0), 0))
        );
        // Observe all but one: still blocked.
        observe_creates(&h, &rs, created, want).await;
        for _ in 0..want - 1 {
            exp.creation_observed(&key());
        }
        h.pods.clear();
        h.controller.sync_replica_set(&key()).await.expect("sync");
        assert_eq!(
            h.cdp(),
            (0, 0, 0),
            "blocked until the last creation is observed"
        );
        exp.creation_observed(&key());
        created += want;
    }
    // Scale down to 0.
    rs.spec.replicas = Some(0);
    h.add_rs(&rs);
    let mut remaining = n;
    while remaining > 0 {
        h.pods.clear();
        h.controller.sync_replica_set(&key()).await.expect("sync");
        let want = burst.min(remaining);
        let deleted = h.pods.state().delete_pod_names;
        assert_eq!(deleted.len(), want);
        assert_eq!(exp.get_uids(&key()).map(|u| u.len()), Some(want));
        for (i, name) in deleted.iter().enumerate() {
            let pod = h
                .pod_store
                .delete(&kcm_informer::ObjectKey::new("default", name.as_str()))
                .expect("pod");
            if i + 1 < want {
                crate::controller::handlers::delete_pod(
                    h.controller.context(),
                    kcm_informer::DeletedObject::Object(pod),
                );
            } else {
                h.pods.clear();
                h.controller.sync_replica_set(&key()).await.expect("sync");
                assert_eq!(
                    h.cdp(),
                    (0, 0, 0),
                    "blocked until the last deletion is observed"
                );
                crate::controller::handlers::delete_pod(
                    h.controller.context(),
                    kcm_informer::DeletedObject::Object(pod),
                );
            }
        }
        remaining -= want;
    }
    assert!(h.pod_store.is_empty());
}

#[tokio::test]
async fn test_controller_burst_replicas() {
    burst_case(5, 30).await;
    burst_case(5, 12).await;
    burst_case(3, 2).await;
}

#[tokio::test]
async fn test_delete_controller_and_expectations() {
    let h = Harness::new(10);
    let rs = new_replica_set(1, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (1, 0, 0));
    assert!(
        h.controller
            .expectations()
            .get_expectations(&key())
            .is_some()
    );
    let gone = h
        .rs_store
        .delete(&kcm_informer::ObjectKey::new("default", "foobar"))
        .expect("rs");
    crate::controller::handlers::delete_rs(
        h.controller.context(),
        kcm_informer::DeletedObject::Object(gone),
    );
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.controller.expectations().get_expectations(&key()), None);
    h.controller.expectations().lower_expectations(&key(), 1, 0);
    h.pods.clear();
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (0, 0, 0));
}

#[tokio::test]
async fn blocked_sync_clears_failure_condition() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(2, &[("foo", "bar")]);
    rs.status = Some(ReplicaSetStatus {
        conditions: Some(vec![ReplicaSetCondition {
            type_: Some(REPLICA_FAILURE.into()),
            status: Some("True".into()),
            reason: Some("FailedCreate".into()),
            ..Default::default()
        }]),
        ..Default::default()
    });
    h.add_rs(&rs);
    h.controller.expectations().expect_creations(&key(), 1);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (0, 0, 0));
    let updates = h.api.updates.lock();
    assert_eq!(updates.len(), 1);
    assert_eq!(
        updates[0]
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone()),
        None
    );
}

#[tokio::test]
async fn scale_down_deletes_unscheduled_then_pending_then_not_ready() {
    let h = Harness::new(500);
    let rs = new_replica_set(1, &[("foo", "bar")]);
    h.add_rs(&rs);
    let on = |mut p: kcm_controller::PodView, node: &str| {
        p.spec.node_name = Some(node.into());
        p
    };
    h.add_pod(on(new_pod("ready", &rs, "Running", Some(t0()), true), "n1"));
    let mut not_ready = on(new_pod("not-ready", &rs, "Running", None, true), "n1");
    not_ready.status.conditions[0].status = "False".into();
    h.add_pod(not_ready);
    h.add_pod(on(new_pod("pending", &rs, "Pending", None, true), "n1"));
    h.add_pod(new_pod("unscheduled", &rs, "Pending", None, true));
    // Two replicas wanted gone first, then check the third.
    h.controller.sync_replica_set(&key()).await.expect("sync");
    let mut deleted = h.pods.state().delete_pod_names;
    deleted.sort();
    assert_eq!(deleted, vec!["not-ready", "pending", "unscheduled"]);
    let uids = h.controller.expectations().get_uids(&key()).expect("uids");
    assert!(
        uids.contains("default/unscheduled")
            && uids.contains("default/pending")
            && uids.contains("default/not-ready")
    );
    assert!(!h.controller.expectations().satisfied_expectations(&key()));
}

#[tokio::test]
async fn failed_deletes_lower_expectations_and_set_condition() {
    let h = Harness::new(500);
    let rs = new_replica_set(0, &[("foo", "bar")]);
    h.add_rs(&rs);
    for p in pod_list(2, "Running", &rs, "pod") {
        h.add_pod(p);
    }
    h.pods.set_error(Some(Arc::new(|| {
        ControlError::DeletePods(Box::new(ControlError::api(500, "InternalError", "boom")))
    })));
    let err = h
        .controller
        .sync_replica_set(&key())
        .await
        .expect_err("delete error");
    assert_eq!(err.to_string(), "unable to delete pods: boom");
    assert!(h.controller.expectations().satisfied_expectations(&key()));
    let updates = h.api.updates.lock();
    let st = updates
        .last()
        .and_then(|u| u.status.clone())
        .expect("status");
    let c = get_condition(&st, REPLICA_FAILURE).expect("condition");
    assert_eq!(c.reason.as_deref(), Some("FailedDelete"));
    assert_eq!(c.message.as_deref(), Some("unable to delete pods: boom"));
}

#[tokio::test]
async fn not_found_on_delete_is_not_an_error() {
    let h = Harness::new(500);
    let rs = new_replica_set(0, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.add_pod(new_pod("pod0", &rs, "Running", None, true));
    h.pods
        .set_error(Some(Arc::new(|| ControlError::not_found("pods", "pod0"))));
    h.controller
        .sync_replica_set(&key())
        .await
        .expect("NotFound ignored");
    assert!(h.controller.expectations().satisfied_expectations(&key()));
}

#[tokio::test]
async fn namespace_terminating_create_counts_as_success() {
    let h = Harness::new(500);
    let rs = new_replica_set(3, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.pods.set_error(Some(Arc::new(|| {
        ControlError::api(403, "Forbidden", "namespace default is being terminated")
            .with_cause(NAMESPACE_TERMINATING_CAUSE)
    })));
    h.controller
        .sync_replica_set(&key())
        .await
        .expect("treated as success");
    assert_eq!(h.pods.state().create_call_count, 3);
    assert_eq!(
        h.controller.expectations().get_expectations(&key()),
        Some((3, 0)),
        "not lowered"
    );
}

#[tokio::test]
async fn terminating_pods_are_reported_not_counted() {
    let h = Harness::new(500);
    let rs = new_replica_set(1, &[("foo", "bar")]);
    h.add_rs(&rs);
    let mut t = new_pod("old", &rs, "Running", None, true);
    t.metadata.deletion_timestamp = Some(Time(t0()));
    h.add_pod(t);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (1, 0, 0), "terminating pod is replaced");
    let updates = h.api.updates.lock();
    let st = updates
        .last()
        .and_then(|u| u.status.clone())
        .expect("status");
    assert_eq!((st.replicas, st.terminating_replicas), (0, Some(1)));
}

#[tokio::test]
async fn missing_rs_deletes_expectations() {
    let h = Harness::new(500);
    h.controller.expectations().expect_creations(&key(), 2);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.controller.expectations().get_expectations(&key()), None);
}

#[tokio::test]
async fn invalid_selector_skips_sync() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(2, &[("foo", "bar")]);
    {
        let s = &mut rs.spec;
        s.selector.match_expressions = Some(vec![
            k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                key: "x".into(),
                operator: "Bogus".into(),
                values: None,
            },
        ]);
    }
    h.add_rs(&rs);
    h.controller
        .sync_replica_set(&key())
        .await
        .expect("no error, no requeue");
    assert_eq!(h.cdp(), (0, 0, 0));
    assert!(h.api.updates.lock().is_empty());
}

#[tokio::test(start_paused = true)]
async fn test_replica_set_availability_check() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(4, &[("foo", "bar")]);
    rs.spec.min_ready_seconds = Some(5);
    h.add_rs(&rs);
    let before = |ms: i64| t0() - SignedDuration::from_millis(ms);
    h.add_pod(new_pod("foobar-1", &rs, "Pending", None, true));
    h.add_pod(new_pod("foobar-2", &rs, "Running", Some(before(0)), true));
    h.add_pod(new_pod(
        "foobar-3",
        &rs,
        "Running",
        Some(before(2000)),
        true,
    ));
    h.add_pod(new_pod(
        "foobar-4",
        &rs,
        "Running",
        Some(before(4300)),
        true,
    ));
    h.controller.sync_replica_set(&key()).await.expect("sync");
    {
        let updates = h.api.updates.lock();
        assert_eq!(updates.len(), 1);
        let st = updates[0].status.clone().unwrap_or_default();
        assert_eq!((st.ready_replicas, st.available_replicas), (Some(3), None));
    }
    assert_eq!(h.controller.queue().len(), 0);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(h.controller.queue().len(), 0, "foobar-4 not available yet");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        h.controller.queue().len(),
        1,
        "requeued when foobar-4 becomes available"
    );
}

#[tokio::test]
async fn never_double_creates_under_late_or_duplicate_events() {
    let h = Harness::new(500);
    let rs = new_replica_set(3, &[("foo", "bar")]);
    h.add_rs(&rs);
    let core = h.controller.context().clone();
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (3, 0, 0));
    // The informer has not delivered the new pods yet: resyncs and syncs create nothing.
    let cached = Arc::new(rs.clone());
    for _ in 0..3 {
        crate::controller::handlers::update_rs(&core, &cached, &cached);
        h.controller.sync_replica_set(&key()).await.expect("sync");
    }
    assert_eq!(h.cdp(), (3, 0, 0));
    // One pod arrives, with a duplicate (same resourceVersion) update.
    let a = h.add_pod(new_pod("a", &rs, "Pending", None, true));
    crate::controller::handlers::add_pod(&core, &a);
    crate::controller::handlers::update_pod(&core, &a, &a);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (3, 0, 0), "two creations still outstanding");
    assert_eq!(
        h.controller.expectations().get_expectations(&key()),
        Some((2, 0))
    );
    // The rest arrive: satisfied, and 3 active pods need nothing more.
    for name in ["b", "c"] {
        let p = h.add_pod(new_pod(name, &rs, "Pending", None, true));
        crate::controller::handlers::add_pod(&core, &p);
    }
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (3, 0, 0));
    assert!(h.controller.expectations().satisfied_expectations(&key()));
}

#[tokio::test]
async fn expired_expectations_unblock_the_sync() {
    let h = Harness::new(500);
    let rs = new_replica_set(2, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (2, 0, 0));
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(
        h.cdp(),
        (2, 0, 0),
        "blocked while creations are outstanding"
    );
    h.clock
        .step(kcm_controller::expectations::EXPECTATIONS_TIMEOUT + Duration::from_secs(1));
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(
        h.cdp(),
        (4, 0, 0),
        "the 5-minute TTL expired: creates again"
    );
}
