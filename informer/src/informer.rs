//! `SharedIndexInformer`: one reflector feeding one indexed cache, shared by any number of
//! handlers (client-go `tools/cache/shared_informer.go`, `sharedIndexInformer`).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_reflector::{LastSyncResourceVersion, Reflector};
use kcm_store::{IndexFn, Lister, Store, StoreError};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::handler::ResourceEventHandler;
use crate::informer_store::InformerStore;
use crate::inner::Inner;
pub use crate::inner::{InformerObject, Transform};
use crate::listener::{ListenerShared, Notification};
use crate::options::InformerOptions;
use crate::processor::Processor;
use crate::sync::{HasSynced, wait_for_cache_sync};

/// Errors of informer operations.
#[derive(Debug, thiserror::Error)]
pub enum InformerError {
    /// The informer already stopped; no handler can be added.
    #[error("informer {0} has stopped; handler not added")]
    Stopped(String),
    /// The operation is only allowed before the informer starts.
    #[error("informer {0} has already started")]
    AlreadyStarted(String),
    /// An index could not be added.
    #[error("informer {name}: {source}")]
    Index {
        /// Informer name.
        name: String,
        /// Store error.
        #[source]
        source: StoreError,
    },
}

/// A shared informer with an indexed cache. Cloning shares the informer.
///
/// ```no_run
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::Pod;
/// use kcm_informer::{EventHandlerFns, InformerOptions, SharedIndexInformer};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn example() -> anyhow::Result<()> {
/// let client = kube::Client::try_default().await?;
/// let pods = SharedIndexInformer::<Pod>::new(client, InformerOptions::default().namespace("default"));
/// pods.set_transform(|mut p: Pod| { p.metadata.managed_fields = None; p })?;
/// pods.add_event_handler(EventHandlerFns::new().on_add(|pod: &std::sync::Arc<Pod>, _initial| {
///     println!("pod {:?}", pod.metadata.name);
/// }))?;
/// let cancel = CancellationToken::new();
/// tokio::spawn({ let pods = pods.clone(); let cancel = cancel.clone(); async move { pods.run(cancel).await } });
/// assert!(pods.wait_for_cache_sync(Some(Duration::from_secs(30)), &cancel).await);
/// println!("{} pods cached", pods.store().len());
/// # Ok(())
/// # }
/// ```
pub struct SharedIndexInformer<K> {
    pub(crate) inner: Arc<Inner<K>>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("name", &self.inner.name)
            .field("synced", &self.inner.synced.load(Ordering::Relaxed))
            .finish()
    }
}

/// The handle of a registered handler: removal and per-registration `has_synced`.
#[derive(Clone)]
pub struct HandlerRegistration {
    id: u64,
    informer: usize,
    shared: Arc<ListenerShared>,
    informer_synced: Arc<AtomicBool>,
}

impl fmt::Debug for HandlerRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandlerRegistration")
            .field("id", &self.id)
            .field("has_synced", &self.has_synced())
            .finish()
    }
}

impl HandlerRegistration {
    /// True once the informer synced and this handler has processed every initial-list add.
    pub fn has_synced(&self) -> bool {
        self.informer_synced.load(Ordering::Acquire)
            && self.shared.initial_pending.load(Ordering::Acquire) == 0
    }

    /// Notifications queued for this handler and not yet processed.
    pub fn pending(&self) -> usize {
        self.shared.pending.load(Ordering::Acquire)
    }
}

impl HasSynced for HandlerRegistration {
    fn has_synced(&self) -> bool {
        HandlerRegistration::has_synced(self)
    }
}

impl<K: InformerObject> HasSynced for SharedIndexInformer<K> {
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }
}

impl<K: InformerObject> SharedIndexInformer<K> {
    /// An informer for `K` scoped by `options`; nothing happens until [`run`](Self::run).
    pub fn new(client: kube::Client, options: InformerOptions) -> Self {
        let type_name = std::any::type_name::<K>()
            .rsplit("::")
            .next()
            .unwrap_or("object");
        let mut name = match &options.namespace {
            Some(ns) => format!("{type_name}@{ns}"),
            None => type_name.to_owned(),
        };
        if let Some(l) = &options.reflector.label_selector {
            name.push_str(&format!("[labels={l}]"));
        }
        if let Some(f) = &options.reflector.field_selector {
            name.push_str(&format!("[fields={f}]"));
        }
        if let Some(shard) = &options.reflector.shard {
            // A selector can hold dozens of ranges: named by a digest of it.
            use std::hash::{Hash, Hasher};
            let mut digest = std::collections::hash_map::DefaultHasher::new();
            shard.selector().hash(&mut digest);
            name.push_str(&format!("[shard={:016x}]", digest.finish()));
        }
        Self {
            inner: Arc::new(Inner {
                name,
                client,
                processor: Mutex::new(Processor::new(options.resync_period)),
                options,
                store: Store::new(),
                synced: Arc::new(AtomicBool::new(false)),
                started: AtomicBool::new(false),
                transform: Mutex::new(None),
                last_sync_rv: Mutex::new(None),
                store_resource_version: Mutex::new(String::new()),
            }),
        }
    }

