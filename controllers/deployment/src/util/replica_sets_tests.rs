use super::*;
use crate::testing::{labels, rolling_deployment, rs, template, ts, with_annotation};
use crate::util::annotations::REVISION_ANNOTATION;
use crate::util::template_equality::{equal_ignore_hash, equal_ignore_hash_serialized};
use k8s_openapi::api::apps::v1::ReplicaSetStatus;
use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

fn generate_pod_template_spec(
    name: &str,
    node: &str,
    annotations: &[(&str, &str)],
    lbls: &[(&str, &str)],
) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            name: Some(name.into()),
            annotations: Some(labels(annotations)),
            labels: Some(labels(lbls)),
            ..Default::default()
        }),
        spec: Some(PodSpec {
            node_name: Some(node.into()),
            ..Default::default()
        }),
    }
}

#[test]
fn test_equal_ignore_hash() {
    const H: &str = DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY;
    let g = generate_pod_template_spec;
    let cases = [
        (
            "Same spec, same labels",
            g(
                "foo",
                "foo-node",
                &[],
                &[(H, "value-1"), ("something", "else")],
            ),
            g(
                "foo",
                "foo-node",
                &[],
                &[(H, "value-1"), ("something", "else")],
            ),
            true,
        ),
        (
            "Same spec, only pod-template-hash label value is different",
            g(
                "foo",
                "foo-node",
                &[],
                &[(H, "value-1"), ("something", "else")],
            ),
            g(
                "foo",
                "foo-node",
                &[],
                &[(H, "value-2"), ("something", "else")],
            ),
            true,
        ),
        (
            "Same spec, the former doesn't have pod-template-hash label",
            g("foo", "foo-node", &[], &[("something", "else")]),
            g(
                "foo",
                "foo-node",
                &[],
                &[(H, "value-2"), ("something", "else")],
            ),
            true,
        ),
        (
            "Same spec, the label is different, the former doesn't have pod-template-hash label, same number of labels",
            g("foo", "foo-node", &[], &[("something", "else")]),
            g("foo", "foo-node", &[], &[(H, "value-2")]),
            false,
        ),
        (
            "Same spec, the label is different, the latter doesn't have pod-template-hash label, same number of labels",
            g("foo", "foo-node", &[], &[(H, "value-1")]),
            g("foo", "foo-node", &[], &[("something", "else")]),
            false,
        ),
        (
            "Same spec, the label is different, and the pod-template-hash label value is the same",
            g("foo", "foo-node", &[], &[(H, "value-1")]),
            g(
                "foo",
                "foo-node",
                &[],
                &[(H, "value-1"), ("something", "else")],
            ),
            false,
        ),
        (
            "Different spec, same labels",
            g(
                "foo",
                "foo-node",
                &[("former", "value")],
                &[(H, "value-1"), ("something", "else")],
            ),
            g(
                "foo",
                "foo-node",
                &[("latter", "value")],
                &[(H, "value-1"), ("something", "else")],
            ),
            false,
        ),
        (
            "Different spec, different pod-template-hash label value",
            g(
                "foo-1",
                "foo-node",
                &[],
                &[(H, "value-1"), ("something", "else")],
            ),
            g(
                "foo-2",
                "foo-node",
                &[],
                &[(H, "value-2"), ("something", "else")],
            ),
            false,
        ),
        (
            "Different spec, the former doesn't have pod-template-hash label",
            g("foo-1", "foo-node-1", &[], &[("something", "else")]),
            g(
                "foo-2",
                "foo-node-2",
                &[],
                &[(H, "value-2"), ("something", "else")],
            ),
            false,
        ),
        (
            "Different spec, different labels",
            g("foo", "foo-node-1", &[], &[("something", "else")]),
            g("foo", "foo-node-2", &[], &[("nothing", "else")]),
            false,
        ),
    ];
    for (name, a, b, want) in cases {
        assert_eq!(equal_ignore_hash(&a, &b), want, "{name}");
        assert_eq!(equal_ignore_hash(&b, &a), want, "{name} (reverse order)");
        // The shortcuts answer as the serialized comparison alone.
        assert_eq!(
            equal_ignore_hash_serialized(&a, &b),
            want,
            "{name} (serialized)"
        );
        // Inputs are not mutated.
        assert!(
            a.metadata
                .as_ref()
                .and_then(|m| m.labels.as_ref())
                .is_some()
        );
    }
}

