//! `metav1.LabelSelector` conversion (feature `k8s`): port of apimachinery
//! `TestLabelSelectorAsSelector`, plus the blanket `Object` impl for k8s-openapi types.
#![cfg(feature = "k8s")]

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use kcm_store::{Lister, Object, ObjectKey, Selector, Store};

fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: if values.is_empty() {
            None
        } else {
            Some(values.iter().map(|s| s.to_string()).collect())
        },
    }
}

#[test]
fn test_label_selector_as_selector() {
    let match_labels = Some(BTreeMap::from([("foo".to_string(), "bar".to_string())]));
    let match_expressions = Some(vec![expr("baz", "In", &["qux", "norf"])]);

    assert!(
        Selector::from_optional_label_selector(None)
            .unwrap()
            .is_nothing()
    );
    assert!(
        Selector::from_label_selector(&LabelSelector::default())
            .unwrap()
            .is_everything()
    );
    // Empty-but-present fields also mean everything.
    let empty = LabelSelector {
        match_labels: Some(BTreeMap::new()),
        match_expressions: Some(vec![]),
    };
    assert!(
        Selector::from_optional_label_selector(Some(&empty))
            .unwrap()
            .is_everything()
    );

    let cases: Vec<(LabelSelector, &str)> = vec![
        (
            LabelSelector {
                match_labels: match_labels.clone(),
                match_expressions: None,
            },
            "foo=bar",
        ),
        (
            LabelSelector {
                match_labels: None,
                match_expressions: match_expressions.clone(),
            },
            "baz in (norf,qux)",
        ),
        (
            LabelSelector {
                match_labels: match_labels.clone(),
                match_expressions: match_expressions.clone(),
            },
            "baz in (norf,qux),foo=bar",
        ),
        (
            LabelSelector {
                match_labels: None,
                match_expressions: Some(vec![
                    expr("a", "Exists", &[]),
                    expr("b", "DoesNotExist", &[]),
                    expr("c", "NotIn", &["x"]),
                ]),
            },
            "a,!b,c notin (x)",
        ),
    ];
    for (ls, want) in cases {
        let sel = Selector::from_label_selector(&ls).unwrap();
        assert_eq!(sel.to_string(), want);
        assert_eq!(sel.to_string(), Selector::parse(want).unwrap().to_string());
    }

    let bad = [
        (
            expr("baz", "Exists", &["qux", "norf"]),
            "values set must be empty for exists and does not exist",
        ),
        (expr("baz", "In", &[]), "values set can't be empty"),
        (expr("baz", "NotIn", &[]), "values set can't be empty"),
        (
            expr("baz", "Gt", &["1"]),
            "\"Gt\" is not a valid label selector operator",
        ),
        (
            expr("baz", "in", &["a"]),
            "\"in\" is not a valid label selector operator",
        ),
        (expr("a b", "Exists", &[]), "key: Invalid value: \"a b\""),
        (
            expr("baz", "In", &["a b"]),
            "values[0][baz]: Invalid value: \"a b\"",
        ),
    ];
    for (e, want) in bad {
        let ls = LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![e.clone()]),
        };
        let err = Selector::from_label_selector(&ls).unwrap_err().to_string();
        assert!(err.contains(want), "{e:?}: {err}");
    }
    let bad_label = LabelSelector {
        match_labels: Some(BTreeMap::from([("k".to_string(), "-bad".to_string())])),
        match_expressions: None,
    };
    assert!(Selector::from_label_selector(&bad_label).is_err());
}

fn pod(ns: &str, name: &str, labels: &[(&str, &str)]) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        },
        ..Default::default()
    })
}

#[test]
fn k8s_openapi_objects_are_storable() {
    let store: Store<Pod> = Store::new();
    store.add(pod("default", "a", &[("app", "web")]));
    store.add(pod("default", "b", &[("app", "db")]));
    let p = pod("x", "y", &[]);
    assert_eq!(p.key(), ObjectKey::new("x", "y"));
    let lister = Lister::new(store);
    let ls = LabelSelector {
        match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
        match_expressions: None,
    };
    let sel = Selector::from_label_selector(&ls).unwrap();
    let got = lister.namespaced("default").list(&sel);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].metadata.name.as_deref(), Some("a"));

    let ns_store: Store<Namespace> = Store::new();
    ns_store.add(Arc::new(Namespace {
        metadata: ObjectMeta {
            name: Some("kube-system".into()),
            ..Default::default()
        },
        ..Default::default()
    }));
    assert!(
        ns_store
            .get_by_key(&ObjectKey::cluster("kube-system"))
            .is_some()
    );
}
