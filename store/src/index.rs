//! Indices: named index functions and the `value → set of objects` maps they maintain.
//!
//! Semantics follow client-go's index maintenance (`tools/cache/index.go`, and `storeIndex` in
//! `tools/cache/thread_safe_store.go`): an update moves the object from the old object's values
//! to the new object's values, a value whose set becomes empty is removed, and adding an indexer
//! backfills every existing object.
//!
//! Sets hold the store's internal slot numbers (`u32`), not copies of the keys: an index costs a
//! few bytes per object and `by_index` reads objects straight from the slot table.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::object::Object;

/// Hasher used by the store's maps (foldhash: fast, with a per-map random seed).
pub(crate) type Hasher = foldhash::fast::RandomState;

/// An index function: maps an object to zero or more index values (client-go `IndexFunc`).
pub type IndexFn<T> = Arc<dyn Fn(&T) -> Vec<String> + Send + Sync>;

/// Name of the built-in namespace index (client-go `cache.NamespaceIndex`).
pub const NAMESPACE_INDEX: &str = "namespace";

/// The namespace index function (client-go `MetaNamespaceIndexFunc`): one value, the object's
/// namespace (`""` for cluster-scoped objects, as upstream).
pub fn namespace_index_fn<T: Object>() -> IndexFn<T> {
    Arc::new(|obj: &T| vec![obj.namespace().unwrap_or_default().to_string()])
}

/// Wraps a closure as an [`IndexFn`].
pub fn index_fn<T, F>(f: F) -> IndexFn<T>
where
    F: Fn(&T) -> Vec<String> + Send + Sync + 'static,
{
    Arc::new(f)
}

/// Internal slot number of a stored object.
pub(crate) type Slot = u32;

/// The set of slots sharing one index value.
pub(crate) type SlotSet = HashSet<Slot, Hasher>;

/// One index: index value → slots of the objects that produce that value.
pub(crate) type Index = HashMap<String, SlotSet, Hasher>;

/// Computes an object's values for one index, deduplicated (upstream uses sets, so duplicate
/// values returned by an index function are harmless; we normalise them away here).
pub(crate) fn values_of<T>(f: &IndexFn<T>, obj: &T) -> Vec<String> {
    let mut v = f(obj);
    if v.len() > 1 {
        v.sort_unstable();
        v.dedup();
    }
    v
}

/// The registered index functions, shared so bulk builders can snapshot them cheaply.
pub(crate) type Indexers<T> = Arc<BTreeMap<String, IndexFn<T>>>;

/// All indexers plus the indices they maintain.
pub(crate) struct Indices<T> {
    pub(crate) indexers: Indexers<T>,
    pub(crate) indices: HashMap<String, Index, Hasher>,
    /// The [`NAMESPACE_INDEX`] indexer is the one [`Store::new`](crate::Store::new) installed
    /// ([`namespace_index_fn`]), so its values are known without calling it.
    pub(crate) builtin_namespace: bool,
}

impl<T: Object> Indices<T> {
    /// The given indexers with empty indices.
    pub(crate) fn new(indexers: Indexers<T>, builtin_namespace: bool) -> Self {
        let indices = indexers
            .keys()
            .map(|k| (k.clone(), Index::default()))
            .collect();
        Indices {
            indexers,
            indices,
            builtin_namespace,
        }
    }

    /// Moves `slot` from `old`'s index values to `new`'s, for every index.
    pub(crate) fn update(&mut self, slot: Slot, old: Option<&T>, new: Option<&T>) {
        for (name, f) in self.indexers.iter() {
            let Some(index) = self.indices.get_mut(name) else {
                continue;
            };
            if self.builtin_namespace && name == NAMESPACE_INDEX {
                // Same values as `namespace_index_fn`, without building a `Vec<String>`
                // per object: an update within a namespace (nearly all) costs nothing.
                let ns = |o: &T| o.namespace().unwrap_or_default().to_owned();
                let old_ns = old.map(|o| o.namespace().unwrap_or_default());
                let new_ns = new.map(|n| n.namespace().unwrap_or_default());
                if old_ns != new_ns {
                    let old_vals: Vec<String> = old.map(ns).into_iter().collect();
                    let new_vals: Vec<String> = new.map(ns).into_iter().collect();
                    update_index(index, slot, &old_vals, &new_vals);
                }
                continue;
            }
            let old_vals = old.map(|o| values_of(f, o)).unwrap_or_default();
            let new_vals = new.map(|n| values_of(f, n)).unwrap_or_default();
            update_index(index, slot, &old_vals, &new_vals);
        }
    }
}

/// Adds one object's values to one index (used by backfill and rebuilds).
pub(crate) fn insert_all<T>(index: &mut Index, f: &IndexFn<T>, slot: Slot, obj: &T) {
    for v in values_of(f, obj) {
        index.entry(v).or_default().insert(slot);
    }
}

/// Applies one object's change of values to one index.
pub(crate) fn update_index(
    index: &mut Index,
    slot: Slot,
    old_vals: &[String],
    new_vals: &[String],
) {
    // Fast path (as upstream): a single unchanged value needs no work.
    if old_vals.len() == 1 && new_vals.len() == 1 && old_vals[0] == new_vals[0] {
        return;
    }
    for v in old_vals {
        if !new_vals.contains(v) {
            remove_slot(index, v, slot);
        }
    }
    for v in new_vals {
        if !old_vals.contains(v) {
            match index.get_mut(v.as_str()) {
                Some(set) => {
                    set.insert(slot);
                }
                None => {
                    let mut set = SlotSet::default();
                    set.insert(slot);
                    index.insert(v.clone(), set);
                }
            }
        }
    }
}

fn remove_slot(index: &mut Index, value: &str, slot: Slot) {
    if let Some(set) = index.get_mut(value) {
        set.remove(&slot);
        if set.is_empty() {
            // Empty sets are removed so high-cardinality indices do not grow without bound.
            index.remove(value);
        }
    }
}
