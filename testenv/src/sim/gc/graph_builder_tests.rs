//! Tests of the graph builder: upstream's `TestProcessEvent` scenarios and
//! `TestGetAlternateOwnerIdentity` table, the graph steps of `TestConflictingData`, the
//! deletion transitions, and a property test of the graph's links.

use proptest::prelude::*;

use super::graph::{FOREGROUND, Graph, Node, ORPHAN, ObjectRef, OwnerRef};
use super::graph_builder::{EventKind, GraphEvent, Observed, alternate_owner_identity};

fn id(api_version: &str, kind: &str, ns: &str, name: &str, uid: &str) -> ObjectRef {
    ObjectRef {
        kind: kind.into(),
        api_version: api_version.into(),
        namespace: ns.into(),
        name: name.into(),
        uid: uid.into(),
    }
}

fn owner_ref(r: &ObjectRef, block: Option<bool>) -> OwnerRef {
    OwnerRef {
        api_version: r.api_version.clone(),
        kind: r.kind.clone(),
        name: r.name.clone(),
        uid: r.uid.clone(),
        controller: None,
        block_owner_deletion: block,
    }
}

fn observed(identity: &ObjectRef, owners: &[&ObjectRef]) -> Observed {
    Observed {
        identity: identity.clone(),
        owners: owners.iter().map(|o| owner_ref(o, None)).collect(),
        being_deleted: false,
        finalizers: Vec::new(),
    }
}

fn event(kind: EventKind, obj: Observed) -> GraphEvent {
    GraphEvent {
        virtual_: false,
        kind,
        obj,
        old: None,
    }
}

/// A pod with uid `uid` owned by the pods with the uids in `owners` (upstream's `createEvent`).
fn pod_event(kind: EventKind, uid: &str, owners: &[&str]) -> GraphEvent {
    let owners: Vec<ObjectRef> = owners
        .iter()
        .map(|o| id("v1", "Pod", "ns1", o, o))
        .collect();
    let refs: Vec<&ObjectRef> = owners.iter().collect();
    event(kind, observed(&id("v1", "Pod", "ns1", uid, uid), &refs))
}

fn node(identity: &ObjectRef, owners: &[&ObjectRef]) -> Node {
    Node::observed(
        identity.clone(),
        owners.iter().map(|o| owner_ref(o, None)).collect(),
    )
}

#[test]
fn process_event_scenarios_keep_the_graph_consistent() {
    use EventKind::{Add, Delete, Update};
    let scenarios: Vec<(&str, Vec<GraphEvent>)> = vec![
        (
            "test1",
            vec![
                pod_event(Add, "1", &[]),
                pod_event(Add, "2", &["1"]),
                pod_event(Add, "3", &["1", "2"]),
            ],
        ),
        (
            "test2",
            vec![
                pod_event(Add, "1", &[]),
                pod_event(Add, "2", &["1"]),
                pod_event(Add, "3", &["1", "2"]),
                pod_event(Add, "4", &["2"]),
                pod_event(Delete, "2", &["doesn't matter"]),
            ],
        ),
        (
            "test3",
            vec![
                pod_event(Add, "1", &[]),
                pod_event(Add, "2", &["1"]),
                pod_event(Add, "3", &["1", "2"]),
                pod_event(Add, "4", &["3"]),
                pod_event(Update, "2", &["4"]),
            ],
        ),
        (
            "reverse test2",
            vec![
                pod_event(Add, "4", &["2"]),
                pod_event(Add, "3", &["1", "2"]),
                pod_event(Add, "2", &["1"]),
                pod_event(Add, "1", &[]),
                pod_event(Delete, "2", &["doesn't matter"]),
            ],
        ),
    ];
    for (name, events) in scenarios {
        let mut g = Graph::default();
        for e in &events {
            g.process(e);
            assert_eq!(g.broken_links(), Vec::<String>::new(), "{name}");
        }
    }
}

