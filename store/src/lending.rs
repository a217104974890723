//! Reads that lend the stored objects instead of handing out `Arc`s: the object is borrowed
//! under the store's read lock, so its reference count (in the object's own, usually cold,
//! allocation) is not touched. For callers that only look; `get` and `list` still return
//! `Arc<T>` for callers that keep the object.

use std::sync::Arc;

use crate::key::ObjectKey;
use crate::object::Object;
use crate::store::Store;

impl<T: Object> Store<T> {
    /// Runs `f` on the stored object with this key, lending it instead of handing out an
    /// `Arc`: for readers that only look (no reference count is touched, so the object's
    /// cache line is only read). `None` if there is no such object.
    ///
    /// `f` runs while the store's read lock is held, with the same rules as for
    /// [`for_each`](Self::for_each): it must not call back into this store.
    ///
    /// ```
    /// # use std::{collections::BTreeMap, sync::Arc};
    /// # use kcm_store::{Object, ObjectKey, Store};
    /// # struct Cm { name: String, data: String }
    /// # impl Object for Cm {
    /// #     fn name(&self) -> &str { &self.name }
    /// #     fn namespace(&self) -> Option<&str> { Some("ns") }
    /// #     fn labels(&self) -> Option<&BTreeMap<String, String>> { None }
    /// # }
    /// let store = Store::new();
    /// store.add(Arc::new(Cm { name: "a".into(), data: "hello".into() }));
    /// let key = ObjectKey::new("ns", "a");
    /// assert_eq!(store.with(&key, |cm| cm.data.len()), Some(5));
    /// assert_eq!(store.with(&ObjectKey::new("ns", "b"), |cm| cm.data.len()), None);
    /// ```
    pub fn with<R>(&self, key: &ObjectKey, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.with_by_name(&key.namespace, &key.name, f)
    }

    /// [`with`](Self::with) by namespace and name (`namespace` empty for a cluster-scoped
    /// object), without building an [`ObjectKey`].
    pub fn with_by_name<R>(
        &self,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&T) -> R,
    ) -> Option<R> {
        let inner = self.inner.read();
        inner.table.get(namespace, name).map(|obj| f(obj))
    }

    /// Runs `f` over every object under one shared lock (no `Vec` of all objects is built).
    ///
    /// `f` runs while the read lock is held: it must not call back into this store (a write
    /// deadlocks; so can a nested read, because the lock is fair and a queued writer blocks
    /// new readers) and should not block on anything that may wait for this store.
    pub fn for_each(&self, mut f: impl FnMut(&Arc<T>)) {
        let inner = self.inner.read();
        inner.table.values().for_each(&mut f);
    }
}
