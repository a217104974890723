//! The thread-safe indexed store (client-go `ThreadSafeStore`): the type, its writes and its
//! reads by key. The reads that lend objects instead of cloning their `Arc` are in
//! `lending.rs`, the indexer half (client-go `Indexer`) in `indexer.rs`, the state behind the
//! lock in `inner.rs`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::deferred_drop::{Graveyard, drop_later, wait_dropped};
use crate::index::{IndexFn, NAMESPACE_INDEX, namespace_index_fn};
use crate::inner::{Inner, key_parts};
use crate::key::ObjectKey;
use crate::object::Object;

/// One operation of a [`Store::transaction`].
#[derive(Debug, Clone)]
pub enum TxOp<T> {
    /// Insert or replace (same as [`Store::add`]).
    Add(Arc<T>),
    /// Insert or replace (same as [`Store::update`]).
    Update(Arc<T>),
    /// Remove by key (same as [`Store::delete`]).
    Delete(ObjectKey),
}

/// A thread-safe store of `Arc<T>` keyed by [`ObjectKey`], with named indices.
///
/// Cloning a `Store` is cheap: clones share the same contents. All reads take a shared lock
/// (readers never block each other); a write holds the exclusive lock only for its own
/// update. [`Store::new`] installs the [`NAMESPACE_INDEX`] index.
///
/// # Why one `parking_lot::RwLock` around items and indices (and not `DashMap`)
///
/// Indices must change atomically with the items they describe (client-go's `threadSafeMap`,
/// `tools/cache/thread_safe_store.go`, holds one RW lock for both): a sharded map would still need an outer lock for that, and readers
/// could otherwise see an index entry that disagrees with its object. Measured with
/// `cargo xtask bench store` (100,000 k8s-openapi Pods, release build; thread-CPU-time
/// figures because the shared 2-core machine was heavily loaded): this store with two
/// indices vs a bare `DashMap<ObjectKey, Arc<Pod>>` with none — single-thread get 2.85 M vs
/// 3.43 M per CPU-second, two-thread concurrent get 3.46 M vs 2.63 M per CPU-second, list of
/// all 100,000 objects 1.35 ms vs 4.09 ms, insert 135 ms vs 64 ms and 100,000 updates 220 ms
/// vs 150 ms (the difference is mostly index maintenance), store overhead 172 vs 145 bytes
/// per object (on top of ~5.8 KB per Pod). The single lock costs ~20% on uncontended point
/// reads, wins under concurrency and for lists, and keeps the index semantics exact; bulk work
/// (`replace`, indexer backfill) runs outside the exclusive lock. (Those figures predate the
/// object table with inline keys, see `table.rs`.)
///
/// # Where a point read's time goes
///
/// With 100,000 Pods (~640 MB) a `get` is bound by cache and TLB misses, not instructions.
/// The object table keeps the lookup itself to cache-friendly memory (a 4-byte-slot hash
/// index and 48-byte inline keys); what remains is incrementing the returned `Arc`'s count,
/// which lives in the object's own, usually cold, allocation. client-go returns a pointer
/// without touching the object, so that one miss is the price of handing out `Arc<T>`
/// (and of never handing out a freed object). Readers that only look use
/// [`with`](Self::with) instead: the object is lent under the read lock and its count is
/// not touched.
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use kcm_store::{index_fn, Object, ObjectKey, Store};
///
/// struct Pod { ns: String, name: String, node: String }
/// impl Object for Pod {
///     fn name(&self) -> &str { &self.name }
///     fn namespace(&self) -> Option<&str> { Some(&self.ns) }
///     fn labels(&self) -> Option<&BTreeMap<String, String>> { None }
/// }
/// let pod = |ns: &str, name: &str, node: &str| {
///     Arc::new(Pod { ns: ns.into(), name: name.into(), node: node.into() })
/// };
///
/// let store = Store::new();
/// store.add_indexer("node", index_fn(|p: &Pod| vec![p.node.clone()])).unwrap();
/// store.add(pod("default", "a", "n1"));
/// store.add(pod("default", "b", "n2"));
/// store.add(pod("kube-system", "c", "n1"));
///
/// assert_eq!(store.len(), 3);
/// assert_eq!(store.by_index("namespace", "default").unwrap().len(), 2);
/// assert_eq!(store.by_index("node", "n1").unwrap().len(), 2);
///
/// // An update that changes index values moves the object.
/// store.update(pod("default", "a", "n2"));
/// assert_eq!(store.index_keys("node", "n1").unwrap(), vec![ObjectKey::new("kube-system", "c")]);
///
/// store.delete(&ObjectKey::new("kube-system", "c"));
/// assert_eq!(store.list_index_values("node"), vec!["n2".to_string()]);
/// assert!(store.by_index("nope", "x").is_err());
/// ```
pub struct Store<T> {
    pub(crate) inner: Arc<RwLock<Inner<T>>>,
}