#[test]
fn deleting_an_owner_queues_its_dependents_and_records_it_absent() {
    let mut g = Graph::default();
    g.process(&pod_event(EventKind::Add, "rs", &[]));
    g.process(&pod_event(EventKind::Add, "a", &["rs"]));
    g.process(&pod_event(EventKind::Add, "b", &["rs"]));
    let fx = g.process(&pod_event(EventKind::Delete, "rs", &[]));
    assert_eq!(fx.attempt_to_delete, ["a", "b"]);
    assert_eq!(fx.absent_owners, [id("v1", "Pod", "ns1", "rs", "rs")]);
    assert!(g.get("rs").is_none());
    // A dependent whose owner never appeared gets a virtual owner, queued for verification.
    let mut g = Graph::default();
    let fx = g.process(&pod_event(EventKind::Add, "orphan", &["ghost"]));
    assert_eq!(fx.attempt_to_delete, ["ghost"]);
    assert!(g.get("ghost").is_some_and(|n| n.virtual_));
}

#[test]
fn foreground_and_orphan_transitions() {
    let rs = id("apps/v1", "ReplicaSet", "ns", "rs", "rs");
    let pod = id("v1", "Pod", "ns", "pod", "pod");
    let mut g = Graph::default();
    g.process(&event(EventKind::Add, observed(&rs, &[])));
    let mut dep = observed(&pod, &[&rs]);
    dep.owners[0].block_owner_deletion = Some(true);
    g.process(&event(EventKind::Add, dep.clone()));
    // The owner starts deleting in the foreground: its dependents, then itself.
    let mut deleting = observed(&rs, &[]);
    deleting.being_deleted = true;
    deleting.finalizers = vec![FOREGROUND.into()];
    let mut e = event(EventKind::Update, deleting.clone());
    e.old = Some(observed(&rs, &[]));
    let fx = g.process(&e);
    assert_eq!(fx.attempt_to_delete, ["pod", "rs"]);
    assert!(
        g.get("rs")
            .is_some_and(|n| n.deleting_dependents && n.being_deleted)
    );
    // The same state again is no transition.
    let mut again = event(EventKind::Update, deleting.clone());
    again.old = Some(deleting);
    assert_eq!(g.process(&again).attempt_to_delete, Vec::<String>::new());
    // The dependent drops its blocking reference: the owner is checked again.
    let mut e = event(EventKind::Update, observed(&pod, &[]));
    e.old = Some(dep);
    assert_eq!(g.process(&e).attempt_to_delete, ["rs"]);
    assert!(g.get("rs").is_some_and(|n| n.dependents.is_empty()));

    // Orphan: the owner goes to attemptToOrphan only.
    let mut g = Graph::default();
    g.process(&event(EventKind::Add, observed(&rs, &[])));
    g.process(&event(EventKind::Add, observed(&pod, &[&rs])));
    let mut orphaning = observed(&rs, &[]);
    orphaning.being_deleted = true;
    orphaning.finalizers = vec![ORPHAN.into(), FOREGROUND.into()];
    let fx = g.process(&event(EventKind::Update, orphaning));
    assert_eq!(fx.attempt_to_orphan, ["rs"]);
    assert!(fx.attempt_to_delete.is_empty());
}

#[test]
fn a_dependent_going_away_rechecks_a_foreground_owner() {
    let rs = id("apps/v1", "ReplicaSet", "ns", "rs", "rs");
    let pod = id("v1", "Pod", "ns", "pod", "pod");
    let mut g = Graph::default();
    let mut deleting = observed(&rs, &[]);
    deleting.being_deleted = true;
    deleting.finalizers = vec![FOREGROUND.into()];
    g.process(&event(EventKind::Add, deleting));
    g.process(&event(EventKind::Add, observed(&pod, &[&rs])));
    let fx = g.process(&event(EventKind::Delete, observed(&pod, &[&rs])));
    assert_eq!(fx.attempt_to_delete, ["rs"]);
}

