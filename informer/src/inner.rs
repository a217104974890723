//! The state one informer shares between its handle, its reflector's store and its resync
//! timer.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use kcm_reflector::{LastSyncResourceVersion, Watchable};
use kcm_store::{Object, Store};
use parking_lot::Mutex;

use crate::options::InformerOptions;
use crate::processor::Processor;

/// What an informer can hold: a watchable Kubernetes type that the store can key and index.
pub trait InformerObject: Watchable + Object {}
impl<K: Watchable + Object> InformerObject for K {}

/// A transform applied to every incoming object before it is cached and handed to handlers
/// (e.g. dropping `metadata.managedFields`). It takes ownership and may modify in place.
pub type Transform<K> = Arc<dyn Fn(K) -> K + Send + Sync>;

/// One informer's state: its cache, its handlers and what it last applied.
pub(crate) struct Inner<K> {
    pub(crate) name: String,
    pub(crate) client: kube::Client,
    pub(crate) options: InformerOptions,
    pub(crate) store: Store<K>,
    pub(crate) processor: Mutex<Processor<K>>,
    pub(crate) synced: Arc<AtomicBool>,
    pub(crate) started: AtomicBool,
    pub(crate) transform: Mutex<Option<Transform<K>>>,
    pub(crate) last_sync_rv: Mutex<Option<LastSyncResourceVersion>>,
    pub(crate) store_resource_version: Mutex<String>,
}
