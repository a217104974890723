//! Keeping the cache in step with the reflector and notifying handlers (client-go
//! `processDeltas` with in-order, RealFIFO-style delivery and atomic relists, spec B.4/B.5).
//!
//! The reflector calls into this store on its own task. Every change is applied to the cache
//! first and then handed to each handler's unbounded buffer, while holding the processor lock
//! (client-go `blockDeltas`), so a handler registered concurrently sees "cache replay, then live
//! notifications" without gaps or duplicates.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kcm_reflector::delta::into_arcs;
use kcm_reflector::{DeletedFinalStateUnknown, DeletedObject, ReflectorStore};
use kcm_store::ObjectKey;

use crate::informer::{InformerObject, Inner, Transform};
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
        let mut tombstones: Vec<DeletedFinalStateUnknown<K>> = Vec::new();
        store.for_each(|cached| {
            let key = cached.key();
            if !listed.contains(&key) {
                tombstones.push(DeletedFinalStateUnknown {
                    key: key.to_string(),
                    obj: Arc::clone(cached),
                });
            }
        });
        tombstones.sort_by(|a, b| a.key.cmp(&b.key));
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::ResourceEventHandler;
    use crate::informer::SharedIndexInformer;
    use crate::options::InformerOptions;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use parking_lot::Mutex;

    fn cm(name: &str, rv: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                resource_version: Some(rv.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn show(o: &ConfigMap) -> String {
        format!(
            "{}@{}",
            o.metadata.name.as_deref().unwrap_or_default(),
            o.metadata.resource_version.as_deref().unwrap_or_default()
        )
    }

    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<String>>>);
    impl ResourceEventHandler<ConfigMap> for Recorder {
        fn on_add(&self, obj: &Arc<ConfigMap>, initial: bool) {
            self.0.lock().push(format!("add {} {initial}", show(obj)));
        }
        fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
            self.0
                .lock()
                .push(format!("update {} -> {}", show(old), show(new)));
        }
        fn on_delete(&self, obj: DeletedObject<ConfigMap>) {
            let kind = if obj.is_tombstone() {
                "tombstone"
            } else {
                "delete"
            };
            self.0
                .lock()
                .push(format!("{kind} {} {}", obj.key(), show(obj.object())));
        }
    }

    fn informer() -> SharedIndexInformer<ConfigMap> {
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("static uri"));
        let client = kube::Client::try_from(config).expect("client");
        SharedIndexInformer::new(client, InformerOptions::default())
    }

    async fn drained(reg: &crate::informer::HandlerRegistration) {
        while reg.pending() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn relist_produces_tombstones_with_last_known_state_and_skips_unchanged() {
        let inf = informer();
        let rec = Recorder::default();
        let reg = inf.add_event_handler(rec.clone()).expect("add handler");
        inf.inner.processor.lock().start();
        let mut sink = InformerStore {
            inner: Arc::clone(&inf.inner),
            transform: None,
        };
        assert!(!reg.has_synced());
        sink.replace(vec![cm("a", "1"), cm("b", "1")], "1".into());
        sink.update(cm("a", "2"));
        sink.add(cm("c", "3"));
        sink.delete(cm("c", "4"));
        assert_eq!(inf.store_resource_version(), "4", "deletes move it too");
        sink.add(cm("e", "5"));
        assert_eq!(
            inf.store_resource_version(),
            "5",
            "events move the store's version"
        );
        sink.replace(vec![cm("b", "1"), cm("d", "6")], "6".into());
        drained(&reg).await;
        assert!(reg.has_synced());
        assert_eq!(
            *rec.0.lock(),
            [
                "add a@1 true",
                "add b@1 true",
                "update a@1 -> a@2",
                "add c@3 false",
                "delete ns/c c@4",
                "add e@5 false",
                "tombstone ns/a a@2",
                "tombstone ns/e e@5",
                "add d@6 false",
            ]
        );
        let mut keys: Vec<String> = inf
            .store()
            .list_keys()
            .iter()
            .map(ToString::to_string)
            .collect();
        keys.sort();
        assert_eq!(keys, ["ns/b", "ns/d"]);
        assert_eq!(inf.store_resource_version(), "6");
    }

    #[tokio::test]
    async fn late_handler_gets_the_cache_as_initial_adds_then_live_events() {
        let inf = informer();
        inf.inner.processor.lock().start();
        let mut sink = InformerStore {
            inner: Arc::clone(&inf.inner),
            transform: Some(Arc::new(|mut c: ConfigMap| {
                c.data = None;
                c
            })),
        };
        sink.replace(vec![cm("a", "1")], "1".into());
        let rec = Recorder::default();
        let reg = inf.add_event_handler(rec.clone()).expect("add handler");
        sink.add(cm("b", "2"));
        drained(&reg).await;
        assert!(reg.has_synced());
        assert_eq!(*rec.0.lock(), ["add a@1 true", "add b@2 false"]);
        inf.remove_event_handler(&reg);
        inf.remove_event_handler(&reg);
        assert_eq!(inf.handler_count(), 0);
        sink.add(cm("c", "3"));
        assert_eq!(rec.0.lock().len(), 2);
    }

    #[tokio::test]
    async fn removing_a_foreign_handle_is_a_no_op_and_double_registration_gives_two_listeners() {
        let a = informer();
        let b = informer();
        let rec = Recorder::default();
        let r1 = a.add_event_handler(rec.clone()).expect("add");
        let _r2 = a.add_event_handler(rec.clone()).expect("add");
        assert_eq!(a.handler_count(), 2);
        b.remove_event_handler(&r1);
        assert_eq!(a.handler_count(), 2);
        a.remove_event_handler(&r1);
        assert_eq!(a.handler_count(), 1);
    }

    #[tokio::test]
    async fn transform_is_rejected_after_start_and_handlers_after_stop() {
        let inf = informer();
        assert!(inf.set_transform(|c| c).is_ok());
        inf.inner.started.store(true, Ordering::Release);
        assert!(inf.set_transform(|c| c).is_err());
        let _ = inf.inner.processor.lock().stop();
        assert!(inf.add_event_handler(Recorder::default()).is_err());
    }
}