/// The graph steps of upstream's `TestConflictingData` "good child in ns1 -> cluster-scoped
/// owner": the virtual owner first takes the child's namespace, then the observed node's.
#[test]
fn a_cluster_scoped_owner_observed_after_its_namespaced_child() {
    let node1 = id("v1", "Node", "", "nodename", "nodeuid1");
    let node1_in_ns1 = id("v1", "Node", "ns1", "nodename", "nodeuid1");
    let pod1 = id("v1", "Pod", "ns1", "podname1", "poduid1");
    let mut g = Graph::default();
    let fx = g.process(&event(EventKind::Add, observed(&pod1, &[&node1])));
    assert_eq!(fx.attempt_to_delete, ["nodeuid1"]);
    let virtual_node = g.get("nodeuid1").cloned().expect("virtual node");
    assert!(virtual_node.virtual_);
    assert_eq!(virtual_node.identity, node1_in_ns1);
    let fx = g.process(&event(EventKind::Add, observed(&node1, &[])));
    assert_eq!(fx, Default::default(), "no dependent disagrees");
    let n = g.get("nodeuid1").expect("node");
    assert!(!n.virtual_);
    assert_eq!(n.identity, node1);
    assert_eq!(g.get("poduid1").map(|n| n.owners.len()), Some(1));
}

/// `TestConflictingData` "bad child in ns1 -> owner in ns2 (child first)": observing the owner
/// in another namespace queues the child and reports OwnerRefInvalidNamespace.
#[test]
fn an_owner_observed_in_another_namespace_than_its_child() {
    let pod1 = id("v1", "Pod", "ns1", "podname1", "poduid1");
    let pod2_ns1 = id("v1", "Pod", "ns1", "podname2", "poduid2");
    let pod2_ns2 = id("v1", "Pod", "ns2", "podname2", "poduid2");
    let mut g = Graph::default();
    g.process(&event(EventKind::Add, observed(&pod1, &[&pod2_ns2])));
    assert_eq!(g.get("poduid2").map(|n| n.identity.clone()), Some(pod2_ns1));
    let fx = g.process(&event(EventKind::Add, observed(&pod2_ns2, &[])));
    assert_eq!(fx.attempt_to_delete, ["poduid1"]);
    assert_eq!(fx.invalid_namespace.len(), 1);
    assert_eq!(fx.invalid_namespace[0].0, pod1);
    assert_eq!(fx.invalid_namespace[0].1.uid, "poduid2");
    // A child created after the owner was observed in another namespace is reported at once.
    let pod3 = id("v1", "Pod", "ns1", "podname3", "poduid3");
    let fx = g.process(&event(EventKind::Add, observed(&pod3, &[&pod2_ns2])));
    assert_eq!(fx.attempt_to_delete, ["poduid3"]);
    assert_eq!(fx.invalid_namespace.len(), 1);
}

/// A virtual owner verified absent under one identity, while another dependent names the same
/// uid with other coordinates: only the matching dependents go, and the node takes the other
/// identity to verify it next.
#[test]
fn a_virtual_delete_with_disagreeing_dependents() {
    let owner_v1 = id("example.com/v1", "Widget", "ns", "w", "wuid");
    let owner_v2 = id("example.com/v2", "Widget", "ns", "w", "wuid");
    let a = id("v1", "ConfigMap", "ns", "a", "auid");
    let b = id("v1", "ConfigMap", "ns", "b", "buid");
    let mut g = Graph::default();
    g.process(&event(EventKind::Add, observed(&a, &[&owner_v1])));
    g.process(&event(EventKind::Add, observed(&b, &[&owner_v2])));
    let mut e = event(EventKind::Delete, Observed::identity_only(owner_v1.clone()));
    e.virtual_ = true;
    let fx = g.process(&e);
    assert_eq!(fx.attempt_to_delete, ["auid"]);
    assert_eq!(fx.absent_owners, std::slice::from_ref(&owner_v1));
    assert_eq!(fx.attempt_to_delete_later, ["wuid"]);
    assert_eq!(
        g.get("wuid").map(|n| n.identity.clone()),
        Some(owner_v2.clone())
    );
    // `a` is collected; verified absent under the other identity too, the node goes and the
    // rest of its dependents follow.
    g.process(&event(EventKind::Delete, observed(&a, &[&owner_v1])));
    let mut e = event(EventKind::Delete, Observed::identity_only(owner_v2.clone()));
    e.virtual_ = true;
    let fx = g.process(&e);
    assert!(g.get("wuid").is_none());
    assert_eq!(fx.attempt_to_delete, ["buid"]);
    assert_eq!(fx.absent_owners, [owner_v2]);
    assert_eq!(g.broken_links(), Vec::<String>::new());
}

