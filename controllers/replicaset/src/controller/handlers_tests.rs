use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kcm_controller::pod_view::PodView;
use kcm_informer::{DeletedFinalStateUnknown, DeletedObject, ObjectKey};

use super::*;
use crate::testing::{Harness, fresh_uid, labels, new_pod, new_replica_set, t0};

fn set(keys: Vec<String>) -> BTreeSet<String> {
    keys.into_iter().collect()
}

fn owner_ref(rs: &k8s_openapi::api::apps::v1::ReplicaSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: rs.metadata.name.clone().unwrap_or_default(),
        uid: rs.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        ..Default::default()
    }
}

#[tokio::test]
async fn test_update_pods() {
    let h = Harness::new(500);
    let core = h.controller.context();
    let mut rs1 = new_replica_set(1, &[("foo", "bar")]);
    rs1.metadata.name = Some("foobar".into());
    let mut rs2 = new_replica_set(1, &[("bar", "foo")]);
    rs2.metadata.name = Some("barfoo".into());
    h.add_rs(&rs1);
    h.add_rs(&rs2);
    let l1 = labels(&[("foo", "bar")]);
    let l2 = labels(&[("bar", "foo")]);
    let pod = |l: &std::collections::BTreeMap<String, String>,
               owner: Option<&k8s_openapi::api::apps::v1::ReplicaSet>,
               rv: &str| {
        let mut p = PodView::default();
        p.metadata.name = Some("pod".into());
        p.metadata.namespace = Some("default".into());
        p.metadata.resource_version = Some(rv.into());
        p.metadata.labels = Some(l.clone());
        p.metadata.owner_references = owner.map(|o| vec![owner_ref(o)]);
        Arc::new(p)
    };
    let cases = [
        (
            "label change, same owner",
            pod(&l1, Some(&rs1), "1"),
            pod(&l2, Some(&rs1), "2"),
            vec!["default/foobar"],
        ),
        (
            "ownerRef removed, labels match rs2",
            pod(&l2, Some(&rs2), "1"),
            pod(&l2, None, "2"),
            vec!["default/barfoo"],
        ),
        (
            "ownerRef rs1 removed, labels match rs2",
            pod(&l2, Some(&rs1), "1"),
            pod(&l2, None, "2"),
            vec!["default/barfoo", "default/foobar"],
        ),
        (
            "labels changed, owner rs2 kept",
            pod(&l1, Some(&rs2), "1"),
            pod(&l2, Some(&rs2), "2"),
            vec!["default/barfoo"],
        ),
    ];
    for (name, old, new, want) in cases {
        update_pod(core, &old, &new);
        let got = set(h.drain_queue());
        let want: BTreeSet<String> = want.into_iter().map(String::from).collect();
        assert_eq!(got, want, "{name}");
    }
    // Same resourceVersion (resync): ignored.
    let p = pod(&l1, Some(&rs1), "5");
    update_pod(core, &p, &p);
    assert!(h.drain_queue().is_empty());
}

#[tokio::test]
async fn test_delete_final_state_unknown() {
    let h = Harness::new(500);
    let rs = new_replica_set(1, &[("foo", "bar")]);
    h.add_rs(&rs);
    let pod = Arc::new(new_pod("pod1", &rs, "Running", None, true));
    delete_pod(
        h.controller.context(),
        DeletedObject::Unknown(DeletedFinalStateUnknown {
            key: ObjectKey::cluster("foo"),
            obj: pod,
        }),
    );
    assert_eq!(h.drain_queue(), vec!["default/foobar".to_string()]);
}

#[tokio::test]
async fn test_overlapping_rss() {
    let h = Harness::new(500);
    let mut all = Vec::new();
    for i in 1..10 {
        let mut rs = new_replica_set(1, &[("foo", "bar")]);
        rs.metadata.name = Some(format!("rs{i}"));
        h.rs_store.add(Arc::new(rs.clone()));
        all.push(rs);
    }
    let owner = &all[3];
    let pod = Arc::new(new_pod("pod", owner, "Running", None, true));
    add_pod(h.controller.context(), &pod);
    assert_eq!(h.drain_queue(), vec!["default/rs4".to_string()]);
}

