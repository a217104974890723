//! Property test: after any sequence of add/update/delete/replace/add_indexer/transaction, every index
//! agrees with the store contents (indices recomputed from scratch).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::common::Obj;
use kcm_store::{IndexFn, Object, ObjectKey, Store, TxOp, index_fn, namespace_index_fn};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Add(Obj),
    Delete(String, String),
    Replace(Vec<Obj>),
    AddIndexer(usize),
    /// A transaction: `Some(obj)` = add, `None` with (ns, name) = delete.
    Tx(Vec<(Option<Obj>, String, String)>),
}

/// Candidate indexers; `AddIndexer(i)` registers `extra{i}` if absent.
fn indexer(i: usize) -> IndexFn<Obj> {
    match i % 3 {
        0 => index_fn(|o: &Obj| {
            o.value
                .split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        }),
        1 => index_fn(|o: &Obj| o.labels.keys().cloned().collect()),
        _ => index_fn(|o: &Obj| vec![format!("{}:{}", o.ns, o.value.len())]),
    }
}

fn arb_obj() -> impl Strategy<Value = Obj> {
    (
        prop::sample::select(vec!["", "a", "b"]),
        prop::sample::select(vec!["x", "y", "z", "w"]),
        prop::collection::btree_map(prop::sample::select(vec!["k1", "k2", "k3"]), "[a-c]", 0..3),
        prop::collection::vec(prop::sample::select(vec!["p", "q", "r", "p"]), 0..4),
    )
        .prop_map(|(ns, name, labels, vals)| Obj {
            ns: ns.to_string(),
            name: name.to_string(),
            labels: labels
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            value: vals.join(","),
        })
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => arb_obj().prop_map(Op::Add),
        3 => (prop::sample::select(vec!["", "a", "b"]), prop::sample::select(vec!["x", "y", "z", "w"]))
            .prop_map(|(n, m)| Op::Delete(n.to_string(), m.to_string())),
        1 => prop::collection::vec(arb_obj(), 0..6).prop_map(Op::Replace),
        1 => (0usize..4).prop_map(Op::AddIndexer),
        1 => prop::collection::vec(
            (
                prop::option::of(arb_obj()),
                prop::sample::select(vec!["", "a", "b"]),
                prop::sample::select(vec!["x", "y", "z", "w"]),
            )
                .prop_map(|(o, n, m)| (o, n.to_string(), m.to_string())),
            0..5,
        )
        .prop_map(Op::Tx),
    ]
}

/// Recomputes every index from scratch and compares with the store's answers.
fn check(
    store: &Store<Obj>,
    indexers: &BTreeMap<String, IndexFn<Obj>>,
    model: &BTreeMap<ObjectKey, Obj>,
) {
    assert_eq!(store.len(), model.len());
    let keys: BTreeSet<ObjectKey> = store.list_keys().into_iter().collect();
    assert_eq!(keys, model.keys().cloned().collect::<BTreeSet<_>>());
    for (k, o) in model {
        assert_eq!(&*store.get_by_key(k).unwrap(), o);
    }
    for (name, f) in indexers {
        let mut expected: BTreeMap<String, BTreeSet<ObjectKey>> = BTreeMap::new();
        for (k, o) in model {
            for v in f(o) {
                expected.entry(v).or_default().insert(k.clone());
            }
        }
        let values: BTreeSet<String> = store.list_index_values(name).into_iter().collect();
        assert_eq!(
            values,
            expected.keys().cloned().collect::<BTreeSet<_>>(),
            "values of {name}"
        );
        for (v, ks) in &expected {
            let got: BTreeSet<ObjectKey> = store.index_keys(name, v).unwrap().into_iter().collect();
            assert_eq!(&got, ks, "index {name} value {v}");
            let objs = store.by_index(name, v).unwrap();
            assert_eq!(objs.len(), ks.len());
        }
        // Index(name, obj) is the union over the object's values.
        for o in model.values() {
            let mut want = BTreeSet::new();
            for v in f(o) {
                want.extend(expected.get(&v).cloned().unwrap_or_default());
            }
            let got: BTreeSet<ObjectKey> = store
                .index(name, o)
                .unwrap()
                .iter()
                .map(|x| x.key())
                .collect();
            assert_eq!(got, want);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn indices_agree_with_contents(ops in prop::collection::vec(arb_op(), 0..40)) {
        let mut indexers: BTreeMap<String, IndexFn<Obj>> = BTreeMap::new();
        indexers.insert("namespace".into(), namespace_index_fn());
        indexers.insert("values".into(), indexer(0));
        let store = Store::with_indexers(indexers.clone());
        let mut model: BTreeMap<ObjectKey, Obj> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Add(o) => {
                    let prev = store.add(Arc::new(o.clone()));
                    prop_assert_eq!(prev.map(|p| (*p).clone()), model.insert(o.key(), o));
                }
                Op::Delete(ns, name) => {
                    let k = ObjectKey::new(ns, name);
                    let prev = store.delete(&k);
                    prop_assert_eq!(prev.map(|p| (*p).clone()), model.remove(&k));
                }
                Op::Replace(objs) => {
                    model.clear();
                    for o in &objs {
                        model.insert(o.key(), o.clone());
                    }
                    store.replace(objs.into_iter().map(Arc::new).collect());
                }
                Op::Tx(items) => {
                    let mut tx = Vec::new();
                    let mut want = Vec::new();
                    for (o, ns, name) in items {
                        match o {
                            Some(o) => {
                                want.push(model.insert(o.key(), o.clone()));
                                tx.push(TxOp::Add(Arc::new(o)));
                            }
                            None => {
                                let k = ObjectKey::new(ns, name);
                                want.push(model.remove(&k));
                                tx.push(TxOp::Delete(k));
                            }
                        }
                    }
                    let got: Vec<Option<Obj>> =
                        store.transaction(tx).into_iter().map(|p| p.map(|p| (*p).clone())).collect();
                    prop_assert_eq!(got, want);
                }
                Op::AddIndexer(i) => {
                    let name = format!("extra{i}");
                    let res = store.add_indexer(&name, indexer(i));
                    match indexers.entry(name) {
                        std::collections::btree_map::Entry::Occupied(_) => prop_assert!(res.is_err()),
                        std::collections::btree_map::Entry::Vacant(v) => {
                            prop_assert!(res.is_ok());
                            v.insert(indexer(i));
                        }
                    }
                }
            }
            check(&store, &indexers, &model);
        }
    }
}