#[test]
fn get_alternate_owner_identity() {
    let ns1child1 = id("v1", "Child", "ns1", "child1", "childuid11");
    let ns1child2 = id("v1", "Child", "ns1", "child2", "childuid12");
    let ns2child1 = id("v1", "Child", "ns2", "child1", "childuid21");
    let clusterchild1 = id("v1", "Child", "", "child1", "childuidc1");
    let nsabsentparentns1 = id("v1", "NSParent", "ns1", "parentname", "parentuid");
    let nsabsentparentns2 = id("v1", "NSParent", "ns2", "parentname", "parentuid");
    let nsabsentparent_version = id("xx", "NSParent", "ns1", "parentname", "parentuid");
    let nsabsentparent_kind = id("v1", "xxxxxxxx", "ns1", "parentname", "parentuid");
    let nsabsentparent_name = id("v1", "NSParent", "ns1", "xxxxxxxxxx", "parentuid");
    let clusterabsentparent = id("v1", "ClusterParent", "", "parentname", "parentuid");
    let clusterabsentparent_version = id("xx", "ClusterParent", "", "parentname", "parentuid");
    let clusterabsentparent_kind = id("v1", "xxxxxxxxxxxxx", "", "parentname", "parentuid");
    let clusterabsentparent_name = id("v1", "ClusterParent", "", "xxxxxxxxxx", "parentuid");
    let clusterabsentparent_ns1_version =
        id("xx", "ClusterParent", "ns1", "parentname", "parentuid");
    let clusterabsentparent_ns1_kind = id("v1", "xxxxxxxxxxxxx", "ns1", "parentname", "parentuid");
    let ordered_ns: Vec<ObjectRef> = (1..=5)
        .map(|v| id(&format!("v{v}"), "kind", "ns1", "name", "uid"))
        .collect();
    let ordered_cluster: Vec<ObjectRef> = (1..=5)
        .map(|v| id(&format!("v{v}"), "kind", "", "name", "uid"))
        .collect();
    let other = id("v1", "Parent", "ns1", "name", "anotheruid");
    let all_ns: Vec<&ObjectRef> = ordered_ns.iter().collect();
    let all_cluster: Vec<&ObjectRef> = ordered_cluster.iter().collect();

    let cases: Vec<(&str, Vec<Node>, &ObjectRef, Option<&ObjectRef>)> = vec![
        (
            "namespaced alternate version",
            vec![
                node(&ns1child1, &[&nsabsentparentns1]),
                node(&ns1child2, &[&nsabsentparent_version]),
            ],
            &nsabsentparentns1,
            Some(&nsabsentparent_version),
        ),
        (
            "namespaced alternate kind",
            vec![
                node(&ns1child1, &[&nsabsentparentns1]),
                node(&ns1child2, &[&nsabsentparent_kind]),
            ],
            &nsabsentparentns1,
            Some(&nsabsentparent_kind),
        ),
        (
            "namespaced alternate namespace",
            vec![
                node(&ns1child1, &[&nsabsentparentns1]),
                node(&ns2child1, &[&nsabsentparentns2]),
            ],
            &nsabsentparentns1,
            Some(&nsabsentparentns2),
        ),
        (
            "namespaced alternate name",
            vec![
                node(&ns1child1, &[&nsabsentparentns1]),
                node(&ns1child1, &[&nsabsentparent_name]),
            ],
            &nsabsentparentns1,
            Some(&nsabsentparent_name),
        ),
        (
            "cluster alternate version",
            vec![
                node(&ns1child1, &[&clusterabsentparent]),
                node(&ns1child2, &[&clusterabsentparent_version]),
            ],
            &clusterabsentparent,
            Some(&clusterabsentparent_ns1_version),
        ),
        (
            "cluster alternate kind",
            vec![
                node(&ns1child1, &[&clusterabsentparent]),
                node(&ns1child2, &[&clusterabsentparent_kind]),
            ],
            &clusterabsentparent,
            Some(&clusterabsentparent_ns1_kind),
        ),
        (
            "cluster alternate namespace",
            vec![
                node(&ns1child1, &[&clusterabsentparent]),
                node(&ns2child1, &[&clusterabsentparent]),
            ],
            &clusterabsentparent,
            None,
        ),
        (
            "cluster alternate name",
            vec![
                node(&ns1child1, &[&clusterabsentparent]),
                node(&ns1child1, &[&clusterabsentparent_name]),
            ],
            &clusterabsentparent,
            Some(&clusterabsentparent_name),
        ),
        (
            "namespaced ref from namespaced child returns first if absent is sorted last",
            vec![node(&ns1child1, &all_ns)],
            &ordered_ns[4],
            Some(&ordered_ns[0]),
        ),
        (
            "namespaced ref from namespaced child returns next after absent",
            vec![node(&ns1child1, &all_ns)],
            &ordered_ns[3],
            Some(&ordered_ns[4]),
        ),
        (
            "cluster ref from cluster child returns first if absent is sorted last",
            vec![node(&clusterchild1, &all_cluster)],
            &ordered_cluster[4],
            Some(&ordered_cluster[0]),
        ),
        (
            "cluster ref from cluster child returns next after absent",
            vec![node(&clusterchild1, &all_cluster)],
            &ordered_cluster[3],
            Some(&ordered_cluster[4]),
        ),
        (
            "ignore unrelated",
            vec![node(&ns1child1, &[&clusterabsentparent, &other])],
            &clusterabsentparent,
            None,
        ),
        (
            "ignore matches",
            vec![node(
                &ns1child1,
                &[&clusterabsentparent, &clusterabsentparent],
            )],
            &clusterabsentparent,
            None,
        ),
        (
            "collapse duplicates",
            vec![node(
                &clusterchild1,
                &[
                    &clusterabsentparent,
                    &clusterabsentparent_kind,
                    &clusterabsentparent_kind,
                ],
            )],
            &clusterabsentparent,
            Some(&clusterabsentparent_kind),
        ),
    ];
    for (name, deps, absent, want) in cases {
        let deps: Vec<&Node> = deps.iter().collect();
        assert_eq!(
            alternate_owner_identity(&deps, absent).as_ref(),
            want,
            "{name}"
        );
    }
}