#[tokio::test]
async fn orphan_add_enqueues_every_matching_rs_without_expectation_change() {
    let h = Harness::new(500);
    let mut a = new_replica_set(1, &[("foo", "bar")]);
    a.metadata.name = Some("a".into());
    let mut b = new_replica_set(1, &[("foo", "bar")]);
    b.metadata.name = Some("b".into());
    let mut c = new_replica_set(1, &[("other", "x")]);
    c.metadata.name = Some("c".into());
    for rs in [&a, &b, &c] {
        h.rs_store.add(Arc::new(rs.clone()));
    }
    let core = h.controller.context();
    core.expectations
        .expect_creations(&ObjectKey::new("default", "a"), 1);
    let orphan = Arc::new(new_pod("o", &a, "Running", None, false));
    add_pod(core, &orphan);
    assert_eq!(
        set(h.drain_queue()),
        set(vec!["default/a".into(), "default/b".into()])
    );
    assert_eq!(
        core.expectations
            .get_expectations(&ObjectKey::new("default", "a")),
        Some((1, 0))
    );
    // A pod without labels matches nothing; an empty selector matches nothing.
    let mut bare = PodView::default();
    bare.metadata.namespace = Some("default".into());
    assert!(get_pod_replica_sets(core, &bare).is_empty());
}

/// v1.37.2 `GetPodReplicaSets` (client-go lister) rejects a pod with `len(labels) == 0`
/// before looking at selectors, so an empty map matches nothing either, even a selector made
/// only of `DoesNotExist` (which an empty label set satisfies).
#[tokio::test]
async fn pod_with_empty_label_map_matches_no_replica_set() {
    let h = Harness::new(500);
    let mut rs = new_replica_set(1, &[]);
    {
        let s = &mut rs.spec;
        s.selector.match_labels = None;
        s.selector.match_expressions = Some(vec![
            k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                key: "foo".into(),
                operator: "DoesNotExist".into(),
                values: None,
            },
        ]);
    }
    h.rs_store.add(Arc::new(rs));
    let core = h.controller.context();
    let mut pod = PodView::default();
    pod.metadata.namespace = Some("default".into());
    pod.metadata.labels = Some(labels(&[("other", "x")]));
    assert_eq!(
        get_pod_replica_sets(core, &pod).len(),
        1,
        "selector is valid"
    );
    pod.metadata.labels = Some(labels(&[]));
    assert!(get_pod_replica_sets(core, &pod).is_empty());
    pod.metadata.labels = None;
    assert!(get_pod_replica_sets(core, &pod).is_empty());
}

#[tokio::test]
async fn test_pod_controller_lookup() {
    let h = Harness::new(500);
    let core = h.controller.context();
    // RS in namespace "" with selector foo=bar, pod in "ns": no match.
    let mut rs = new_replica_set(1, &[("foo", "bar")]);
    rs.metadata.namespace = Some(String::new());
    rs.metadata.name = Some("foo".into());
    h.rs_store.add(Arc::new(rs));
    let mut pod = PodView::default();
    pod.metadata.namespace = Some("ns".into());
    pod.metadata.labels = Some(labels(&[("foo", "bar")]));
    assert!(get_pod_replica_sets(core, &pod).is_empty());
    let mut rs = new_replica_set(1, &[("foo", "bar")]);
    rs.metadata.namespace = Some("ns".into());
    rs.metadata.name = Some("bar".into());
    h.rs_store.add(Arc::new(rs));
    let names: Vec<String> = get_pod_replica_sets(core, &pod)
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .collect();
    assert_eq!(names, vec!["bar".to_string()]);
}

#[tokio::test]
async fn test_deletion_timestamp() {
    let h = Harness::new(500);
    let core = h.controller.context();
    let rs = new_replica_set(1, &[("foo", "bar")]);
    h.add_rs(&rs);
    let key = &ObjectKey::new("default", "foobar");
    let mut pod = new_pod("pod0", &rs, "Pending", None, true);
    pod.metadata.deletion_timestamp = Some(Time(t0()));
    pod.metadata.resource_version = Some("1".into());
    let pod = Arc::new(pod);
    // (a) add of an already-terminating pod counts as its deletion.
    core.expectations
        .expect_deletions(key, &["default/pod0".to_string()]);
    add_pod(core, &pod);
    assert!(core.expectations.satisfied_expectations(key));
    assert_eq!(h.drain_queue(), vec![key.to_string()]);
    // (b) the update that sets the deletionTimestamp.
    core.expectations
        .expect_deletions(key, &["default/pod0".to_string()]);
    let mut old = (*pod).clone();
    old.metadata.deletion_timestamp = None;
    old.metadata.resource_version = Some("2".into());
    update_pod(core, &Arc::new(old), &pod);
    assert!(core.expectations.satisfied_expectations(key));
    assert_eq!(h.drain_queue(), vec![key.to_string()]);
    // (c) events for a pod that is not expected do not count.
    core.expectations
        .expect_deletions(key, &["default/secondPod".to_string()]);
    let mut old = (*pod).clone();
    old.metadata.resource_version = Some("2".into());
    update_pod(core, &Arc::new(old), &pod);
    assert!(!core.expectations.satisfied_expectations(key));
    delete_pod(core, DeletedObject::Object(pod.clone()));
    assert!(!core.expectations.satisfied_expectations(key));
    let mut second = (*pod).clone();
    second.metadata.name = Some("secondPod".into());
    delete_pod(core, DeletedObject::Object(Arc::new(second)));
    assert!(core.expectations.satisfied_expectations(key));
    assert!(h.drain_queue().contains(&key.to_string()));
}