    /// The informer's name (type and namespace), used in logs.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The cache (read-only by contract: never mutate what you get from it).
    pub fn store(&self) -> &Store<K> {
        &self.inner.store
    }

    /// A typed lister over the cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.inner.store.clone())
    }

    /// True once the first list has been applied to the cache.
    pub fn has_synced(&self) -> bool {
        self.inner.synced.load(Ordering::Acquire)
    }

    /// The reflector's last synced resourceVersion ("" before the first list).
    pub fn last_sync_resource_version(&self) -> String {
        self.inner
            .last_sync_rv
            .lock()
            .as_ref()
            .map(LastSyncResourceVersion::get)
            .unwrap_or_default()
    }

    /// The resourceVersion of the last list, event or bookmark applied to the cache (client-go's
    /// `LastStoreSyncResourceVersion`).
    pub fn store_resource_version(&self) -> String {
        self.inner.store_resource_version.lock().clone()
    }

    /// True once [`run`](Self::run) was called.
    pub fn is_started(&self) -> bool {
        self.inner.started.load(Ordering::Acquire)
    }

    /// True once the informer stopped.
    pub fn is_stopped(&self) -> bool {
        self.inner.processor.lock().stopped
    }

    /// Number of registered handlers.
    pub fn handler_count(&self) -> usize {
        self.inner.processor.lock().len()
    }

    /// The current resync check period.
    pub fn resync_check_period(&self) -> Duration {
        self.inner.processor.lock().resync_check_period
    }

    /// Sets the transform (only before start).
    pub fn set_transform(
        &self,
        f: impl Fn(K) -> K + Send + Sync + 'static,
    ) -> Result<(), InformerError> {
        if self.is_started() {
            return Err(InformerError::AlreadyStarted(self.inner.name.clone()));
        }
        *self.inner.transform.lock() = Some(Arc::new(f));
        Ok(())
    }

    /// Adds an index (allowed after start: delta processing is blocked while it is backfilled).
    pub fn add_indexer(&self, name: &str, f: IndexFn<K>) -> Result<(), InformerError> {
        let _blocked = self.inner.processor.lock();
        self.inner
            .store
            .add_indexer(name, f)
            .map_err(|source| InformerError::Index {
                name: self.inner.name.clone(),
                source,
            })
    }

    /// Registers a handler with the informer's default resync period.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> Result<HandlerRegistration, InformerError> {
        let period = self.inner.options.resync_period;
        self.add_event_handler_with_resync_period(handler, period)
    }

    /// Registers a handler with its own resync period (client-go
    /// `AddEventHandlerWithResyncPeriod`). A handler registered after start
    /// first receives the whole cache as adds marked initial list.
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync_period: Duration,
    ) -> Result<HandlerRegistration, InformerError> {
        let mut processor = self.inner.processor.lock();
        if processor.stopped {
            return Err(InformerError::Stopped(self.inner.name.clone()));
        }
        let initial = if processor.started {
            self.inner.store.list()
        } else {
            Vec::new()
        };
        let (id, shared) = processor.add(Arc::new(handler), resync_period, initial);
        Ok(HandlerRegistration {
            id,
            informer: Arc::as_ptr(&self.inner) as *const () as usize,
            shared,
            informer_synced: Arc::clone(&self.inner.synced),
        })
    }

    /// Removes a handler; its buffered notifications are discarded. Removing twice, or a handle of
    /// another informer, is a no-op.
    pub fn remove_event_handler(&self, registration: &HandlerRegistration) {
        if registration.informer != Arc::as_ptr(&self.inner) as *const () as usize {
            return;
        }
        self.inner.processor.lock().remove(registration.id);
    }

    /// Delivers every cached object `matches` accepts to every handler as an update with the
    /// same old and new object (what a resync delivers, but to all handlers at once). A sharded
    /// controller calls it when namespaces become its own, so that their objects are synced.
    /// Returns how many objects were delivered.
    pub fn redeliver_where(&self, matches: &dyn Fn(&ObjectMeta) -> bool) -> usize {
        let processor = self.inner.processor.lock();
        let mut delivered = 0;
        self.inner.store.for_each(|obj| {
            if matches(kube::Resource::meta(obj.as_ref())) {
                delivered += 1;
                processor.distribute(
                    &Notification::Update {
                        old: Arc::clone(obj),
                        new: Arc::clone(obj),
                    },
                    false,
                );
            }
        });
        delivered
    }

    /// Waits until the cache synced; false on timeout or cancellation.
    pub async fn wait_for_cache_sync(
        &self,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
    ) -> bool {
        wait_for_cache_sync(&[self], timeout, cancel).await
    }

    /// Runs the informer until `cancel` fires: starts handler tasks, the resync timer and the
    /// reflector. A second call returns at once.
    pub async fn run(&self, cancel: CancellationToken) {
        if self.inner.started.swap(true, Ordering::AcqRel) {
            tracing::warn!(informer = %self.inner.name, "the informer has already been started");
            return;
        }
        let mut config = self.inner.options.reflector.clone().name(&self.inner.name);
        if config.dynamic_shard.is_some() && !is_namespaced::<K>() {
            // A namespace shard would put every cluster-scoped object on one member.
            tracing::debug!(informer = %self.inner.name, "cluster-scoped: not sharded");
            config.dynamic_shard = None;
        }
        let mut reflector = Reflector::<K>::new(
            self.inner.client.clone(),
            self.inner.options.namespace.as_deref(),
            config,
        );
        *self.inner.last_sync_rv.lock() = Some(reflector.last_sync_resource_version());
        self.inner.processor.lock().start();
        let resync = tokio::spawn(resync_loop(Arc::clone(&self.inner), cancel.clone()));
        let mut sink = InformerStore {
            inner: Arc::clone(&self.inner),
            transform: self.inner.transform.lock().clone(),
        };
        reflector.run(&mut sink, cancel).await;
        resync.abort();
        let tasks = self.inner.processor.lock().stop();
        for task in tasks {
            let _ = task.await;
        }
        tracing::debug!(informer = %self.inner.name, "informer stopped");
    }
}

