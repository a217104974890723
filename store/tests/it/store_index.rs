//! Store and index maintenance: ports of client-go `index_test.go`,
//! `thread_safe_store_test.go` and `shared_informer_test.go` TestIndexer.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::common::{Obj, labeled, names, obj};
use kcm_store::{NAMESPACE_INDEX, ObjectKey, Store, StoreError, index_fn, namespace_index_fn};

fn split_value() -> kcm_store::IndexFn<Obj> {
    index_fn(|o: &Obj| {
        if o.value.is_empty() {
            vec![]
        } else {
            o.value.split(',').map(str::to_string).collect()
        }
    })
}

fn keys_of(store: &Store<Obj>, index: &str, value: &str) -> Vec<String> {
    let mut v: Vec<String> = store
        .index_keys(index, value)
        .unwrap()
        .into_iter()
        .map(|k| k.to_string())
        .collect();
    v.sort();
    v
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// TestGetIndexFuncValues.
#[test]
fn test_get_index_func_values() {
    let store = Store::with_indexers([(
        "testmodes".to_string(),
        index_fn(|o: &Obj| o.labels.get("foo").into_iter().cloned().collect()),
    )]);
    store.add(labeled("", "one", &[("foo", "bar")]));
    store.add(labeled("", "two", &[("foo", "bar")]));
    store.add(labeled("", "tre", &[("foo", "biz")]));
    assert_eq!(
        sorted(store.list_index_values("testmodes")),
        vec!["bar", "biz"]
    );
    assert!(store.list_index_values("nope").is_empty());
}

/// TestMultiIndexKeys.
#[test]
fn test_multi_index_keys() {
    let store = Store::with_indexers([("byUser".to_string(), split_value())]);
    store.add(obj("", "one", "ernie,bert"));
    store.add(obj("", "two", "bert,oscar"));
    store.add(obj("", "tre", "ernie,elmo"));
    let count = |v: &str| store.by_index("byUser", v).unwrap().len();
    assert_eq!(count("ernie"), 2);
    assert_eq!(count("bert"), 2);
    assert_eq!(count("oscar"), 1);
    assert_eq!(count("elmo"), 1);
    let one = obj("", "one", "ernie,bert");
    assert_eq!(
        names(&store.index("byUser", &one).unwrap()),
        vec!["one", "tre", "two"]
    );

    store.delete(&ObjectKey::cluster("tre"));
    assert_eq!(count("ernie"), 1);
    assert_eq!(count("elmo"), 0);

    store.update(obj("", "two", "oscar"));
    assert_eq!(count("bert"), 1);
    assert_eq!(
        names(&store.by_index("byUser", "oscar").unwrap()),
        vec!["two"]
    );
}

/// TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex.
#[test]
fn test_delete_removes_empty_sets_from_index() {
    let store = Store::with_indexers([(
        "testIndex".to_string(),
        index_fn(|o: &Obj| vec![o.name.clone()]),
    )]);
    store.add(obj("", "testKey", ""));
    assert_eq!(store.list_index_values("testIndex"), vec!["testKey"]);
    store.delete(&ObjectKey::cluster("testKey"));
    assert!(store.list_index_values("testIndex").is_empty());
    assert!(store.index_keys("testIndex", "testKey").unwrap().is_empty());
}

/// TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex.
#[test]
fn test_add_keeps_non_empty_set_post_delete() {
    let store = Store::with_indexers([(
        "testIndex".to_string(),
        index_fn(|_: &Obj| vec!["testIndex".to_string()]),
    )]);
    store.add(obj("", "testKey", ""));
    store.add(obj("", "testKey2", ""));
    store.delete(&ObjectKey::cluster("testKey"));
    assert_eq!(keys_of(&store, "testIndex", "testIndex"), vec!["testKey2"]);
}

/// TestThreadSafeStoreIndexingFunctionsWithMultipleValues.
#[test]
fn test_indexing_functions_with_multiple_values() {
    let store = Store::with_indexers([("testIndexer".to_string(), split_value())]);
    let check = |foo: &[&str], bar: &[&str], baz: &[&str]| {
        assert_eq!(keys_of(&store, "testIndexer", "foo"), foo, "foo");
        assert_eq!(keys_of(&store, "testIndexer", "bar"), bar, "bar");
        assert_eq!(keys_of(&store, "testIndexer", "baz"), baz, "baz");
    };
    store.add(obj("", "key1", "foo"));
    store.add(obj("", "key2", "bar"));
    check(&["key1"], &["key2"], &[]);
    store.update(obj("", "key2", "foo,bar"));
    check(&["key1", "key2"], &["key2"], &[]);
    store.update(obj("", "key1", "foo,bar"));
    check(&["key1", "key2"], &["key1", "key2"], &[]);
    store.add(obj("", "key3", "foo,bar,baz"));
    check(
        &["key1", "key2", "key3"],
        &["key1", "key2", "key3"],
        &["key3"],
    );
    store.update(obj("", "key1", "foo"));
    check(&["key1", "key2", "key3"], &["key2", "key3"], &["key3"]);
    store.update(obj("", "key2", "bar"));
    check(&["key1", "key3"], &["key2", "key3"], &["key3"]);
    store.delete(&ObjectKey::cluster("key1"));
    check(&["key3"], &["key2", "key3"], &["key3"]);
    store.delete(&ObjectKey::cluster("key3"));
    check(&[], &["key2"], &[]);
    assert_eq!(store.list_index_values("testIndexer"), vec!["bar"]);
}

/// TestIndexer: an index added after objects exist is backfilled immediately.
#[test]
fn test_indexer_added_later_is_backfilled() {
    let label_keys = || index_fn(|o: &Obj| o.labels.keys().cloned().collect());
    let store = Store::with_indexers([("labels".to_string(), label_keys())]);
    store.add(labeled("", "pod1", &[("a", "a-val"), ("b", "b-val")]));
    store.add(labeled("", "pod2", &[("b", "b-val")]));
    assert_eq!(names(&store.by_index("labels", "a").unwrap()), vec!["pod1"]);
    store.add(labeled("", "pod3", &[("a", "a-val")]));
    assert_eq!(
        names(&store.by_index("labels", "a").unwrap()),
        vec!["pod1", "pod3"]
    );
    store.add_indexer("labels-again", label_keys()).unwrap();
    assert_eq!(
        names(&store.by_index("labels-again", "a").unwrap()),
        vec!["pod1", "pod3"]
    );
    assert_eq!(sorted(store.list_index_values("labels")), vec!["a", "b"]);
    assert_eq!(
        sorted(store.list_index_values("labels-again")),
        vec!["a", "b"]
    );
    // The new index is maintained from now on.
    store.delete(&ObjectKey::cluster("pod1"));
    assert_eq!(
        names(&store.by_index("labels-again", "a").unwrap()),
        vec!["pod3"]
    );
}

#[test]
fn add_indexer_conflict_and_unknown_index_errors() {
    let store: Store<Obj> = Store::new();
    let err = store
        .add_indexer(NAMESPACE_INDEX, namespace_index_fn())
        .unwrap_err();
    assert_eq!(err, StoreError::IndexerConflict("namespace".into()));
    assert_eq!(err.to_string(), "indexer conflict: [namespace]");

    let err = store.by_index("nope", "x").unwrap_err();
    assert_eq!(err.to_string(), "Index with name nope does not exist");
    assert!(store.index_keys("nope", "x").is_err());
    assert!(store.index("nope", &obj("a", "b", "")).is_err());

    // add_indexers is all-or-nothing.
    let err = store
        .add_indexers([
            ("new".to_string(), split_value()),
            ("namespace".to_string(), split_value()),
        ])
        .unwrap_err();
    assert_eq!(err, StoreError::IndexerConflict("namespace".into()));
    assert!(!store.has_index("new"));
    assert!(
        store
            .add_indexers([
                ("x".to_string(), split_value()),
                ("x".to_string(), split_value())
            ])
            .is_err()
    );
    store
        .add_indexers([
            ("p".to_string(), split_value()),
            ("q".to_string(), split_value()),
        ])
        .unwrap();
    assert_eq!(store.indexer_names(), vec!["namespace", "p", "q"]);
}

#[test]
fn crud_returns_previous_and_namespace_index() {
    let store: Store<Obj> = Store::new();
    assert!(store.is_empty());
    assert!(store.add(obj("ns1", "a", "v1")).is_none());
    let prev = store.update(obj("ns1", "a", "v2")).unwrap();
    assert_eq!(prev.value, "v1");
    store.add(obj("ns2", "b", ""));
    store.add(obj("", "c", ""));
    assert_eq!(store.len(), 3);
    assert_eq!(store.get(&obj("ns1", "a", "")).unwrap().value, "v2");
    assert_eq!(
        store.get_by_key(&ObjectKey::new("ns1", "a")).unwrap().value,
        "v2"
    );
    assert!(store.get_by_key(&ObjectKey::new("ns2", "a")).is_none());
    assert_eq!(
        names(&store.by_index(NAMESPACE_INDEX, "ns1").unwrap()),
        vec!["ns1/a"]
    );
    // Cluster-scoped objects are indexed under "" (as MetaNamespaceIndexFunc).
    assert_eq!(
        names(&store.by_index(NAMESPACE_INDEX, "").unwrap()),
        vec!["c"]
    );
    assert_eq!(
        sorted(store.list_index_values(NAMESPACE_INDEX)),
        vec!["", "ns1", "ns2"]
    );
    let mut keys = store.list_keys();
    keys.sort();
    assert_eq!(
        keys,
        vec![
            ObjectKey::cluster("c"),
            ObjectKey::new("ns1", "a"),
            ObjectKey::new("ns2", "b")
        ]
    );
    assert_eq!(names(&store.list()), vec!["c", "ns1/a", "ns2/b"]);

    assert_eq!(
        store.delete(&ObjectKey::new("ns1", "a")).unwrap().value,
        "v2"
    );
    assert!(store.delete(&ObjectKey::new("ns1", "a")).is_none());
    assert!(store.by_index(NAMESPACE_INDEX, "ns1").unwrap().is_empty());
    assert_eq!(
        sorted(store.list_index_values(NAMESPACE_INDEX)),
        vec!["", "ns2"]
    );
}

#[test]
fn objects_are_shared_not_copied() {
    let store: Store<Obj> = Store::new();
    let o = obj("ns", "a", "");
    store.add(o.clone());
    let got = store.get_by_key(&o.key_of()).unwrap();
    assert!(Arc::ptr_eq(&o, &got));
    // Clones of the store share contents.
    let clone = store.clone();
    clone.delete(&o.key_of());
    assert!(store.is_empty());
}

trait KeyOf {
    fn key_of(&self) -> ObjectKey;
}
impl KeyOf for Arc<Obj> {
    fn key_of(&self) -> ObjectKey {
        kcm_store::Object::key(&**self)
    }
}

#[test]
fn replace_swaps_contents_and_rebuilds_indices() {
    let store = Store::with_indexers([
        ("v".to_string(), split_value()),
        (NAMESPACE_INDEX.to_string(), namespace_index_fn()),
    ]);
    store.add(obj("ns1", "a", "x"));
    store.add(obj("ns1", "b", "y"));
    store.replace(vec![
        obj("ns2", "b", "y,z"),
        obj("ns2", "c", "z"),
        obj("ns2", "c", "w"),
    ]);
    assert_eq!(store.len(), 2);
    assert_eq!(names(&store.list()), vec!["ns2/b", "ns2/c"]);
    // Later duplicate wins.
    assert_eq!(
        store.get_by_key(&ObjectKey::new("ns2", "c")).unwrap().value,
        "w"
    );
    assert!(store.by_index("v", "x").unwrap().is_empty());
    assert_eq!(sorted(store.list_index_values("v")), vec!["w", "y", "z"]);
    assert_eq!(
        sorted(store.list_index_values(NAMESPACE_INDEX)),
        vec!["ns2"]
    );
    assert_eq!(keys_of(&store, "v", "z"), vec!["ns2/b"]);
    store.replace(vec![]);
    assert!(store.is_empty());
    assert!(store.list_index_values("v").is_empty());
    // Indexers survive a replace.
    store.add(obj("ns3", "d", "q"));
    assert_eq!(keys_of(&store, "v", "q"), vec!["ns3/d"]);
}

#[test]
fn index_function_duplicates_are_harmless() {
    let store = Store::with_indexers([(
        "dup".to_string(),
        index_fn(|o: &Obj| vec![o.value.clone(), o.value.clone()]),
    )]);
    store.add(obj("", "a", "v"));
    assert_eq!(keys_of(&store, "dup", "v"), vec!["a"]);
    assert_eq!(
        names(&store.index("dup", &obj("", "zz", "v")).unwrap()),
        vec!["a"]
    );
    store.delete(&ObjectKey::cluster("a"));
    assert!(store.list_index_values("dup").is_empty());
}

#[test]
fn for_each_helpers() {
    let store: Store<Obj> = Store::new();
    store.add(obj("a", "1", ""));
    store.add(obj("a", "2", ""));
    store.add(obj("b", "3", ""));
    let mut n = 0;
    store.for_each(|_| n += 1);
    assert_eq!(n, 3);
    let mut in_a = Vec::new();
    store
        .for_each_in_index(NAMESPACE_INDEX, "a", |o| in_a.push(o.name.clone()))
        .unwrap();
    in_a.sort();
    assert_eq!(in_a, vec!["1", "2"]);
    assert!(store.for_each_in_index("nope", "a", |_| {}).is_err());
    let dbg = format!("{store:?}");
    assert!(dbg.contains("len: 3"), "{dbg}");
}

#[test]
fn concurrent_readers_and_writers() {
    let store: Store<Obj> = Store::new();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let s = store.clone();
            std::thread::spawn(move || {
                for i in 0..500 {
                    s.add(obj(&format!("ns{w}"), &format!("o{i}"), ""));
                    if i % 3 == 0 {
                        s.delete(&ObjectKey::new(format!("ns{w}"), format!("o{}", i / 2)));
                    }
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..4)
        .map(|r| {
            let s = store.clone();
            std::thread::spawn(move || {
                for _ in 0..500 {
                    let objs = s.by_index(NAMESPACE_INDEX, &format!("ns{r}")).unwrap();
                    assert!(objs.iter().all(|o| o.ns == format!("ns{r}")));
                    let _ = s.list();
                }
            })
        })
        .collect();
    for t in writers.into_iter().chain(readers) {
        t.join().unwrap();
    }
    // Index and contents agree after the dust settles.
    let mut by_ns = BTreeMap::new();
    for o in store.list() {
        *by_ns.entry(o.ns.clone()).or_insert(0usize) += 1;
    }
    for (ns, n) in by_ns {
        assert_eq!(store.by_index(NAMESPACE_INDEX, &ns).unwrap().len(), n);
    }
}

#[test]
fn transaction_applies_all_ops_in_order() {
    let store = Store::with_indexers([("v".to_string(), split_value())]);
    store.add(obj("ns", "a", "x"));
    let prev = store.transaction([
        kcm_store::TxOp::Add(obj("ns", "b", "x")),
        kcm_store::TxOp::Update(obj("ns", "a", "y")),
        kcm_store::TxOp::Delete(ObjectKey::new("ns", "b")),
        kcm_store::TxOp::Delete(ObjectKey::new("ns", "missing")),
        kcm_store::TxOp::Add(obj("ns", "c", "x,y")),
    ]);
    let prev: Vec<Option<String>> = prev
        .into_iter()
        .map(|o| o.map(|o| o.value.clone()))
        .collect();
    assert_eq!(
        prev,
        vec![None, Some("x".into()), Some("x".into()), None, None]
    );
    assert_eq!(names(&store.list()), vec!["ns/a", "ns/c"]);
    assert_eq!(keys_of(&store, "v", "x"), vec!["ns/c"]);
    assert_eq!(keys_of(&store, "v", "y"), vec!["ns/a", "ns/c"]);
}

#[test]
fn store_and_listers_are_send_sync_clone() {
    fn check<X: Send + Sync + Clone>() {}
    check::<Store<Obj>>();
    check::<kcm_store::Lister<Obj>>();
    check::<kcm_store::NamespaceLister<Obj>>();
    check::<kcm_store::Selector>();
    check::<ObjectKey>();
}

/// Readers never observe an index entry that disagrees with the object it points to: index
/// and items change together under one lock.
#[test]
fn readers_see_indices_consistent_with_objects() {
    let store =
        Store::with_indexers([("v".to_string(), index_fn(|o: &Obj| vec![o.value.clone()]))]);
    for i in 0..50 {
        store.add(obj("ns", &format!("o{i}"), "x"));
    }
    let writer = {
        let s = store.clone();
        std::thread::spawn(move || {
            for round in 0..400 {
                let v = ["x", "y", "z"][round % 3];
                for i in 0..50 {
                    s.update(obj("ns", &format!("o{i}"), v));
                }
            }
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let s = store.clone();
            std::thread::spawn(move || {
                for round in 0..2000 {
                    let v = ["x", "y", "z"][round % 3];
                    for o in s.by_index("v", v).unwrap() {
                        assert_eq!(o.value, v);
                    }
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(store.index_keys("v", "x").unwrap().len(), 50);
}
