//! Handler tests (upstream `TestAddReplicaSet`, `TestUpdateReplicaSetOrphanWithNewLabels`,
//! `TestUpdateReplicaSetChangeControllerRef`, `TestUpdateReplicaSetRelease`,
//! `TestDeleteReplicaSetOrphan`, `TestGetDeploymentsForReplicaSet` …): which Deployments each
//! ReplicaSet notification enqueues.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use kcm_controller::PodView;
use kcm_controller::clock::real_clock;
use kcm_controller::event_recorder::EventRecorder;
use kcm_controller::rs_control::FakeReplicaSetControl;
use kcm_informer::{Lister, ResourceEventHandler, Store};
use kcm_workqueue::RateLimitingQueue;

use super::*;
use crate::controller::context::Context;
use crate::controller::pod_map::pod_map_for_deployment;
use crate::features::FeatureGates;
use crate::testing::{labels, rolling_deployment, rs, ts};
use kcm_controller::owner_index::{CONTROLLER_UID_INDEX, controller_uid_index_fn};

fn inner(ds: &[Deployment], rss: &[ReplicaSet]) -> Arc<Context> {
    inner_with_pods(ds, rss, &[])
}

fn inner_with_pods(ds: &[Deployment], rss: &[ReplicaSet], pods: &[PodView]) -> Arc<Context> {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("url"));
    let client = kube::Client::try_from(config).expect("client");
    let d_store: Store<Deployment> = Store::new();
    for d in ds {
        d_store.add(Arc::new(d.clone()));
    }
    let rs_store: Store<ReplicaSet> = Store::new();
    rs_store
        .add_indexer(CONTROLLER_UID_INDEX, controller_uid_index_fn())
        .expect("index");
    for r in rss {
        rs_store.add(Arc::new(r.clone()));
    }
    let (recorder, _rx) = EventRecorder::channel("deployment-controller", 16);
    Arc::new(Context {
        client,
        d_lister: Lister::new(d_store),
        rs_lister: Lister::new(rs_store),
        pod_lister: {
            let store = Store::<PodView>::new();
            store
                .add_indexer(CONTROLLER_UID_INDEX, controller_uid_index_fn())
                .expect("index");
            for p in pods {
                store.add(Arc::new(p.clone()));
            }
            Lister::new(store)
        },
        queue: RateLimitingQueue::builder().name("deployment").build(),
        recorder,
        rs_control: Arc::new(FakeReplicaSetControl::default()),
        clock: real_clock(),
        features: FeatureGates::default(),
        own_writes: Arc::new(kcm_controller::consistency::ConsistencyStore::new(
            Vec::new(),
        )),
    })
}

fn queued(ctx: &Context) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    while let Some(k) = ctx.queue.try_get() {
        ctx.queue.done(&k);
        keys.insert(k.to_string());
    }
    keys
}

fn keys(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| format!("default/{n}")).collect()
}

fn owned_by(mut r: ReplicaSet, d: &Deployment) -> ReplicaSet {
    r.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: d.metadata.name.clone().unwrap_or_default(),
        uid: d.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    r
}

fn labelled(mut r: ReplicaSet, pairs: &[(&str, &str)]) -> ReplicaSet {
    r.metadata.labels = Some(labels(pairs));
    r
}

fn with_rv(mut r: ReplicaSet, rv: &str) -> ReplicaSet {
    r.metadata.resource_version = Some(rv.into());
    r
}

#[tokio::test]
async fn test_add_replica_set() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let d2 = rolling_deployment("d2", 1, None, None);
    let h = inner(&[d1.clone(), d2.clone()], &[]);
    // Owned: only the owner is enqueued.
    add_replica_set(
        &h,
        &labelled(owned_by(rs("rs1", 1, 0, 0), &d1), &[("foo", "bar")]),
    );
    assert_eq!(queued(&h), keys(&["d1"]));
    // Orphan: every matching Deployment.
    add_replica_set(&h, &labelled(rs("rs2", 1, 0, 0), &[("foo", "bar")]));
    assert_eq!(queued(&h), keys(&["d1", "d2"]));
    // Orphan without labels or not matching: nobody.
    add_replica_set(&h, &rs("rs3", 1, 0, 0));
    add_replica_set(&h, &labelled(rs("rs4", 1, 0, 0), &[("foo", "other")]));
    assert_eq!(queued(&h), keys(&[]));
}

