//! What a [`Store`](crate::Store) keeps behind its lock: the object table and the indices,
//! which change together, and the replaced objects waiting to be freed.

use std::sync::Arc;

use crate::deferred_drop::Graveyard;
use crate::index::{Index, IndexFn, Indexers, Indices, Slot, insert_all};
use crate::object::Object;
use crate::table::ObjectTable;

/// Everything behind the lock: the object table (slots, keys, key index) and the indices,
/// whose sets refer to slots, so index sets hold 4-byte slot numbers.
pub(crate) struct Inner<T> {
    pub(crate) table: ObjectTable<T>,
    pub(crate) indices: Indices<T>,
    /// Replaced and removed objects waiting for the background thread that frees them, if
    /// this store defers drops (see `deferred_drop.rs` and
    /// [`Store::set_deferred_drop`](crate::Store::set_deferred_drop)).
    pub(crate) graveyard: Option<Graveyard<T>>,
}

/// The store key of an object, as borrowed parts (namespace `""` when cluster-scoped).
pub(crate) fn key_parts<T: Object>(obj: &T) -> (&str, &str) {
    (obj.namespace().unwrap_or_default(), obj.name())
}

impl<T: Object> Inner<T> {
    pub(crate) fn empty(indexers: Indexers<T>, builtin_namespace: bool) -> Self {
        Inner {
            table: ObjectTable::new(),
            indices: Indices::new(indexers, builtin_namespace),
            graveyard: None,
        }
    }

    pub(crate) fn obj(&self, slot: Slot) -> Option<&Arc<T>> {
        self.table.obj(slot)
    }

    /// Inserts or replaces, and updates every index.
    pub(crate) fn put(&mut self, obj: Arc<T>) -> Option<Arc<T>> {
        let (ns, name) = key_parts(&*obj);
        let (slot, old) = self.table.put(ns, name, obj.clone());
        self.indices.update(slot, old.as_deref(), Some(&obj));
        old
    }

    /// Starts a write: the batches of replaced objects to hand to the background thread
    /// once the lock is released (none unless this store defers drops).
    pub(crate) fn begin_write(&mut self) -> Vec<Vec<Arc<T>>> {
        self.graveyard
            .as_mut()
            .map(Graveyard::begin)
            .unwrap_or_default()
    }

    /// With deferred drops, keeps a reference to an object the store let go of, so that its
    /// last reference is dropped by the background thread.
    pub(crate) fn bury(&mut self, old: Option<&Arc<T>>) {
        if let (Some(graveyard), Some(old)) = (self.graveyard.as_mut(), old) {
            graveyard.bury(old.clone());
        }
    }

    /// Builds contents and indices from scratch (later duplicates win).
    pub(crate) fn build(indexers: Indexers<T>, builtin_namespace: bool, objs: Vec<Arc<T>>) -> Self {
        let mut inner = Inner::empty(indexers, builtin_namespace);
        inner.table.reserve(objs.len());
        for o in objs {
            let (ns, name) = key_parts(&*o);
            inner.table.put(ns, name, o.clone());
        }
        let Inner { table, indices, .. } = &mut inner;
        for (name, f) in indices.indexers.iter() {
            let index = indices.indices.entry(name.clone()).or_default();
            for (slot, obj) in table.objects() {
                insert_all(index, f, slot, obj);
            }
        }
        inner
    }

    /// Removes an object from contents and indices.
    pub(crate) fn remove(&mut self, ns: &str, name: &str) -> Option<Arc<T>> {
        let (slot, old) = self.table.remove(ns, name)?;
        self.indices.update(slot, Some(&old), None);
        Some(old)
    }

    pub(crate) fn backfill(&self, f: &IndexFn<T>) -> Index {
        let mut index = Index::default();
        for (slot, obj) in self.table.objects() {
            insert_all(&mut index, f, slot, obj);
        }
        index
    }
}
