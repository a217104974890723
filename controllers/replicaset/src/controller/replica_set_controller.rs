//! Wiring of the ReplicaSet controller (upstream `replica_set.go`: `NewReplicaSetController`,
//! `Run`, `worker`): informers, queue, expectations, pod control, and the worker pool.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kcm_controller::clock::real_clock;
use kcm_controller::consistency::ConsistencyStore;
use kcm_controller::event_correlator::{CorrelatorOptions, EventCorrelator};
use kcm_controller::event_recorder::{EventBroadcaster, KubeEventSink};
use kcm_controller::label_index::POD_TEMPLATE_HASH_INDEX;
use kcm_controller::owner_index::{CONTROLLER_UID_INDEX, controller_uid_index_fn, ensure_index};
use kcm_controller::pod_control::{KubePodControl, PodControl, WriteObserver};
use kcm_controller::pod_view::PodView;
use kcm_controller::worker::{RetryPolicy, WorkerPool};
use kcm_informer::{
    InformerError, InformerFactory, ObjectKey, SharedIndexInformer, wait_for_named_cache_sync,
};
use kcm_workqueue::RateLimitingQueue;
use tokio_util::sync::CancellationToken;

use crate::config::{CONTROLLER_NAME, QUEUE_NAME, ReplicaSetControllerConfig};
use crate::error::SyncError;

use super::context::{Context, PODS, REPLICASETS, ReplicaSetControllerParts};
use super::handlers::{PodHandler, ReplicaSetHandler};
use super::sync::sync_replica_set;

/// A pod-control write observer recording each created or patched pod's resourceVersion for
/// its controlling ReplicaSet (upstream's `OnWrite`).
pub(crate) fn pod_write_recorder(store: Arc<ConsistencyStore>) -> WriteObserver {
    Arc::new(move |pod: &Pod| {
        let Some(owner) = pod
            .metadata
            .owner_references
            .as_ref()
            .and_then(|refs| refs.iter().find(|r| r.controller == Some(true)))
        else {
            return;
        };
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        let rv = pod.metadata.resource_version.as_deref().unwrap_or_default();
        store.wrote_at(ns, &owner.name, &owner.uid, PODS, rv);
    })
}

/// The ReplicaSet controller: keeps `spec.replicas` pods per ReplicaSet and
/// reports their state in `status`.
///
/// ```no_run
/// use kcm_informer::{InformerFactory, InformerOptions};
/// use kcm_replicaset::{ReplicaSetController, ReplicaSetControllerConfig};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn example() -> anyhow::Result<()> {
/// let client = kube::Client::try_default().await?;
/// let factory = InformerFactory::new(client.clone(), InformerOptions::default());
/// let controller = ReplicaSetController::new(client, &factory, ReplicaSetControllerConfig::default())?;
/// let cancel = CancellationToken::new();
/// factory.start(&cancel); // after every controller registered its informers
/// let run = tokio::spawn(controller.run(cancel.clone()));
/// // ... later
/// cancel.cancel();
/// run.await?;
/// factory.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct ReplicaSetController {
    ctx: Arc<Context>,
    synced: Vec<Arc<dyn Fn() -> bool + Send + Sync>>,
    broadcaster: Option<EventBroadcaster>,
    workers: usize,
    namespace_gate: Option<kcm_controller::NamespaceGate>,
    cache_sync_timeout: Option<Duration>,
}

impl fmt::Debug for ReplicaSetController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicaSetController")
            .field("context", &self.ctx)
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

impl ReplicaSetController {
    /// Builds the controller over the shared `factory` (ReplicaSet informer with
    /// the full type, pod informer with [`PodView`]), registers its event
    /// handlers, and starts an event broadcaster writing core/v1 Events with
    /// source `replicaset-controller`. Must be called inside a tokio runtime;
    /// the caller starts the factory.
    pub fn new(
        client: kube::Client,
        factory: &InformerFactory,
        config: ReplicaSetControllerConfig,
    ) -> Result<Self, InformerError> {
        let broadcaster = EventBroadcaster::start(
            KubeEventSink::new(client.clone()),
            EventCorrelator::new(CorrelatorOptions::default(), real_clock()),
        );
        let recorder = broadcaster.new_recorder(CONTROLLER_NAME, None);
        let rs_informer = factory.informer::<ReplicaSet>();
        let pod_informer = factory.informer::<PodView>();
        let consistency = config.features.stale_controller_consistency.then(|| {
            let (rs, pods) = (rs_informer.clone(), pod_informer.clone());
            Arc::new(ConsistencyStore::new(vec![
                (REPLICASETS, Arc::new(move || rs.store_resource_version())),
                (PODS, Arc::new(move || pods.store_resource_version())),
            ]))
        });
        let mut kube_pod_control = KubePodControl::new(client.clone(), recorder);
        if let Some(store) = &consistency {
            kube_pod_control =
                kube_pod_control.with_write_observer(pod_write_recorder(store.clone()));
        }
        let pod_control: Arc<dyn PodControl> = Arc::new(kube_pod_control);
        // The controller indexes are shared with the Deployment controller: whichever is built
        // first registers them.
        ensure_index(
            rs_informer.store(),
            CONTROLLER_UID_INDEX,
            controller_uid_index_fn(),
            |name, f| rs_informer.add_indexer(name, f),
        );
        ensure_index(
            pod_informer.store(),
            CONTROLLER_UID_INDEX,
            controller_uid_index_fn(),
            |name, f| pod_informer.add_indexer(name, f),
        );
        ensure_index(
            pod_informer.store(),
            POD_TEMPLATE_HASH_INDEX.name,
            POD_TEMPLATE_HASH_INDEX.index_fn(),
            |name, f| pod_informer.add_indexer(name, f),
        );
        let parts = ReplicaSetControllerParts {
            rs_lister: rs_informer.lister(),
            pod_lister: pod_informer.lister(),
            client,
            pod_control,
            clock: real_clock(),
            consistency,
        };
        let mut controller = Self::from_parts(parts, config);
        controller.broadcaster = Some(broadcaster);
        controller.register(&rs_informer, &pod_informer)?;
        Ok(controller)
    }

