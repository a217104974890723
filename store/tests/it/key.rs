//! Object keys: MetaNamespaceKeyFunc / SplitMetaNamespaceKey semantics.

use crate::common;
use kcm_store::{KeyError, Object, ObjectKey};

/// Port of client-go TestSplitMetaNamespaceKey plus edge cases of `strings.Split`.
#[test]
fn test_split_meta_namespace_key() {
    type Case<'a> = (&'a str, Result<(&'a str, &'a str), ()>);
    let cases: &[Case] = &[
        ("a", Ok(("", "a"))),
        ("a/b", Ok(("a", "b"))),
        ("", Ok(("", ""))),
        ("/b", Ok(("", "b"))),
        ("a/", Ok(("a", ""))),
        ("a/b/c", Err(())),
        ("//", Err(())),
        ("/a/", Err(())),
    ];
    for (input, want) in cases {
        match (ObjectKey::parse(input), want) {
            (Ok(k), Ok((ns, name))) => {
                assert_eq!(
                    (k.namespace.as_str(), k.name.as_str()),
                    (*ns, *name),
                    "{input:?}"
                )
            }
            (Err(e), Err(())) => {
                assert_eq!(e, KeyError::UnexpectedFormat(input.to_string()));
                assert_eq!(e.to_string(), format!("unexpected key format: {input:?}"));
            }
            (got, want) => panic!("{input:?}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn key_display_and_round_trip() {
    assert_eq!(ObjectKey::new("ns", "n").to_string(), "ns/n");
    assert_eq!(ObjectKey::new("", "n").to_string(), "n");
    assert_eq!(ObjectKey::cluster("n"), ObjectKey::new("", "n"));
    assert!(ObjectKey::cluster("n").is_cluster_scoped());
    for k in [ObjectKey::new("ns", "n"), ObjectKey::cluster("node-1")] {
        assert_eq!(ObjectKey::parse(&k.to_string()).unwrap(), k);
        assert_eq!(k.to_string().parse::<ObjectKey>().unwrap(), k);
    }
    // Ordering is by namespace, then name.
    let mut v = vec![
        ObjectKey::new("b", "a"),
        ObjectKey::new("a", "z"),
        ObjectKey::cluster("c"),
    ];
    v.sort();
    assert_eq!(
        v,
        vec![
            ObjectKey::cluster("c"),
            ObjectKey::new("a", "z"),
            ObjectKey::new("b", "a")
        ]
    );
}

/// MetaNamespaceKeyFunc: namespaced → "ns/name", cluster-scoped (None or "") → "name".
#[test]
fn test_meta_namespace_key_func() {
    assert_eq!(common::obj("ns", "a", "").key().to_string(), "ns/a");
    assert_eq!(common::obj("", "a", "").key().to_string(), "a");
}
