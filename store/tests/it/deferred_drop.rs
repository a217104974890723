//! With deferred drops, replaced and removed objects are freed off the writer's thread and
//! never leaked (without, by whoever lets go of them last, as before); lending reads
//! (`with`) see the stored object without keeping a reference to it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use kcm_store::{Lister, Object, ObjectKey, Store, TxOp};

/// Which thread dropped each object, by generation.
#[derive(Clone, Default)]
struct Drops(Arc<Mutex<Vec<(u32, ThreadId)>>>);

impl Drops {
    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    fn on(&self, thread: ThreadId) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|d| d.1 == thread)
            .count()
    }
}

struct Counted {
    name: String,
    generation: u32,
    drops: Drops,
}

impl Object for Counted {
    fn name(&self) -> &str {
        &self.name
    }
    fn namespace(&self) -> Option<&str> {
        Some("ns")
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops
            .0
            .lock()
            .unwrap()
            .push((self.generation, std::thread::current().id()));
    }
}

fn obj(i: usize, generation: u32, drops: &Drops) -> Arc<Counted> {
    Arc::new(Counted {
        name: format!("o-{i}"),
        generation,
        drops: drops.clone(),
    })
}

const N: usize = 1000;

#[test]
fn replaced_objects_are_freed_off_the_writer_thread() {
    let drops = Drops::default();
    let store = Store::new();
    store.set_deferred_drop(true);
    for i in 0..N {
        store.add(obj(i, 0, &drops));
    }
    for i in 0..N {
        // The caller drops what `update` returns at once: the store still holds a reference.
        store.update(obj(i, 1, &drops));
    }
    for i in 0..N / 2 {
        store.delete(&ObjectKey::new("ns", format!("o-{i}")));
    }
    store.drain_drops();
    let me = std::thread::current().id();
    assert_eq!(
        drops.count(),
        N + N / 2,
        "generation 0 and the deleted half"
    );
    assert_eq!(drops.on(me), 0, "nothing was freed on the writer's thread");
    assert!(
        drops.0.lock().unwrap()[..N].iter().all(|d| d.0 == 0),
        "the replaced generation went first"
    );
    assert_eq!(store.len(), N / 2);
    drop(store);
    assert_eq!(
        drops.count(),
        2 * N,
        "dropping the store frees the rest: nothing leaked"
    );
}

#[test]
fn a_caller_keeping_the_old_object_keeps_it_alive() {
    let drops = Drops::default();
    let store = Store::new();
    store.set_deferred_drop(true);
    store.add(obj(0, 0, &drops));
    let old = store.update(obj(0, 1, &drops)).expect("replaced");
    store.drain_drops();
    assert_eq!(drops.count(), 0, "still referenced by the caller");
    assert_eq!(old.generation, 0);
    drop(old);
    assert_eq!(drops.count(), 1);
}

#[test]
fn transaction_and_replace_free_off_the_writer_thread() {
    let drops = Drops::default();
    let store = Store::new();
    store.set_deferred_drop(true);
    store.replace((0..N).map(|i| obj(i, 0, &drops)).collect());
    store.transaction((0..N).map(|i| TxOp::Update(obj(i, 1, &drops))));
    store.replace((0..N).map(|i| obj(i, 2, &drops)).collect());
    store.drain_drops();
    assert_eq!(drops.count(), 2 * N);
    assert_eq!(drops.on(std::thread::current().id()), 0);
    drop(store);
    assert_eq!(drops.count(), 3 * N);
}

#[test]
fn without_deferred_drops_the_last_holder_frees_at_once() {
    let drops = Drops::default();
    let store = Store::new();
    for i in 0..N {
        store.add(obj(i, 0, &drops));
    }
    for i in 0..N {
        store.update(obj(i, 1, &drops));
    }
    // Freed as the returned objects were dropped, on this thread, before any drain.
    assert_eq!(drops.count(), N);
    assert_eq!(drops.on(std::thread::current().id()), N);
    store.replace((0..N).map(|i| obj(i, 2, &drops)).collect());
    assert_eq!(drops.count(), 2 * N);
}

#[test]
fn turning_deferral_off_hands_the_waiting_objects_over() {
    let drops = Drops::default();
    let store = Store::new();
    store.set_deferred_drop(true);
    for i in 0..10 {
        store.add(obj(i, 0, &drops));
        store.update(obj(i, 1, &drops));
    }
    assert_eq!(drops.count(), 0, "waiting for a full batch");
    store.set_deferred_drop(false);
    store.drain_drops();
    assert_eq!(drops.count(), 10);
    assert_eq!(drops.on(std::thread::current().id()), 0);
    store.update(obj(0, 2, &drops));
    assert_eq!(drops.count(), 11, "inline again");
}

#[test]
fn with_lends_the_stored_object_without_a_reference() {
    let drops = Drops::default();
    let store = Store::new();
    let a = obj(1, 7, &drops);
    store.add(a.clone());
    let key = ObjectKey::new("ns", "o-1");
    let seen = store.with(&key, |o| {
        // The store's reference and ours: the lending read added none.
        assert_eq!(Arc::strong_count(&a), 2);
        (o.name.clone(), o.generation)
    });
    assert_eq!(seen, Some(("o-1".to_string(), 7)));
    assert_eq!(
        store.with(&ObjectKey::new("ns", "o-2"), |o| o.generation),
        None
    );
    assert_eq!(store.with_by_name("ns", "o-1", |o| o.generation), Some(7));
    let lister = Lister::new(store.clone());
    assert_eq!(lister.with("ns", "o-1", |o| o.generation), Some(7));
    assert_eq!(
        lister.namespaced("ns").with("o-1", |o| o.generation),
        Some(7)
    );
    assert_eq!(
        lister.namespaced("other").with("o-1", |o| o.generation),
        None
    );
    // `get` still hands out an `Arc`.
    let got = store.get_by_key(&key).expect("stored");
    assert!(Arc::ptr_eq(&got, &a));
}
