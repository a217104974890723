//! Stale-controller consistency in the sync: a sync waits until the caches show the
//! controller's own last writes for the ReplicaSet (gate `StaleControllerConsistencyReplicaSet`).

use std::sync::Arc;

use kcm_controller::consistency::{ConsistencyStore, LastSyncResourceVersion, stale_sync_skips};
use parking_lot::Mutex;

use crate::controller::context::{PODS, REPLICASETS};
use crate::controller::replica_set_controller::pod_write_recorder;
use crate::error::SyncError;
use crate::testing::{Harness, key, new_pod, new_replica_set};

fn cache(rv: &str) -> (Arc<Mutex<String>>, LastSyncResourceVersion) {
    let cell = Arc::new(Mutex::new(rv.to_string()));
    let read = cell.clone();
    (cell, Arc::new(move || read.lock().clone()))
}

fn skips() -> u64 {
    stale_sync_skips()
        .iter()
        .filter(|(s, gr, _)| *s == "replicaset_controller" && *gr == PODS)
        .map(|(_, _, n)| n)
        .sum()
}

#[tokio::test]
async fn a_sync_waits_until_the_caches_show_its_own_writes() {
    let (pods_rv, pods_read) = cache("10");
    let (rs_rv, rs_read) = cache("10");
    let store = Arc::new(ConsistencyStore::new(vec![
        (REPLICASETS, rs_read),
        (PODS, pods_read),
    ]));
    let h = Harness::with_consistency(500, Some(store.clone()));
    let mut rs = new_replica_set(2, &[("foo", "bar")]);
    rs.metadata.resource_version = Some("20".into());
    h.add_rs(&rs);
    let uid = rs.metadata.uid.clone().unwrap_or_default();

    // The controller created a pod for it at 12; the pod cache is at 10.
    let mut created = k8s_openapi::api::core::v1::Pod {
        metadata: new_pod("p0", &rs, "Running", None, true).metadata,
        ..Default::default()
    };
    created.metadata.resource_version = Some("12".into());
    pod_write_recorder(store.clone())(&created);
    let before = skips();
    let err = h.controller.sync_replica_set(&key()).await.unwrap_err();
    assert!(matches!(err, SyncError::StaleCache(_)), "{err}");
    // The counter is process-wide: tests running beside this one may count skips too.
    assert!(skips() > before, "the skip is counted");
    assert_eq!(h.cdp(), (0, 0, 0), "nothing created from the stale cache");
    assert!(h.api.updates.lock().is_empty(), "no status write either");

    // The pod cache caught up: the sync runs and records its status write (resourceVersion 20).
    *pods_rv.lock() = "12".into();
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (2, 0, 0));
    assert_eq!(h.api.updates.lock().len(), 1);
    let err = h.controller.sync_replica_set(&key()).await.unwrap_err();
    assert!(
        matches!(&err, SyncError::StaleCache(e) if e.group_resource == REPLICASETS && e.wrote_rv == "20"),
        "{err}"
    );
    *rs_rv.lock() = "20".into();
    assert!(store.ensure_ready("default", "foobar").is_ok());
    assert!(!uid.is_empty());
}

#[tokio::test]
async fn a_deleted_replica_set_forgets_its_writes() {
    let (_, pods_read) = cache("1");
    let store = Arc::new(ConsistencyStore::new(vec![(PODS, pods_read)]));
    let h = Harness::with_consistency(500, Some(store.clone()));
    store.wrote_at("default", "foobar", "gone-uid", PODS, "99");
    // Not in the cache: deleted. The first sync is deferred (its writes are not seen yet) ...
    assert!(h.controller.sync_replica_set(&key()).await.is_err());
    // ... until the delete handler forgets the record, as upstream's deleteRS does.
    store.clear("default", "foobar", Some("gone-uid"));
    h.controller
        .sync_replica_set(&key())
        .await
        .expect("deleted: nothing to do");
}

#[tokio::test]
async fn without_a_store_the_sync_never_waits() {
    let h = Harness::new(500);
    let rs = new_replica_set(1, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.cdp(), (1, 0, 0));
}