    /// Builds the controller from explicit parts without registering any event
    /// handler (feed events with [`register`](Self::register) or call the sync
    /// directly). Must be called inside a tokio runtime (the queue's timer).
    pub(crate) fn from_parts(
        parts: ReplicaSetControllerParts,
        config: ReplicaSetControllerConfig,
    ) -> Self {
        Self {
            ctx: Arc::new(Context::new(parts, &config)),
            synced: Vec::new(),
            broadcaster: None,
            workers: config.workers,
            namespace_gate: config.namespace_gate.clone(),
            cache_sync_timeout: config.cache_sync_timeout,
        }
    }

    /// Registers the controller's handlers on the two informers; `run` then
    /// waits for both to sync.
    pub(crate) fn register(
        &mut self,
        rs_informer: &SharedIndexInformer<ReplicaSet>,
        pod_informer: &SharedIndexInformer<PodView>,
    ) -> Result<(), InformerError> {
        rs_informer.add_event_handler(ReplicaSetHandler(self.ctx.clone()))?;
        pod_informer.add_event_handler(PodHandler(self.ctx.clone()))?;
        let (rs, pods) = (rs_informer.clone(), pod_informer.clone());
        self.synced.push(Arc::new(move || rs.has_synced()));
        self.synced.push(Arc::new(move || pods.has_synced()));
        Ok(())
    }

    /// Whether the informer caches the controller reads have synced.
    pub fn has_synced(&self) -> bool {
        self.synced.iter().all(|f| f())
    }

    /// The work queue of ReplicaSet keys.
    pub fn queue(&self) -> &RateLimitingQueue<ObjectKey> {
        &self.ctx.queue
    }

    /// The creation/deletion expectations, by ReplicaSet key.
    #[cfg(test)]
    pub(crate) fn expectations(&self) -> &kcm_controller::UIDTrackingControllerExpectations {
        &self.ctx.expectations
    }

    /// Syncs one ReplicaSet (upstream `syncReplicaSet`); what the workers call.
    #[cfg(test)]
    pub(crate) async fn sync_replica_set(&self, key: &ObjectKey) -> Result<(), SyncError> {
        sync_replica_set(&self.ctx, key).await
    }

    /// Waits for the caches, runs the workers until `cancel` fires, then shuts
    /// the queue down, waits for in-flight syncs and flushes queued events.
    pub async fn run(self, cancel: CancellationToken) {
        tracing::info!(controller = "replicaset", "Starting controller");
        let synced = {
            let check = || self.has_synced();
            wait_for_named_cache_sync(QUEUE_NAME, &[&check], self.cache_sync_timeout, &cancel).await
        };
        if synced {
            let ctx = self.ctx.clone();
            let pool = WorkerPool::new(
                ctx.queue.clone(),
                self.workers,
                RetryPolicy::unlimited().fenced_if(SyncError::is_fenced),
            );
            let pool = match self.namespace_gate.clone() {
                Some(gate) => pool.gate(move |key: &ObjectKey| gate.allows(&key.namespace)),
                None => pool,
            };
            pool.run(
                move |key: &ObjectKey| {
                    let ctx = ctx.clone();
                    Box::pin(async move { sync_replica_set(&ctx, key).await })
                },
                cancel.clone().cancelled_owned(),
            )
            .await;
        } else {
            self.ctx.queue.shutdown();
        }
        tracing::info!(controller = "replicaset", "Shutting down controller");
        if let Some(b) = self.broadcaster {
            b.shutdown().await;
        }
    }

    #[cfg(test)]
    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }
}