impl<T> Clone for Store<T> {
    fn clone(&self) -> Self {
        Store {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Store<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("Store")
            .field("len", &inner.table.len())
            .field(
                "indexers",
                &inner.indices.indexers.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<T: Object> Default for Store<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Object> Store<T> {
    /// An empty store with the built-in [`NAMESPACE_INDEX`] index.
    pub fn new() -> Self {
        let indexers = BTreeMap::from([(NAMESPACE_INDEX.to_string(), namespace_index_fn::<T>())]);
        Store {
            // The namespace index is ours, so updates may compare namespaces directly
            // instead of calling its function (see `Indices::update`).
            inner: Arc::new(RwLock::new(Inner::empty(Arc::new(indexers), true))),
        }
    }

    /// An empty store with exactly the given indexers (no implicit namespace index; add
    /// `(NAMESPACE_INDEX, namespace_index_fn())` yourself if wanted). A later duplicate name
    /// replaces an earlier one.
    pub fn with_indexers(indexers: impl IntoIterator<Item = (String, IndexFn<T>)>) -> Self {
        let indexers: BTreeMap<String, IndexFn<T>> = indexers.into_iter().collect();
        Store {
            inner: Arc::new(RwLock::new(Inner::empty(Arc::new(indexers), false))),
        }
    }

    /// Inserts or replaces the object under its key; returns the previous object.
    /// Identical to [`Store::update`] (as upstream `Add` ≡ `Update`).
    ///
    /// With [deferred drops](Self::set_deferred_drop) the store does not free the previous
    /// object on this thread: if the caller lets go of it too, a background thread does.
    pub fn add(&self, obj: Arc<T>) -> Option<Arc<T>> {
        let mut inner = self.inner.write();
        let ready = inner.begin_write();
        let old = inner.put(obj);
        inner.bury(old.as_ref());
        drop(inner);
        ready.into_iter().for_each(drop_later);
        old
    }

    /// Inserts or replaces the object under its key; returns the previous object.
    pub fn update(&self, obj: Arc<T>) -> Option<Arc<T>> {
        self.add(obj)
    }

    /// Removes the object with this key from the store and all indices; returns it (freed
    /// off this thread with [deferred drops](Self::set_deferred_drop)).
    pub fn delete(&self, key: &ObjectKey) -> Option<Arc<T>> {
        let mut inner = self.inner.write();
        let ready = inner.begin_write();
        let old = inner.remove(&key.namespace, &key.name);
        inner.bury(old.as_ref());
        drop(inner);
        ready.into_iter().for_each(drop_later);
        old
    }

    /// Applies `ops` in order under one write lock, so readers see either none or all of them
    /// (client-go's newer transaction API). Returns, per operation, the object it replaced or
    /// removed.
    ///
    /// ```
    /// # use std::{collections::BTreeMap, sync::Arc};
    /// # use kcm_store::{Object, ObjectKey, Store, TxOp};
    /// # struct Cm { name: String }
    /// # impl Object for Cm {
    /// #     fn name(&self) -> &str { &self.name }
    /// #     fn namespace(&self) -> Option<&str> { Some("ns") }
    /// #     fn labels(&self) -> Option<&BTreeMap<String, String>> { None }
    /// # }
    /// let store = Store::new();
    /// store.add(Arc::new(Cm { name: "a".into() }));
    /// let prev = store.transaction([
    ///     TxOp::Add(Arc::new(Cm { name: "b".into() })),
    ///     TxOp::Delete(ObjectKey::new("ns", "a")),
    /// ]);
    /// assert!(prev[0].is_none() && prev[1].is_some());
    /// assert_eq!(store.list_keys(), vec![ObjectKey::new("ns", "b")]);
    /// ```
    pub fn transaction(&self, ops: impl IntoIterator<Item = TxOp<T>>) -> Vec<Option<Arc<T>>> {
        // The operations are collected before the lock is taken.
        let ops: Vec<TxOp<T>> = ops.into_iter().collect();
        let mut inner = self.inner.write();
        let ready = inner.begin_write();
        let previous = ops
            .into_iter()
            .map(|op| {
                let old = match op {
                    TxOp::Add(obj) | TxOp::Update(obj) => inner.put(obj),
                    TxOp::Delete(key) => inner.remove(&key.namespace, &key.name),
                };
                inner.bury(old.as_ref());
                old
            })
            .collect();
        drop(inner);
        ready.into_iter().for_each(drop_later);
        previous
    }

    /// The stored object with the same key as `obj`.
    pub fn get(&self, obj: &T) -> Option<Arc<T>> {
        let (ns, name) = key_parts(obj);
        self.get_by_name(ns, name)
    }

    /// The stored object with this key.
    pub fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<T>> {
        self.get_by_name(&key.namespace, &key.name)
    }

    /// The stored object `namespace/name` (`namespace` empty for a cluster-scoped object):
    /// [`get_by_key`](Self::get_by_key) without building an [`ObjectKey`].
    pub fn get_by_name(&self, namespace: &str, name: &str) -> Option<Arc<T>> {
        self.inner.read().table.get(namespace, name).cloned()
    }

    /// All objects, in unspecified order.
    pub fn list(&self) -> Vec<Arc<T>> {
        let inner = self.inner.read();
        let mut out = Vec::with_capacity(inner.table.len());
        out.extend(inner.table.values().cloned());
        out
    }

    /// All keys, in unspecified order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.inner.read().table.keys()
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.inner.read().table.len()
    }

    /// True when the store holds no objects.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replaces the whole contents with `objs` and rebuilds every index from scratch (if two
    /// objects share a key, the later one wins). The new contents and indices are built
    /// before the write lock is taken, so readers keep seeing the old contents meanwhile.
    pub fn replace(&self, objs: Vec<Arc<T>>) {
        let (indexers, builtin_namespace) = {
            let inner = self.inner.read();
            (
                inner.indices.indexers.clone(),
                inner.indices.builtin_namespace,
            )
        };
        let fresh = Inner::build(indexers.clone(), builtin_namespace, objs);
        let mut inner = self.inner.write();
        let defer = inner.graveyard.is_some();
        let old = if Arc::ptr_eq(&inner.indices.indexers, &indexers) {
            std::mem::replace(&mut *inner, fresh)
        } else {
            // An indexer was added meanwhile: rebuild with the current set under the lock.
            let objs: Vec<Arc<T>> = fresh.table.into_values().collect();
            let rebuilt = Inner::build(inner.indices.indexers.clone(), builtin_namespace, objs);
            std::mem::replace(&mut *inner, rebuilt)
        };
        let Inner {
            table,
            indices,
            graveyard,
        } = old;
        // The fresh contents keep this store's choice.
        inner.graveyard = graveyard.or_else(|| defer.then(Graveyard::new));
        drop(inner);
        // The old contents are freed after the lock is released, and off this thread with
        // deferred drops.
        if defer {
            drop_later((table, indices));
        }
    }

    /// Whether objects this store replaces or removes are freed on a background thread
    /// instead of by whoever drops the last reference (off by default).
    ///
    /// Freeing an object is freeing every allocation in it, about as much work as the update
    /// that replaced it; deferring takes it off the writer's path (an informer's event loop),
    /// but it is not free: measured with glibc's allocator, freeing on another thread than
    /// the one that allocated costs about twice as much CPU in all (`cargo xtask bench
    /// store`, docs/benchmarks.md). Turning it off hands the objects still waiting over.
    pub fn set_deferred_drop(&self, on: bool) {
        let waiting = {
            let mut inner = self.inner.write();
            match (on, inner.graveyard.is_some()) {
                (true, false) => {
                    inner.graveyard = Some(Graveyard::new());
                    Vec::new()
                }
                (false, true) => inner
                    .graveyard
                    .take()
                    .map(|mut g| g.take_all())
                    .unwrap_or_default(),
                _ => Vec::new(),
            }
        };
        waiting.into_iter().for_each(drop_later);
    }

    /// With [deferred drops](Self::set_deferred_drop): hands every object this store still
    /// holds for the background thread over, and waits until that thread has freed
    /// everything handed to it so far (by any store). For tests, and for benchmarks that
    /// must count the freeing.
    pub fn drain_drops(&self) {
        let waiting = self
            .inner
            .write()
            .graveyard
            .as_mut()
            .map(Graveyard::take_all)
            .unwrap_or_default();
        waiting.into_iter().for_each(drop_later);
        wait_dropped();
    }
}