#[tokio::test]
async fn test_add_replica_set_pending_deletion() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let h = inner(std::slice::from_ref(&d1), &[]);
    let mut owned = labelled(owned_by(rs("rs1", 1, 0, 0), &d1), &[("foo", "bar")]);
    owned.metadata.deletion_timestamp = Some(ts(0));
    add_replica_set(&h, &owned);
    assert_eq!(
        queued(&h),
        keys(&["d1"]),
        "treated as a delete of an owned RS"
    );
    let mut orphan = labelled(rs("rs2", 1, 0, 0), &[("foo", "bar")]);
    orphan.metadata.deletion_timestamp = Some(ts(0));
    add_replica_set(&h, &orphan);
    assert_eq!(
        queued(&h),
        keys(&[]),
        "deleted orphans are nobody's business"
    );
}

#[tokio::test]
async fn controller_ref_must_resolve_to_the_same_uid_and_kind() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let h = inner(std::slice::from_ref(&d1), &[]);
    let mut other_uid = owned_by(rs("rs1", 1, 0, 0), &d1);
    other_uid.metadata.owner_references.as_mut().unwrap()[0].uid = "someone-else".into();
    add_replica_set(&h, &other_uid);
    let mut other_kind = owned_by(rs("rs2", 1, 0, 0), &d1);
    other_kind.metadata.owner_references.as_mut().unwrap()[0].kind = "StatefulSet".into();
    add_replica_set(&h, &other_kind);
    assert_eq!(queued(&h), keys(&[]));
}

#[tokio::test]
async fn test_update_replica_set_same_resource_version_is_ignored() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let h = inner(std::slice::from_ref(&d1), &[]);
    let r = with_rv(
        labelled(owned_by(rs("rs1", 1, 0, 0), &d1), &[("foo", "bar")]),
        "5",
    );
    update_replica_set(&h, &r, &r);
    assert_eq!(queued(&h), keys(&[]));
}

#[tokio::test]
async fn test_update_replica_set_change_controller_ref() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let d2 = rolling_deployment("d2", 1, None, None);
    let h = inner(&[d1.clone(), d2.clone()], &[]);
    let old = with_rv(
        labelled(owned_by(rs("rs1", 1, 0, 0), &d1), &[("foo", "bar")]),
        "1",
    );
    let cur = with_rv(
        labelled(owned_by(rs("rs1", 1, 0, 0), &d2), &[("foo", "bar")]),
        "2",
    );
    update_replica_set(&h, &old, &cur);
    assert_eq!(queued(&h), keys(&["d1", "d2"]));
}

#[tokio::test]
async fn test_update_replica_set_release() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let d2 = rolling_deployment("d2", 1, None, None);
    let h = inner(&[d1.clone(), d2.clone()], &[]);
    // Released by d1: d1 learns it, and the orphan is offered to every matching Deployment.
    let old = with_rv(
        labelled(owned_by(rs("rs1", 1, 0, 0), &d1), &[("foo", "bar")]),
        "1",
    );
    let cur = with_rv(labelled(rs("rs1", 1, 0, 0), &[("foo", "bar")]), "2");
    update_replica_set(&h, &old, &cur);
    assert_eq!(queued(&h), keys(&["d1", "d2"]));
}

