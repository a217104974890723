//! Indices: named index functions and the `value → set of keys` maps they maintain.
//!
//! Semantics follow client-go's `threadSafeMap` index maintenance (spec C.3): an update moves the
//! key from the old object's values to the new object's values, a value whose key set becomes
//! empty is removed, and adding an indexer backfills every existing object.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::{Object, ObjectKey};

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

/// One index: index value → keys of the objects that produce that value.
pub(crate) type Index = HashMap<String, HashSet<ObjectKey>>;

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

/// All indexers plus the indices they maintain.
pub(crate) struct Indices<T> {
    /// Shared so that readers/bulk builders can snapshot the set of indexers cheaply.
    pub(crate) indexers: Arc<BTreeMap<String, IndexFn<T>>>,
    pub(crate) indices: HashMap<String, Index>,
}

impl<T> Clone for Indices<T> {
    fn clone(&self) -> Self {
        Indices {
            indexers: self.indexers.clone(),
            indices: self.indices.clone(),
        }
    }
}

impl<T> Indices<T> {
    pub(crate) fn new(indexers: BTreeMap<String, IndexFn<T>>) -> Self {
        let indices = indexers.keys().map(|k| (k.clone(), Index::new())).collect();
        Indices {
            indexers: Arc::new(indexers),
            indices,
        }
    }

    /// Same indexers, empty indices.
    pub(crate) fn empty_like(&self) -> Self {
        Indices {
            indexers: self.indexers.clone(),
            indices: self
                .indexers
                .keys()
                .map(|k| (k.clone(), Index::new()))
                .collect(),
        }
    }

    /// Moves `key` from `old`'s index values to `new`'s, for every index.
    pub(crate) fn update(&mut self, key: &ObjectKey, old: Option<&T>, new: Option<&T>) {
        for (name, f) in self.indexers.iter() {
            let index = self.indices.entry(name.clone()).or_default();
            let old_vals = old.map(|o| values_of(f, o)).unwrap_or_default();
            let new_vals = new.map(|n| values_of(f, n)).unwrap_or_default();
            update_index(index, key, &old_vals, &new_vals);
        }
    }

    /// Indexes one new object with a single indexer (used by backfill and rebuilds).
    pub(crate) fn insert_one(index: &mut Index, f: &IndexFn<T>, key: &ObjectKey, obj: &T) {
        for v in values_of(f, obj) {
            insert_key(index, v, key);
        }
    }
}

/// Applies one object's change of values to one index.
pub(crate) fn update_index(
    index: &mut Index,
    key: &ObjectKey,
    old_vals: &[String],
    new_vals: &[String],
) {
    // Fast path (as upstream): a single unchanged value needs no work.
    if old_vals.len() == 1 && new_vals.len() == 1 && old_vals[0] == new_vals[0] {
        return;
    }
    for v in old_vals {
        if !new_vals.contains(v) {
            remove_key(index, v, key);
        }
    }
    for v in new_vals {
        if !old_vals.contains(v) {
            insert_key(index, v.clone(), key);
        }
    }
}

fn insert_key(index: &mut Index, value: String, key: &ObjectKey) {
    let set = index.entry(value).or_default();
    if !set.contains(key) {
        set.insert(key.clone());
    }
}

fn remove_key(index: &mut Index, value: &str, key: &ObjectKey) {
    if let Some(set) = index.get_mut(value) {
        set.remove(key);
        if set.is_empty() {
            // Empty sets are removed so high-cardinality indices do not grow without bound.
            index.remove(value);
        }
    }
}
