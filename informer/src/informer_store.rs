//! Keeping the cache in step with the reflector and notifying handlers (client-go
//! `tools/cache/controller.go`, `processDeltas`, fed in order as by `the_real_fifo.go`'s
//! `RealFIFO`, a relist applied atomically).
//!
//! The reflector calls into this store on its own task. Every change is applied to the cache
//! first and then handed to each handler's unbounded buffer, while holding the processor lock
//! (client-go `blockDeltas`), so a handler registered concurrently sees "cache replay, then live
//! notifications" without gaps or duplicates.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kcm_reflector::{DeletedObject, ReflectorStore, into_arcs, relist_tombstones};
use kcm_store::ObjectKey;

use crate::inner::{InformerObject, Inner, Transform};
use crate::listener::Notification;

/// The informer's [`ReflectorStore`]: transform, update the cache, dispatch.
pub(crate) struct InformerStore<K> {
    pub(crate) inner: Arc<Inner<K>>,
    pub(crate) transform: Option<Transform<K>>,
}

fn same_resource_version<K: kube::Resource>(a: &K, b: &K) -> bool {
    a.meta().resource_version == b.meta().resource_version
}

impl<K: InformerObject> InformerStore<K> {
    fn prepare(&self, obj: K) -> Arc<K> {
        match &self.transform {
            Some(t) => Arc::new(t(obj)),
            None => Arc::new(obj),
        }
    }

    /// Records `obj`'s resourceVersion as the last one the cache applied (client-go's store
    /// does so on every add, update and delete; the consistency checks read it).
    fn applied(&self, obj: &K) {
        if let Some(rv) = obj
            .meta()
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty())
        {
            rv.clone_into(&mut self.inner.store_resource_version.lock());
        }
    }

    fn upsert(&mut self, obj: K) {
        let obj = self.prepare(obj);
        let processor = self.inner.processor.lock();
        let initial = !self.inner.synced.load(Ordering::Acquire);
        let previous = self.inner.store.add(Arc::clone(&obj));
        self.applied(&obj);
        match previous {
            Some(old) => {
                let sync = same_resource_version(old.as_ref(), obj.as_ref());
                processor.distribute(&Notification::Update { old, new: obj }, sync);
            }
            None => processor.distribute(&Notification::Add { obj, initial }, false),
        }
    }
}

impl<K: InformerObject> ReflectorStore<K> for InformerStore<K> {
    fn add(&mut self, obj: K) {
        self.upsert(obj);
    }

    fn update(&mut self, obj: K) {
        self.upsert(obj);
    }

    fn delete(&mut self, obj: K) {
        let obj = self.prepare(obj);
        let key = obj.key();
        let processor = self.inner.processor.lock();
        self.inner.store.delete(&key);
        self.applied(&obj);
        processor.distribute(&Notification::Delete(DeletedObject::Object(obj)), false);
    }

    fn replace(&mut self, objects: Vec<K>, resource_version: String) {
        let objects: Vec<Arc<K>> = into_arcs(objects, |o| self.prepare(o));
        let processor = self.inner.processor.lock();
        let store = &self.inner.store;
        let listed: HashSet<ObjectKey> = objects.iter().map(|o| o.key()).collect();
        let cached = store.list();
        let tombstones = relist_tombstones(cached.iter().map(|o| (o.key(), o)), &listed);
        let previous: Vec<Option<Arc<K>>> = objects.iter().map(|o| store.get(o)).collect();
        store.replace(objects.clone());
        let initial = !self.inner.synced.load(Ordering::Acquire);
        tracing::debug!(informer = %self.inner.name, items = objects.len(), deleted = tombstones.len(),
            rv = %resource_version, "cache replaced");
        for t in tombstones {
            processor.distribute(&Notification::Delete(DeletedObject::Unknown(t)), false);
        }
        for (new, old) in objects.into_iter().zip(previous) {
            match old {
                Some(old) => {
                    let sync = same_resource_version(old.as_ref(), new.as_ref());
                    processor.distribute(&Notification::Update { old, new }, sync);
                }
                None => processor.distribute(&Notification::Add { obj: new, initial }, false),
            }
        }
        self.inner.synced.store(true, Ordering::Release);
        *self.inner.store_resource_version.lock() = resource_version;
    }

    fn bookmark(&mut self, resource_version: &str) {
        let mut rv = self.inner.store_resource_version.lock();
        resource_version.clone_into(&mut rv);
    }

    /// A part of the shard listed alone: the cache's objects of the part that the list lacks go
    /// as deletes (tombstones, as in a relist), the listed ones as adds or updates; the rest
    /// of the cache is not touched, and its handlers hear nothing of it.
    fn replace_part(
        &mut self,
        part: &(dyn Fn(&K) -> bool + Sync),
        objects: Vec<K>,
        resource_version: &str,
    ) -> bool {
        let objects: Vec<Arc<K>> = into_arcs(objects, |o| self.prepare(o));
        let processor = self.inner.processor.lock();
        let store = &self.inner.store;
        let listed: HashSet<ObjectKey> = objects.iter().map(|o| o.key()).collect();
        let cached: Vec<Arc<K>> = store.list().into_iter().filter(|o| part(o)).collect();
        let tombstones = relist_tombstones(cached.iter().map(|o| (o.key(), o)), &listed);
        tracing::debug!(informer = %self.inner.name, items = objects.len(), deleted = tombstones.len(),
            rv = %resource_version, "part of the cache replaced");
        for t in tombstones {
            store.delete(&t.key);
            processor.distribute(&Notification::Delete(DeletedObject::Unknown(t)), false);
        }
        for obj in objects {
            match store.add(Arc::clone(&obj)) {
                Some(old) => {
                    let sync = same_resource_version(old.as_ref(), obj.as_ref());
                    processor.distribute(&Notification::Update { old, new: obj }, sync);
                }
                None => processor.distribute(
                    &Notification::Add {
                        obj,
                        initial: false,
                    },
                    false,
                ),
            }
        }
        true
    }
}