#[tokio::test]
async fn add_pod_observes_creation_for_its_owner_only() {
    let h = Harness::new(500);
    let core = h.controller.context();
    let rs = new_replica_set(2, &[("foo", "bar")]);
    h.add_rs(&rs);
    core.expectations
        .expect_creations(&ObjectKey::new("default", "foobar"), 2);
    add_pod(core, &Arc::new(new_pod("a", &rs, "Pending", None, true)));
    assert_eq!(
        core.expectations
            .get_expectations(&ObjectKey::new("default", "foobar")),
        Some((1, 0))
    );
    // Same name, other UID (a previous incarnation): ignored.
    let mut stale = new_pod("b", &rs, "Pending", None, true);
    if let Some(refs) = stale.metadata.owner_references.as_mut() {
        refs[0].uid = fresh_uid();
    }
    add_pod(core, &Arc::new(stale));
    assert_eq!(
        core.expectations
            .get_expectations(&ObjectKey::new("default", "foobar")),
        Some((1, 0))
    );
    assert_eq!(h.drain_queue(), vec!["default/foobar".to_string()]);
}

#[tokio::test]
async fn update_rs_with_new_uid_clears_expectations_and_enqueues() {
    let h = Harness::new(500);
    let core = h.controller.context();
    let old = new_replica_set(1, &[("foo", "bar")]);
    let new = new_replica_set(3, &[("foo", "bar")]); // fresh UID
    core.expectations
        .expect_creations(&ObjectKey::new("default", "foobar"), 1);
    update_rs(core, &Arc::new(old.clone()), &Arc::new(new));
    assert_eq!(
        core.expectations
            .get_expectations(&ObjectKey::new("default", "foobar")),
        None
    );
    assert_eq!(h.drain_queue(), vec!["default/foobar".to_string()]);
    // Resync (same object) still enqueues.
    let old = Arc::new(old);
    update_rs(core, &old, &old);
    assert_eq!(h.drain_queue(), vec!["default/foobar".to_string()]);
    // Delete via tombstone uses the tombstone key.
    core.expectations
        .expect_creations(&ObjectKey::new("default", "foobar"), 1);
    delete_rs(
        core,
        DeletedObject::Unknown(DeletedFinalStateUnknown {
            key: ObjectKey::new("default", "foobar"),
            obj: old,
        }),
    );
    assert_eq!(
        core.expectations
            .get_expectations(&ObjectKey::new("default", "foobar")),
        None
    );
    assert_eq!(h.drain_queue(), vec!["default/foobar".to_string()]);
}

#[tokio::test(start_paused = true)]
async fn pod_turning_ready_requeues_after_exactly_min_ready_seconds() {
    let h = Harness::new(500);
    let core = h.controller.context();
    let mut rs = new_replica_set(1, &[("foo", "bar")]);
    rs.spec.min_ready_seconds = Some(10);
    h.add_rs(&rs);
    let old = Arc::new(new_pod("p", &rs, "Pending", None, true));
    let mut cur = new_pod("p", &rs, "Running", Some(t0()), true);
    cur.metadata.resource_version = Some("2".into());
    update_pod(core, &old, &Arc::new(cur));
    assert_eq!(h.drain_queue(), vec!["default/foobar".to_string()]);
    tokio::time::sleep(Duration::from_millis(9_900)).await;
    assert!(h.drain_queue().is_empty(), "not before minReadySeconds");
    // Upstream's updatePod waits exactly minReadySeconds (no padding).
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(h.drain_queue(), vec!["default/foobar".to_string()]);
}
