//! The indexer half of [`Store`] (client-go `Indexer`): registering indexers, with their
//! backfill, and reading through an index.

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::RwLockUpgradableReadGuard;

use crate::index::{Hasher, Index, IndexFn, Slot, values_of};
use crate::inner::Inner;
use crate::key::ObjectKey;
use crate::object::Object;
use crate::store::Store;

/// Errors returned by index operations of [`Store`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The named index is not registered (upstream message).
    #[error("Index with name {0} does not exist")]
    IndexNotFound(String),
    /// `add_indexer` was called with a name that is already registered.
    #[error("indexer conflict: [{0}]")]
    IndexerConflict(String),
}

impl<T> Inner<T> {
    /// The index registered under `name`.
    pub(crate) fn index_of(&self, name: &str) -> Result<&Index, StoreError> {
        self.indices
            .indices
            .get(name)
            .ok_or_else(|| StoreError::IndexNotFound(name.to_string()))
    }
}

impl<T: Object> Store<T> {
    /// Registers a new index and backfills it from every stored object.
    /// Fails with [`StoreError::IndexerConflict`] if the name already exists.
    pub fn add_indexer(&self, name: &str, f: IndexFn<T>) -> Result<(), StoreError> {
        self.add_indexers([(name.to_string(), f)])
    }

    /// Registers several indexers at once (client-go `AddIndexers`): fails without changing
    /// anything if any name is already registered (or repeated).
    ///
    /// The backfill runs under an upgradable read lock: readers continue meanwhile, writers
    /// wait; the lock is upgraded only to swap the finished indices in.
    pub fn add_indexers(
        &self,
        new: impl IntoIterator<Item = (String, IndexFn<T>)>,
    ) -> Result<(), StoreError> {
        let new: Vec<(String, IndexFn<T>)> = new.into_iter().collect();
        let inner = self.inner.upgradable_read();
        let mut seen = HashSet::new();
        for (name, _) in &new {
            if inner.indices.indexers.contains_key(name) || !seen.insert(name.as_str()) {
                return Err(StoreError::IndexerConflict(name.clone()));
            }
        }
        let built: Vec<(String, IndexFn<T>, Index)> = new
            .into_iter()
            .map(|(name, f)| {
                let index = inner.backfill(&f);
                (name, f, index)
            })
            .collect();
        let mut inner = RwLockUpgradableReadGuard::upgrade(inner);
        let mut indexers = (*inner.indices.indexers).clone();
        for (name, f, index) in built {
            inner.indices.indices.insert(name.clone(), index);
            indexers.insert(name, f);
        }
        inner.indices.indexers = Arc::new(indexers);
        Ok(())
    }

    /// Names of the registered indexers, sorted.
    pub fn indexer_names(&self) -> Vec<String> {
        self.inner.read().indices.indexers.keys().cloned().collect()
    }

    /// True when an index with this name is registered.
    pub fn has_index(&self, index: &str) -> bool {
        self.inner.read().indices.indexers.contains_key(index)
    }

    /// Objects whose index `index` contains `value` (client-go `ByIndex`).
    pub fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<T>>, StoreError> {
        let inner = self.inner.read();
        let Some(set) = inner.index_of(index)?.get(value) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(set.len());
        out.extend(set.iter().filter_map(|&s| inner.obj(s).cloned()));
        Ok(out)
    }

    /// Keys of the objects whose index `index` contains `value` (client-go `IndexKeys`).
    pub fn index_keys(&self, index: &str, value: &str) -> Result<Vec<ObjectKey>, StoreError> {
        let inner = self.inner.read();
        let Some(set) = inner.index_of(index)?.get(value) else {
            return Ok(Vec::new());
        };
        Ok(set
            .iter()
            .filter_map(|&s| inner.obj(s).map(|o| o.key()))
            .collect())
    }

    /// The values of `index` that currently have at least one object (client-go
    /// `ListIndexFuncValues`); empty for an unknown index.
    pub fn list_index_values(&self, index: &str) -> Vec<String> {
        let inner = self.inner.read();
        inner
            .indices
            .indices
            .get(index)
            .map(|idx| idx.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Objects sharing at least one value of `index` with `obj` (client-go `Index`),
    /// deduplicated.
    pub fn index(&self, index: &str, obj: &T) -> Result<Vec<Arc<T>>, StoreError> {
        let inner = self.inner.read();
        let f = inner
            .indices
            .indexers
            .get(index)
            .ok_or_else(|| StoreError::IndexNotFound(index.to_string()))?;
        let idx = inner.index_of(index)?;
        let values = values_of(f, obj);
        let mut out = Vec::new();
        if let [value] = values.as_slice() {
            if let Some(set) = idx.get(value) {
                out.extend(set.iter().filter_map(|&s| inner.obj(s).cloned()));
            }
            return Ok(out);
        }
        let mut seen: HashSet<Slot, Hasher> = HashSet::default();
        for v in &values {
            if let Some(set) = idx.get(v) {
                for &s in set {
                    if seen.insert(s)
                        && let Some(o) = inner.obj(s)
                    {
                        out.push(o.clone());
                    }
                }
            }
        }
        Ok(out)
    }

    /// Runs `f` over every object with `value` in `index` under one shared lock (same rules
    /// for `f` as [`Store::for_each`]).
    pub fn for_each_in_index(
        &self,
        index: &str,
        value: &str,
        mut f: impl FnMut(&Arc<T>),
    ) -> Result<(), StoreError> {
        let inner = self.inner.read();
        if let Some(set) = inner.index_of(index)?.get(value) {
            for &s in set {
                if let Some(o) = inner.obj(s) {
                    f(o);
                }
            }
        }
        Ok(())
    }
}
