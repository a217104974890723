use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::*;
use crate::testing::{Harness, key, new_pod, new_replica_set};

#[tokio::test]
async fn test_related_pods_lookup() {
    let h = Harness::new(500);
    let core = h.controller.context();
    let mk = |name: &str, sel: (&str, &str), ctrl: &str| {
        let mut rs = new_replica_set(1, &[sel]);
        rs.metadata.name = Some(name.into());
        rs.metadata.owner_references = Some(vec![OwnerReference {
            uid: ctrl.into(),
            controller: Some(true),
            ..Default::default()
        }]);
        rs
    };
    let foo1 = mk("foo1", ("foo", "bar"), "123");
    let foo2 = mk("foo2", ("foo", "baz"), "123");
    let bar1 = mk("bar1", ("foo", "quux"), "456");
    for (rs, pods) in [
        (&foo1, vec!["pod1", "pod2"]),
        (&foo2, vec!["pod3"]),
        (&bar1, vec!["pod4"]),
    ] {
        for p in pods {
            h.add_pod(new_pod(p, rs, "Running", None, true));
        }
    }
    let names = |rs| {
        let mut v: Vec<String> = get_indirectly_related_pods(core, rs)
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        v.sort();
        v
    };
    h.rs_store.add(Arc::new(foo1.clone()));
    h.rs_store.add(Arc::new(bar1.clone()));
    assert_eq!(names(&foo1), vec!["pod1", "pod2"]);
    h.rs_store.add(Arc::new(foo2.clone()));
    assert_eq!(names(&foo1), vec!["pod1", "pod2", "pod3"]);
    // No controller: nothing related.
    let mut lone = foo1.clone();
    lone.metadata.owner_references = None;
    assert!(names(&lone).is_empty());
}

#[tokio::test]
async fn related_pods_rank_decides_between_equal_pods() {
    // Two ready pods on different nodes; a sibling ReplicaSet of the same
    // controller has a pod on node-2: the node-2 pod is deleted first.
    let h = Harness::new(500);
    let rs = new_replica_set(1, &[("app", "x")]);
    let mut sibling = new_replica_set(1, &[("app", "y")]);
    sibling.metadata.name = Some("sibling".into());
    h.add_rs(&rs);
    h.rs_store.add(Arc::new(sibling.clone()));
    let on = |mut p: kcm_controller::PodView, node: &str| {
        p.spec.node_name = Some(node.into());
        p
    };
    h.add_pod(on(new_pod("a", &rs, "Running", None, true), "node-1"));
    h.add_pod(on(new_pod("b", &rs, "Running", None, true), "node-2"));
    h.add_pod(on(new_pod("s", &sibling, "Running", None, true), "node-2"));
    h.controller.sync_replica_set(&key()).await.expect("sync");
    assert_eq!(h.pods.state().delete_pod_names, vec!["b".to_string()]);
}

#[tokio::test]
async fn created_pods_carry_template_and_controller_ref() {
    let h = Harness::new(500);
    let rs = new_replica_set(2, &[("foo", "bar")]);
    h.add_rs(&rs);
    h.controller.sync_replica_set(&key()).await.expect("sync");
    let st = h.pods.state();
    assert_eq!(st.templates.len(), 2);
    for r in &st.controller_refs {
        assert_eq!(
            (
                r.api_version.as_str(),
                r.kind.as_str(),
                r.name.as_str(),
                r.controller,
                r.block_owner_deletion
            ),
            ("apps/v1", "ReplicaSet", "foobar", Some(true), Some(true))
        );
        assert_eq!(Some(&r.uid), rs.metadata.uid.as_ref());
    }
}