#[test]
fn equal_ignore_hash_nil_equals_empty() {
    let mut a = template("img");
    let mut b = template("img");
    if let Some(m) = a.metadata.as_mut() {
        m.labels = None;
        m.annotations = Some(Default::default());
    }
    if let Some(m) = b.metadata.as_mut() {
        m.labels = Some(labels(&[(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, "abc")]));
    }
    assert!(equal_ignore_hash(&a, &b));
    assert!(equal_ignore_hash(&b, &a));
    // Field by field the annotations differ (absent against empty): only the serialized
    // comparison can say they are equal, and it does.
    assert!(equal_ignore_hash_serialized(&a, &b));
    // Equal field by field but for the hash label, absent on one side.
    let c = template("img");
    let mut d = template("img");
    if let Some(m) = d.metadata.as_mut() {
        m.labels
            .get_or_insert_with(Default::default)
            .insert(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.into(), "abc".into());
    }
    assert!(equal_ignore_hash(&c, &d) && equal_ignore_hash(&d, &c));
    let mut e = template("img2");
    e.metadata = d.metadata.clone();
    assert!(!equal_ignore_hash(&e, &d) && !equal_ignore_hash(&d, &e));
}

fn new_rs_for(d: &Deployment, name: &str, hash: &str, created: i64) -> ReplicaSet {
    let mut r = rs(name, 0, 0, created);
    let mut t = d.spec.template.clone();
    if let Some(m) = t.metadata.as_mut() {
        m.labels
            .get_or_insert_with(Default::default)
            .insert(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.into(), hash.into());
    }
    r.spec.template = Some(t);
    r
}

#[test]
fn test_find_new_replica_set() {
    let d = rolling_deployment("nginx", 1, None, None);
    let new_rs = new_rs_for(&d, "new", "hash", 60);
    let new_rs_dup = new_rs_for(&d, "dup", "different-hash", 0);
    let old_rs = rs("old", 0, 0, 0); // template image "old" differs
    let name = |r: Option<&ReplicaSet>| r.map(|r| name_of(&r.metadata).to_string());
    assert_eq!(
        name(find_new_replica_set(&d, &[&new_rs, &old_rs])),
        Some("new".into()),
        "Get new ReplicaSet with the same template as Deployment spec but different pod-template-hash value"
    );
    assert_eq!(
        name(find_new_replica_set(&d, &[&new_rs, &old_rs, &new_rs_dup])),
        Some("dup".into()),
        "Get the oldest new ReplicaSet when there are more than one ReplicaSet with the same template"
    );
    assert_eq!(
        name(find_new_replica_set(&d, &[&old_rs])),
        None,
        "Get nil new ReplicaSet"
    );
}

