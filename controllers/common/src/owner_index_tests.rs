use super::*;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::pod_view::PodView;

fn meta(ns: &str, name: &str, controller: Option<(&str, &str, &str)>) -> ObjectMeta {
    let owner_references = controller.map(|(kind, name, uid)| {
        vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: uid.into(),
            controller: Some(true),
            ..Default::default()
        }]
    });
    ObjectMeta {
        namespace: Some(ns.into()),
        name: Some(name.into()),
        owner_references,
        ..Default::default()
    }
}

fn pod(ns: &str, name: &str, controller: Option<(&str, &str, &str)>) -> PodView {
    PodView {
        metadata: meta(ns, name, controller),
        ..Default::default()
    }
}

fn rs(ns: &str, name: &str, controller: Option<(&str, &str, &str)>) -> ReplicaSet {
    ReplicaSet {
        metadata: meta(ns, name, controller),
        ..Default::default()
    }
}

fn names<T: Dependent>(objs: &[Arc<T>]) -> Vec<String> {
    objs.iter()
        .map(|o| format!("{}/{}", namespace_of(o), name_of(o)))
        .collect()
}

/// A lister over `objs`, with the controller index or without (the namespace-wide path).
fn lister<T: Dependent + Clone>(objs: &[T], indexed: bool) -> Lister<T> {
    let store: Store<T> = Store::new();
    if indexed {
        store
            .add_indexer(CONTROLLER_UID_INDEX, controller_uid_index_fn())
            .expect("index");
    }
    for o in objs {
        store.add(Arc::new(o.clone()));
    }
    Lister::new(store)
}

/// The same answers with and without the index (upstream's index selects by namespace, kind,
/// name and UID of the controller reference); owned first, then orphans, each by name.
#[test]
fn owned_pods_and_orphans_with_and_without_the_index() {
    let pods = [
        pod("a", "owned-2", Some(("ReplicaSet", "rs", "uid-1"))),
        pod("a", "owned", Some(("ReplicaSet", "rs", "uid-1"))),
        pod(
            "b",
            "same-uid-other-ns",
            Some(("ReplicaSet", "rs", "uid-1")),
        ),
        pod(
            "a",
            "same-uid-other-kind",
            Some(("StatefulSet", "rs", "uid-1")),
        ),
        pod(
            "a",
            "same-uid-other-name",
            Some(("ReplicaSet", "other", "uid-1")),
        ),
        pod("a", "other-owner", Some(("ReplicaSet", "rs2", "uid-2"))),
        pod("a", "b-orphan", None),
        pod("a", "a-orphan", None),
        pod("b", "orphan-other-ns", None),
    ];
    let owner = Owner {
        kind: "ReplicaSet",
        namespace: "a",
        name: "rs",
        uid: "uid-1",
    };
    for indexed in [true, false] {
        let lister = lister(&pods, indexed);
        assert_eq!(
            names(&filter_by_owner(&lister, owner, false)),
            ["a/owned", "a/owned-2"],
            "indexed: {indexed}"
        );
        assert_eq!(
            names(&filter_by_owner(&lister, owner, true)),
            ["a/owned", "a/owned-2", "a/a-orphan", "a/b-orphan"],
            "indexed: {indexed}"
        );
    }
}

/// A claim looks at every object of the namespace whose controller has the owner's UID,
/// whatever the reference's kind and name (`ClaimObject` compares UIDs), and at the orphans.
#[test]
fn claim_candidates_are_the_uid_s_objects_and_the_orphans_by_name() {
    let sets = [
        rs("a", "web-2", Some(("Deployment", "web", "uid-1"))),
        rs("a", "web-1", Some(("Deployment", "web", "uid-1"))),
        rs("a", "renamed", Some(("Deployment", "old-name", "uid-1"))),
        rs("a", "foreign", Some(("Deployment", "db", "uid-2"))),
        rs("a", "orphan", None),
        rs("b", "other-ns", Some(("Deployment", "web", "uid-1"))),
        rs("b", "orphan-other-ns", None),
    ];
    for indexed in [true, false] {
        let lister = lister(&sets, indexed);
        assert_eq!(
            names(&claim_candidates(&lister, "a", "uid-1")),
            ["a/orphan", "a/renamed", "a/web-1", "a/web-2"],
            "indexed: {indexed}"
        );
        assert_eq!(
            names(&claim_candidates(&lister, "c", "uid-1")),
            Vec::<String>::new()
        );
    }
}

/// Siblings are found in every namespace, as upstream's index (not the namespace) finds them.
#[test]
fn controlled_by_reads_every_namespace() {
    let sets = [
        rs("b", "x", Some(("Deployment", "web", "uid-1"))),
        rs("a", "y", Some(("Deployment", "web", "uid-1"))),
        rs("a", "z", Some(("Deployment", "db", "uid-2"))),
        rs("a", "orphan", None),
    ];
    for indexed in [true, false] {
        let lister = lister(&sets, indexed);
        assert_eq!(names(&controlled_by(&lister, "uid-1")), ["a/y", "b/x"]);
        assert!(controlled_by(&lister, "uid-3").is_empty());
    }
}

/// An update moves an object between the buckets: released, it is an orphan.
#[test]
fn the_index_follows_adoption_and_release() {
    let lister = lister(&[rs("a", "web-1", None)], true);
    let owner = Owner {
        kind: "Deployment",
        namespace: "a",
        name: "web",
        uid: "uid-1",
    };
    let adopted = Arc::new(rs("a", "web-1", Some(("Deployment", "web", "uid-1"))));
    lister.store().update(adopted);
    assert_eq!(names(&filter_by_owner(&lister, owner, false)), ["a/web-1"]);
    lister.store().update(Arc::new(rs("a", "web-1", None)));
    assert!(filter_by_owner(&lister, owner, false).is_empty());
    assert_eq!(names(&filter_by_owner(&lister, owner, true)), ["a/web-1"]);
}

/// An object adopted between the orphan read and the owned read is kept once, owned.
#[test]
fn an_object_read_in_both_buckets_is_kept_once_as_owned() {
    let owned = vec![Arc::new(rs("a", "x", Some(("Deployment", "web", "uid-1"))))];
    let mut orphans = vec![Arc::new(rs("a", "w", None)), Arc::new(rs("a", "x", None))];
    drop_adopted(&mut orphans, &owned);
    assert_eq!(names(&orphans), ["a/w"]);
}

#[test]
fn ensure_index_registers_once() {
    let store: Store<ReplicaSet> = Store::new();
    let mut calls = 0;
    for _ in 0..2 {
        ensure_index(
            &store,
            CONTROLLER_UID_INDEX,
            controller_uid_index_fn(),
            |name, f| {
                calls += 1;
                store.add_indexer(name, f)
            },
        );
    }
    assert_eq!(calls, 1);
    assert!(store.has_index(CONTROLLER_UID_INDEX));
}