#[tokio::test]
async fn test_update_replica_set_orphan_with_new_labels() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let mut d2 = rolling_deployment("d2", 1, None, None);
    d2.spec.selector = LabelSelector {
        match_labels: Some(labels(&[("app", "two")])),
        ..Default::default()
    };
    let h = inner(&[d1, d2], &[]);
    let old = with_rv(labelled(rs("rs1", 1, 0, 0), &[("foo", "other")]), "1");
    let cur = with_rv(labelled(rs("rs1", 1, 0, 0), &[("foo", "bar")]), "2");
    update_replica_set(&h, &old, &cur);
    assert_eq!(queued(&h), keys(&["d1"]));
    // An orphan whose labels did not change: nothing to do.
    let cur2 = with_rv(labelled(rs("rs1", 2, 0, 0), &[("foo", "bar")]), "3");
    update_replica_set(&h, &cur, &cur2);
    assert_eq!(queued(&h), keys(&[]));
}

#[tokio::test]
async fn test_delete_replica_set() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let h = inner(std::slice::from_ref(&d1), &[]);
    delete_replica_set(&h, &labelled(rs("orphan", 1, 0, 0), &[("foo", "bar")]));
    assert_eq!(queued(&h), keys(&[]), "TestDeleteReplicaSetOrphan");
    delete_replica_set(&h, &owned_by(rs("rs1", 1, 0, 0), &d1));
    assert_eq!(queued(&h), keys(&["d1"]));
}

#[tokio::test]
async fn test_get_deployments_for_replica_set() {
    let d1 = rolling_deployment("d1", 1, None, None);
    let mut everything = rolling_deployment("all", 1, None, None);
    everything.spec.selector = LabelSelector::default();
    let mut other_ns = rolling_deployment("elsewhere", 1, None, None);
    other_ns.metadata.namespace = Some("other".into());
    let h = inner(&[d1, everything, other_ns], &[]);
    let found: Vec<String> = get_deployments_for_replica_set(
        &h.d_lister,
        &labelled(rs("rs1", 1, 0, 0), &[("foo", "bar")]),
    )
    .iter()
    .map(|d| d.metadata.name.clone().unwrap_or_default())
    .collect();
    assert_eq!(found, vec!["d1".to_string()]);
    assert!(get_deployments_for_replica_set(&h.d_lister, &rs("rs2", 1, 0, 0)).is_empty());
}

#[tokio::test]
async fn deployment_handler_enqueues_on_every_notification() {
    let d1 = Arc::new(rolling_deployment("d1", 1, None, None));
    let h = inner(&[], &[]);
    let handler = DeploymentHandler(h.clone());
    ResourceEventHandler::on_add(&handler, &d1, false);
    assert_eq!(queued(&h), keys(&["d1"]));
    ResourceEventHandler::on_update(&handler, &d1, &d1);
    assert_eq!(queued(&h), keys(&["d1"]));
    ResourceEventHandler::on_delete(&handler, kcm_informer::DeletedObject::Object(d1.clone()));
    assert_eq!(queued(&h), keys(&["d1"]));
}

fn pod(name: &str, pairs: &[(&str, &str)], owner: Option<&ReplicaSet>, phase: &str) -> PodView {
    let mut p = PodView::default();
    p.metadata.name = Some(name.into());
    p.metadata.namespace = Some("default".into());
    p.metadata.labels = Some(labels(pairs));
    p.metadata.owner_references = owner.map(|rs| {
        vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: rs.metadata.name.clone().unwrap_or_default(),
            uid: rs.metadata.uid.clone().unwrap_or_default(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]
    });
    p.status.phase = Some(phase.into());
    p
}