#[test]
fn test_find_old_replica_sets() {
    let d = rolling_deployment("nginx", 1, None, None);
    let mut new_rs = new_rs_for(&d, "new", "hash", 60);
    new_rs.spec.replicas = Some(1);
    let new_rs_dup = new_rs_for(&d, "dup", "different-hash", 0);
    let old_rs = rs("old", 0, 0, -60);
    let names = |v: Vec<&ReplicaSet>| {
        v.iter()
            .map(|r| name_of(&r.metadata).to_string())
            .collect::<Vec<_>>()
    };
    let (req, all) = old_replica_sets(
        find_new_replica_set(&d, &[&new_rs, &old_rs]),
        &[&new_rs, &old_rs],
    );
    assert_eq!(
        (names(req), names(all)),
        (vec![], vec!["old".to_string()]),
        "Get old ReplicaSets"
    );
    let (req, all) = old_replica_sets(find_new_replica_set(&d, &[&old_rs]), &[&old_rs]);
    assert_eq!(
        (names(req), names(all)),
        (vec![], vec!["old".to_string()]),
        "Get old ReplicaSets with no new ReplicaSet"
    );
    let (req, all) = old_replica_sets(
        find_new_replica_set(&d, &[&old_rs, &new_rs, &new_rs_dup]),
        &[&old_rs, &new_rs, &new_rs_dup],
    );
    assert_eq!(
        (names(req), names(all)),
        (
            vec!["new".to_string()],
            vec!["old".to_string(), "new".to_string()]
        ),
        "Get old ReplicaSets with two new ReplicaSets, only the oldest new ReplicaSet is seen as new ReplicaSet"
    );
    let (req, all) = old_replica_sets(find_new_replica_set(&d, &[&new_rs]), &[&new_rs]);
    assert!(
        req.is_empty() && all.is_empty(),
        "Get empty old ReplicaSets"
    );
}

fn full(name: &str, spec: i32, status: i32, obs_gen: i64, terminating: Option<i32>) -> ReplicaSet {
    let mut r = rs(name, spec, 0, 0);
    r.status = Some(ReplicaSetStatus {
        replicas: status,
        observed_generation: Some(obs_gen),
        terminating_replicas: terminating,
        ..Default::default()
    });
    r
}

#[test]
fn test_get_replica_count_for_replica_sets() {
    let rs1 = full("foo-rs", 1, 2, 1, Some(3));
    // Upstream sets rs1's observedGeneration twice, leaving rs2 at 0 with a terminating count.
    let rs2 = full("bar-rs", 2, 3, 0, Some(1));
    let rs3 = full("unsynced-rs", 3, 0, 0, None);
    let rs4 = full("dropped-rs", 1, 1, 1, None);
    let cases: [(&str, Vec<&ReplicaSet>, i32, i32, Option<i32>); 6] = [
        ("scaling down rs1", vec![&rs1], 1, 2, Some(3)),
        ("scaling down rs1 and rs2", vec![&rs1, &rs2], 3, 5, Some(4)),
        ("scaling up rs3", vec![&rs3], 3, 0, Some(0)),
        (
            "scaling down rs1 and rs2 and scaling up rs3",
            vec![&rs1, &rs2, &rs3],
            6,
            5,
            Some(4),
        ),
        (
            "invalid/unknown terminating status for rs4",
            vec![&rs4],
            1,
            1,
            None,
        ),
        (
            "invalid/unknown terminating status for rs4 with rs1, rs2 and rs3",
            vec![&rs1, &rs2, &rs3, &rs4],
            7,
            6,
            None,
        ),
    ];
    for (name, sets, count, actual, terminating) in cases {
        assert_eq!(
            get_replica_count_for_replica_sets(sets.iter().copied()),
            count,
            "{name}"
        );
        assert_eq!(
            get_actual_replica_count_for_replica_sets(sets.iter().copied()),
            actual,
            "{name}"
        );
        assert_eq!(
            get_terminating_replica_count_for_replica_sets(sets.iter().copied()),
            terminating,
            "{name}"
        );
    }
}

#[test]
fn ready_and_available_counts() {
    let mut a = rs("a", 3, 2, 0);
    if let Some(s) = a.status.as_mut() {
        s.ready_replicas = Some(3);
    }
    let b = rs("b", 1, 1, 0);
    assert_eq!(get_available_replica_count_for_replica_sets([&a, &b]), 3);
    assert_eq!(get_ready_replica_count_for_replica_sets([&a, &b]), 3);
    assert_eq!(
        filter_active_replica_sets([&a, &rs("z", 0, 0, 0), &b]).len(),
        2
    );
}