fn arb_event() -> impl Strategy<Value = GraphEvent> {
    let uid = 0..6u8;
    (
        prop_oneof![
            Just(EventKind::Add),
            Just(EventKind::Update),
            Just(EventKind::Delete)
        ],
        uid,
        proptest::collection::vec((0..6u8, any::<bool>()), 0..3),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(kind, uid, owners, deleting, virtual_)| {
            let name = format!("o{uid}");
            let mut obj = observed(&id("v1", "Pod", "ns", &name, &name), &[]);
            obj.owners = owners
                .into_iter()
                .map(|(o, block)| {
                    owner_ref(
                        &id("v1", "Pod", "ns", &format!("o{o}"), &format!("o{o}")),
                        Some(block),
                    )
                })
                .collect();
            obj.being_deleted = deleting;
            if deleting {
                obj.finalizers = vec![FOREGROUND.into()];
            }
            GraphEvent {
                virtual_: virtual_ && kind == EventKind::Delete,
                kind,
                obj,
                old: None,
            }
        })
}

proptest! {
    /// Whatever the events, every dependent link has its owner reference and every owner
    /// reference to a node in the graph has its dependent link. (A uid, once deleted, is never
    /// seen again, as an object or an owner: upstream's graph does not keep the links otherwise
    /// either, and relies on the dependents queued at the deletion.)
    #[test]
    fn links_stay_consistent(events in proptest::collection::vec(arb_event(), 1..40)) {
        let mut g = Graph::default();
        let mut deleted = std::collections::HashSet::new();
        for e in &events {
            let uid = e.obj.identity.uid.clone();
            if e.kind != EventKind::Delete
                && (deleted.contains(&uid) || e.obj.owners.iter().any(|o| deleted.contains(&o.uid)))
            {
                continue;
            }
            if e.kind == EventKind::Delete {
                deleted.insert(uid);
            }
            g.process(e);
            prop_assert_eq!(g.broken_links(), Vec::<String>::new());
        }
    }
}