#[tokio::test]
async fn test_get_pod_map_for_replica_sets() {
    let d = rolling_deployment("foo", 1, None, None);
    let rs1 = owned_by(rs("rs1", 1, 0, 0), &d);
    let rs2 = owned_by(rs("rs2", 1, 0, 0), &d);
    let other = rs("other", 1, 0, 0);
    let mut terminating = pod("p-terminating", &[("foo", "bar")], Some(&rs1), "Running");
    terminating.metadata.deletion_timestamp = Some(ts(0));
    let pods = [
        pod("p1", &[("foo", "bar")], Some(&rs1), "Running"),
        pod("p2", &[("foo", "bar")], Some(&rs1), "Succeeded"),
        terminating,
        pod("p3", &[("foo", "bar")], Some(&rs2), "Pending"),
        pod("p-other-owner", &[("foo", "bar")], Some(&other), "Running"),
        pod("p-orphan", &[("foo", "bar")], None, "Running"),
        pod("p-not-selected", &[("foo", "baz")], Some(&rs1), "Running"),
    ];
    let h = inner_with_pods(std::slice::from_ref(&d), &[], &pods);
    let map = pod_map_for_deployment(&h.pod_lister, &[&rs1, &rs2]);
    let names = |uid: &str| -> BTreeSet<String> {
        map[uid]
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect()
    };
    assert_eq!(map.len(), 2);
    // Inactive and terminating pods are kept (Recreate must see them); labels are not looked
    // at (upstream v1.37 reads the pod controller index), so a pod rs1 controls whose labels
    // do not match the Deployment's selector is rs1's too.
    assert_eq!(
        names("uid-rs1"),
        ["p-not-selected", "p-terminating", "p1", "p2"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    assert_eq!(names("uid-rs2"), ["p3".to_string()].into_iter().collect());
}

#[tokio::test]
async fn deployment_for_pod_follows_both_controller_refs() {
    let d = rolling_deployment("foo", 1, None, None);
    let rs1 = owned_by(rs("rs1", 1, 0, 0), &d);
    let orphan_rs = rs("orphan-rs", 1, 0, 0);
    let h = inner(std::slice::from_ref(&d), &[rs1.clone(), orphan_rs.clone()]);
    let found = get_deployment_for_pod(&h, &pod("p1", &[("foo", "bar")], Some(&rs1), "Running"));
    assert_eq!(
        found.and_then(|d| d.metadata.name.clone()).as_deref(),
        Some("foo")
    );
    // ReplicaSet without a controller, pod without a controller, stale ReplicaSet UID.
    assert!(get_deployment_for_pod(&h, &pod("p2", &[], Some(&orphan_rs), "Running")).is_none());
    assert!(get_deployment_for_pod(&h, &pod("p3", &[], None, "Running")).is_none());
    let mut stale = rs1.clone();
    stale.metadata.uid = Some("recreated".into());
    assert!(get_deployment_for_pod(&h, &pod("p4", &[], Some(&stale), "Running")).is_none());
}

/// kcm's own addition: after writing a Deployment, the next sync of it waits (requeued with
/// backoff) until the Deployment cache shows that write, instead of deciding from the older
/// copy and failing its status write with a 409.
#[tokio::test]
async fn a_sync_waits_until_the_cache_shows_the_controllers_own_write() {
    let mut d = rolling_deployment("web", 3, None, None);
    d.metadata.uid = Some("uid-1".into());
    d.metadata.resource_version = Some("10".into());
    let mut inner = inner(&[d.clone()], &[]);
    let cache_rv = Arc::new(std::sync::Mutex::new(String::from("10")));
    let read = cache_rv.clone();
    Arc::get_mut(&mut inner).expect("only handle").own_writes =
        Arc::new(kcm_controller::consistency::ConsistencyStore::new(vec![(
            crate::controller::context::DEPLOYMENTS,
            Arc::new(move || read.lock().map(|v| v.clone()).unwrap_or_default()),
        )]));
    let key =
        kcm_informer::ObjectKey::new(d.metadata.namespace.as_deref().unwrap_or_default(), "web");

    let mut written = d.clone();
    written.metadata.resource_version = Some("12".into());
    inner.wrote(&written);
    let err = crate::controller::sync_deployment::sync_deployment(&inner, &key)
        .await
        .expect_err("deferred");
    assert!(
        matches!(&err, crate::controller::SyncError::StaleCache(e) if e.read_rv == "10" && e.wrote_rv == "12"),
        "{err}"
    );

    // The cache caught up: nothing holds the sync back any more.
    *cache_rv.lock().expect("lock") = "12".into();
    assert!(
        inner
            .own_writes
            .ensure_ready(&key.namespace, &key.name)
            .is_ok()
    );
}