#[test]
fn sort_orders() {
    let names = |v: &[&ReplicaSet]| {
        v.iter()
            .map(|r| name_of(&r.metadata).to_string())
            .collect::<Vec<_>>()
    };
    let a = rs("a", 2, 0, 10);
    let b = rs("b", 2, 0, 20);
    let c = rs("c", 5, 0, 30);
    let d = rs("d", 2, 0, 10);
    let mut v = vec![&c, &b, &d, &a];
    v.sort_by(|x, y| cmp_by_creation_timestamp(x, y));
    assert_eq!(names(&v), ["a", "d", "b", "c"]);
    v.sort_by(|x, y| cmp_by_size_older(x, y));
    assert_eq!(names(&v), ["c", "a", "d", "b"]);
    v.sort_by(|x, y| cmp_by_size_newer(x, y));
    assert_eq!(names(&v), ["c", "b", "d", "a"]);
    let r1 = with_annotation(rs("r1", 0, 0, 30), REVISION_ANNOTATION, "1");
    let r2 = with_annotation(rs("r2", 0, 0, 10), REVISION_ANNOTATION, "2");
    let none = rs("none", 0, 0, 20);
    let mut v = vec![&r2, &r1, &none];
    v.sort_by(|x, y| cmp_by_revision(x, y));
    assert_eq!(names(&v), ["none", "r1", "r2"]);
    // Missing timestamp sorts first (Go zero time).
    let mut nots = rs("nots", 0, 0, 0);
    nots.metadata.creation_timestamp = None;
    let mut v = vec![&a, &nots];
    v.sort_by(|x, y| cmp_by_creation_timestamp(x, y));
    assert_eq!(names(&v), ["nots", "a"]);
    let _ = ts(0);
}

#[test]
fn test_find_active_or_latest() {
    let name = |r: Option<&ReplicaSet>| r.map(|r| name_of(&r.metadata).to_string());
    let new_rs = rs("new", 0, 0, 30);
    let old_a = rs("old-a", 0, 0, 10);
    let old_b = rs("old-b", 0, 0, 20);
    let active_old = rs("active", 3, 0, 5);
    let active_new = rs("new-active", 2, 0, 30);
    assert_eq!(name(find_active_or_latest(None, &[])), None);
    assert_eq!(
        name(find_active_or_latest(Some(&new_rs), &[&old_a])),
        Some("new".into())
    );
    assert_eq!(
        name(find_active_or_latest(None, &[&old_a, &old_b])),
        Some("old-b".into())
    );
    assert_eq!(
        name(find_active_or_latest(Some(&new_rs), &[&active_old, &old_a])),
        Some("active".into())
    );
    assert_eq!(
        name(find_active_or_latest(Some(&active_new), &[&active_old])),
        None
    );
}

#[test]
fn set_from_replica_set_template_strips_hash() {
    let mut d = rolling_deployment("nginx", 1, None, None);
    let mut t = template("v1");
    if let Some(m) = t.metadata.as_mut() {
        m.labels
            .get_or_insert_with(Default::default)
            .insert(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.into(), "abc".into());
    }
    set_from_replica_set_template(&mut d, &t);
    let got = d.spec.template.clone();
    assert_eq!(got, template("v1"));
}

#[test]
fn controller_ref_helpers() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    let d = rolling_deployment("web", 1, None, None);
    let mut r = rs("web-1", 1, 1, 0);
    assert!(!is_controlled_by(&r, &d));
    let owner = |uid: &str, controller: Option<bool>| OwnerReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "web".into(),
        uid: uid.into(),
        controller,
        block_owner_deletion: None,
    };
    r.metadata.owner_references = Some(vec![owner("uid-web", None)]);
    assert!(
        !is_controlled_by(&r, &d),
        "a non-controller owner reference does not count"
    );
    r.metadata.owner_references = Some(vec![owner("uid-web", None), owner("other", Some(true))]);
    assert!(!is_controlled_by(&r, &d));
    assert_eq!(
        get_controller_of(&r.metadata).map(|o| o.uid.as_str()),
        Some("other")
    );
    r.metadata.owner_references = Some(vec![owner("uid-web", Some(true))]);
    assert!(is_controlled_by(&r, &d));
}
