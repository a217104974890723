//! Property tests of the storage: paged lists are consistent snapshots while writes go on,
//! and the watch history replays exactly the later events.

use std::collections::BTreeMap as Model;

use kcm_testenv::registry::StorageId;
use kcm_testenv::storage::{Obj, ObjRef, Store, TooOld, key_of};
use proptest::prelude::*;
use serde_json::{Value, json};

fn pod(ns: &str, name: &str, v: i64) -> Value {
    json!({"metadata": {"name": name, "namespace": ns}, "v": v})
}

#[derive(Debug, Clone)]
enum Op {
    Put(u8, u8, i64),
    Remove(u8, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..3, 0u8..12, any::<i64>()).prop_map(|(n, k, v)| Op::Put(n, k, v)),
        (0u8..3, 0u8..12).prop_map(|(n, k)| Op::Remove(n, k)),
    ]
}

fn apply(s: &Store, m: &mut Model<String, i64>, o: &Op) {
    match *o {
        Op::Put(n, k, v) => {
            let key = format!("ns{n}/k{k:02}");
            s.write(|t| {
                t.put(
                    StorageId::PODS,
                    &key,
                    pod(&format!("ns{n}"), &format!("k{k:02}"), v),
                )
            });
            m.insert(key, v);
        }
        Op::Remove(n, k) => {
            let key = format!("ns{n}/k{k:02}");
            s.write(|t| t.remove(StorageId::PODS, &key));
            m.remove(&key);
        }
    }
}

proptest! {
    /// Paging through a list at an older revision, while writes continue, yields
    /// exactly the state at that revision, in key order, with one revision on every page.
    #[test]
    fn paged_list_is_a_consistent_snapshot(
        before in proptest::collection::vec(op(), 0..40),
        between in proptest::collection::vec(op(), 0..40),
        limit in 1usize..6,
        ns in prop_oneof![Just(String::new()), Just("ns1/".to_string())],
    ) {
        let s = Store::new(0, 10_000);
        let mut model = Model::new();
        for o in &before { apply(&s, &mut model, o); }
        let want: Vec<(String, i64)> = model
            .iter()
            .filter(|(k, _)| k.starts_with(&ns))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        let all = |_: &Obj| true;
        let first = s.list_page(StorageId::PODS, &ns, None, None, &all, Some(limit), true, false).expect("page");
        let at = first.rv;
        let mut got: Vec<ObjRef> = first.items.clone();
        let mut last = first.last_key.clone();
        let mut i = 0;
        while let Some(k) = last {
            // writes keep happening between pages
            if let Some(o) = between.get(i) { apply(&s, &mut model, o); }
            i += 1;
            let start = format!("{k}\u{0}");
            let p = s.list_page(StorageId::PODS, &ns, Some(&start), Some(at), &all, Some(limit), true, true).expect("page");
            prop_assert_eq!(p.rv, at);
            prop_assert!(p.items.len() <= limit);
            got.extend(p.items.iter().cloned());
            last = p.last_key.clone();
        }
        let got: Vec<(String, i64)> = got
            .iter()
            .map(|o| (key_of(o.value()["metadata"]["namespace"].as_str().unwrap_or(""), o.value()["metadata"]["name"].as_str().unwrap_or("")), o.value()["v"].as_i64().unwrap_or(0)))
            .collect();
        prop_assert_eq!(got, want);
    }

    /// Watching from any retained revision replays exactly the later events, in order.
    #[test]
    fn history_replay_from_any_revision(ops in proptest::collection::vec(op(), 1..60), window in 1usize..80) {
        let s = Store::new(0, window);
        let mut model = Model::new();
        for o in &ops { apply(&s, &mut model, o); }
        let cur = s.rv();
        for from in 0..=cur {
            match s.events_since(StorageId::PODS, from) {
                Ok((evs, rv)) => {
                    prop_assert_eq!(rv, cur);
                    let rvs: Vec<u64> = evs.iter().map(|e| e.rv).collect();
                    let want: Vec<u64> = (from + 1..=cur).collect();
                    prop_assert_eq!(rvs, want);
                }
                Err(TooOld { oldest }) => {
                    prop_assert!(from + 1 < oldest);
                    prop_assert!(cur - from > window as u64);
                }
            }
        }
    }
}
