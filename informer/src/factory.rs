//! `InformerFactory`: one shared informer per resource type and scope, handed to any number of
//! controllers, started and synced together (client-go `informers/factory.go`, `SharedInformerFactory`).

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_store::Lister;
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::informer::{InformerObject, SharedIndexInformer};
use crate::options::{InformerOptions, ScopeKey};
use crate::sync::SYNC_POLL_PERIOD;

type FactoryKey = (TypeId, ScopeKey);

trait ErasedInformer: Send + Sync {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()>;
    fn synced(&self) -> bool;
    fn name(&self) -> String;
    fn redeliver_where(&self, matches: &dyn Fn(&ObjectMeta) -> bool) -> usize;
    fn cached(&self) -> usize;
}

impl<K: InformerObject> ErasedInformer for SharedIndexInformer<K> {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()> {
        let informer = self.clone();
        async move { informer.run(cancel).await }.boxed()
    }
    fn synced(&self) -> bool {
        self.has_synced()
    }
    fn name(&self) -> String {
        SharedIndexInformer::name(self).to_owned()
    }
    fn redeliver_where(&self, matches: &dyn Fn(&ObjectMeta) -> bool) -> usize {
        SharedIndexInformer::redeliver_where(self, matches)
    }
    fn cached(&self) -> usize {
        self.store().len()
    }
}

struct Registered {
    typed: Box<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
    started: bool,
}

#[derive(Default)]
struct FactoryState {
    informers: HashMap<FactoryKey, Registered>,
    order: Vec<FactoryKey>,
    tasks: Vec<JoinHandle<()>>,
    shutting_down: bool,
}

/// Creates and shares informers. Cloning shares the factory.
///
/// ```no_run
/// use std::time::Duration;
/// use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
/// use kcm_informer::{InformerFactory, InformerOptions};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn example() -> anyhow::Result<()> {
/// let client = kube::Client::try_default().await?;
/// let factory = InformerFactory::new(client, InformerOptions::default());
/// let deployments = factory.informer::<Deployment>();
/// let replicasets = factory.lister::<ReplicaSet>();
/// let cancel = CancellationToken::new();
/// factory.start(&cancel);
/// let synced = factory.wait_for_cache_sync(Some(Duration::from_secs(60)), &cancel).await;
/// assert!(synced.values().all(|ok| *ok));
/// println!("{} deployments, {} replicasets", deployments.store().len(), replicasets.list(&kcm_store::Selector::everything()).len());
/// cancel.cancel();
/// factory.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct InformerFactory {
    client: kube::Client,
    defaults: InformerOptions,
    state: Arc<Mutex<FactoryState>>,
}

impl fmt::Debug for InformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("InformerFactory")
            .field("informers", &state.informers.len())
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

impl InformerFactory {
    /// A factory whose informers use `defaults` (namespace, selectors, resync, list strategy).
    pub fn new(client: kube::Client, defaults: InformerOptions) -> Self {
        Self {
            client,
            defaults,
            state: Arc::new(Mutex::new(FactoryState::default())),
        }
    }

    /// The shared informer for `K` with the factory's defaults.
    pub fn informer<K: InformerObject>(&self) -> SharedIndexInformer<K> {
        self.informer_with::<K>(self.defaults.clone())
    }

    /// The shared informer for `K` with its own options; informers are keyed by type, namespace
    /// and selectors, the shard selector included (the resync period of the first request wins).
    pub fn informer_with<K: InformerObject>(
        &self,
        options: InformerOptions,
    ) -> SharedIndexInformer<K> {
        let key: FactoryKey = (TypeId::of::<K>(), options.scope_key());
        let mut state = self.state.lock();
        if let Some(existing) = state.informers.get(&key)
            && let Some(informer) = existing.typed.downcast_ref::<SharedIndexInformer<K>>()
        {
            return informer.clone();
        }
        let informer = SharedIndexInformer::<K>::new(self.client.clone(), options);
        state.informers.insert(
            key.clone(),
            Registered {
                typed: Box::new(informer.clone()),
                erased: Arc::new(informer.clone()),
                started: false,
            },
        );
        state.order.push(key);
        informer
    }

    /// A typed lister over the shared informer for `K`.
    pub fn lister<K: InformerObject>(&self) -> Lister<K> {
        self.informer::<K>().lister()
    }

    /// Starts every informer not started yet, each in its own task. Idempotent; call again after
    /// requesting more informers. A no-op once shutting down.
    pub fn start(&self, cancel: &CancellationToken) {
        let mut state = self.state.lock();
        if state.shutting_down {
            return;
        }
        let state = &mut *state;
        for key in &state.order {
            if let Some(reg) = state.informers.get_mut(key)
                && !reg.started
            {
                reg.started = true;
                state
                    .tasks
                    .push(tokio::spawn(reg.erased.run(cancel.clone())));
            }
        }
    }

    /// Waits for every *started* informer to sync. Returns name → synced (false on timeout or
    /// cancellation). Informers not started yet are not included.
    pub async fn wait_for_cache_sync(
        &self,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
    ) -> BTreeMap<String, bool> {
        let started: Vec<Arc<dyn ErasedInformer>> = {
            let state = self.state.lock();
            state
                .order
                .iter()
                .filter_map(|k| state.informers.get(k))
                .filter(|r| r.started)
                .map(|r| Arc::clone(&r.erased))
                .collect()
        };
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        loop {
            let done = started.iter().all(|i| i.synced());
            let expired = deadline.is_some_and(|d| tokio::time::Instant::now() >= d);
            if done || expired || cancel.is_cancelled() {
                return started.iter().map(|i| (i.name(), i.synced())).collect();
            }
            tokio::select! {
                () = cancel.cancelled() => {}
                () = tokio::time::sleep(SYNC_POLL_PERIOD) => {}
            }
        }
    }

    /// [`SharedIndexInformer::redeliver_where`] on every informer of the factory; returns how
    /// many objects were delivered.
    pub fn redeliver_where(&self, matches: &dyn Fn(&ObjectMeta) -> bool) -> usize {
        let informers: Vec<Arc<dyn ErasedInformer>> = {
            let state = self.state.lock();
            state
                .order
                .iter()
                .filter_map(|k| state.informers.get(k))
                .map(|r| Arc::clone(&r.erased))
                .collect()
        };
        informers.iter().map(|i| i.redeliver_where(matches)).sum()
    }

    /// Every informer's name and the number of objects in its cache, in creation order.
    pub fn cached_objects(&self) -> Vec<(String, usize)> {
        let state = self.state.lock();
        state
            .order
            .iter()
            .filter_map(|k| state.informers.get(k))
            .map(|r| (r.erased.name(), r.erased.cached()))
            .collect()
    }

    /// Marks the factory as shutting down and waits for every informer task to end. Cancel the
    /// token given to [`start`](Self::start) first, otherwise this waits forever.
    pub async fn shutdown(&self) {
        let tasks = {
            let mut state = self.state.lock();
            state.shutting_down = true;
            std::mem::take(&mut state.tasks)
        };
        for task in tasks {
            let _ = task.await;
        }
    }
}