/// Whether `K` lives in namespaces (its URL path has a namespace segment).
fn is_namespaced<K: InformerObject>() -> bool {
    K::url_path(&(), Some("ns")).contains("/namespaces/ns/")
}

/// Every resync check period: mark due handlers as syncing and re-deliver the cache to them as
/// `on_update(obj, obj)`.
async fn resync_loop<K: InformerObject>(inner: Arc<Inner<K>>, cancel: CancellationToken) {
    loop {
        let period = inner.processor.lock().resync_check_period;
        if period.is_zero() {
            return;
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(period) => {}
        }
        let mut processor = inner.processor.lock();
        if !inner.synced.load(Ordering::Acquire) {
            continue;
        }
        if processor.should_resync(Instant::now()) {
            inner.store.for_each(|obj| {
                processor.distribute(
                    &Notification::Update {
                        old: Arc::clone(obj),
                        new: Arc::clone(obj),
                    },
                    true,
                );
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::DeletedObject;
    use crate::informer_store::InformerStore;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kcm_reflector::ReflectorStore;
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
    async fn redelivery_sends_the_matching_cache_to_every_handler_as_updates() {
        let inf = informer();
        let (first, second) = (Recorder::default(), Recorder::default());
        let r1 = inf.add_event_handler(first.clone()).expect("add handler");
        let r2 = inf.add_event_handler(second.clone()).expect("add handler");
        inf.inner.processor.lock().start();
        let mut sink = InformerStore {
            inner: Arc::clone(&inf.inner),
            transform: None,
        };
        sink.replace(vec![cm("a", "1"), cm("b", "2")], "2".into());
        let delivered = inf.redeliver_where(&|m: &ObjectMeta| m.name.as_deref() == Some("b"));
        assert_eq!(delivered, 1);
        drained(&r1).await;
        drained(&r2).await;
        for rec in [first, second] {
            assert_eq!(
                *rec.0.lock(),
                ["add a@1 true", "add b@2 true", "update b@2 -> b@2"]
            );
        }
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
