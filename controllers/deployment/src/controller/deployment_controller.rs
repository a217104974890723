//! `DeploymentController` (upstream `NewDeploymentController` / `Run`): informers, handlers,
//! the `deployment` work queue and the worker pool.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_controller::PodView;
use kcm_controller::clock::{SharedClock, real_clock};
use kcm_controller::consistency::{ConsistencyStore, GroupResource};
use kcm_controller::event_correlator::EventCorrelator;
use kcm_controller::event_recorder::{EventBroadcaster, EventRecorder, KubeEventSink};
use kcm_controller::rs_control::{KubeReplicaSetControl, ReplicaSetControl};
use kcm_controller::worker::{DEPLOYMENT_MAX_RETRIES, RetryPolicy, WorkerPool};
use kcm_informer::{
    CancellationToken, HandlerRegistration, InformerError, InformerFactory, Lister,
    wait_for_named_cache_sync,
};
use kcm_workqueue::{RateLimitingQueue, default_controller_rate_limiter};

use crate::events::{DeploymentEvent, EVENT_COMPONENT};
use crate::features::FeatureGates;
use crate::util::fields::name_of;

use super::SyncError;
use super::handlers;

/// The resource of the controller's own writes it waits for its cache to see.
pub(crate) const DEPLOYMENTS: GroupResource = GroupResource {
    group: "apps",
    resource: "deployments",
};

/// Name of the work queue (and of the controller in logs).
pub const QUEUE_NAME: &str = "deployment";

/// Settings of a [`DeploymentController`].
#[derive(Debug, Clone)]
pub struct DeploymentControllerConfig {
    /// Worker tasks (`--concurrent-deployment-syncs`, default 5).
    pub workers: usize,
    /// Feature gates consulted by the decisions.
    pub features: FeatureGates,
    /// Source of "now" for conditions and progress deadlines.
    pub clock: SharedClock,
}

impl Default for DeploymentControllerConfig {
    fn default() -> Self {
        Self {
            workers: 5,
            features: FeatureGates::default(),
            clock: real_clock(),
        }
    }
}

/// Everything a sync and the handlers share.
pub(crate) struct Inner {
    pub(crate) client: kube::Client,
    pub(crate) d_lister: Lister<Deployment>,
    pub(crate) rs_lister: Lister<ReplicaSet>,
    pub(crate) pod_lister: Lister<PodView>,
    pub(crate) queue: RateLimitingQueue<String>,
    pub(crate) recorder: EventRecorder,
    pub(crate) rs_control: Arc<dyn ReplicaSetControl>,
    pub(crate) clock: SharedClock,
    pub(crate) features: FeatureGates,
    /// The controller's own Deployment writes, so that no sync decides (and writes) from a
    /// Deployment cache that does not show the previous write yet ([`Inner::wrote`]).
    pub(crate) own_writes: Arc<ConsistencyStore>,
}

impl Inner {
    /// Records a successful write of `written` (the object the API server returned), so that
    /// the next sync of it waits until the Deployment informer has seen it.
    pub(crate) fn wrote(&self, written: &Deployment) {
        let meta = &written.metadata;
        if let (Some(uid), Some(rv)) = (meta.uid.as_deref(), meta.resource_version.as_deref()) {
            self.own_writes.wrote_at(
                meta.namespace.as_deref().unwrap_or_default(),
                meta.name.as_deref().unwrap_or_default(),
                uid,
                DEPLOYMENTS,
                rv,
            );
        }
    }

    /// `enqueue`: `namespace/name` into the queue.
    pub(crate) fn enqueue(&self, d: &Deployment) {
        self.queue.add(key_of(d));
    }

    /// `enqueueRateLimited`.
    pub(crate) fn enqueue_rate_limited(&self, d: &Deployment) {
        self.queue.add_rate_limited(key_of(d));
    }

    /// `enqueueAfter`.
    pub(crate) fn enqueue_after(&self, d: &Deployment, after: Duration) {
        self.queue.add_after(key_of(d), after);
    }

    /// Records `event` about `d`.
    pub(crate) fn emit(&self, d: &Deployment, event: &DeploymentEvent) {
        let type_ = match event.type_ {
            crate::events::EventType::Normal => kcm_controller::event_recorder::EventType::Normal,
            crate::events::EventType::Warning => kcm_controller::event_recorder::EventType::Warning,
        };
        self.recorder.record(
            &kcm_controller::event_recorder::object_reference(d),
            type_,
            event.reason,
            event.message.clone(),
        );
    }
}

/// The work-queue key of a Deployment (`namespace/name`).
pub(crate) fn key_of(d: &Deployment) -> String {
    format!(
        "{}/{}",
        d.metadata.namespace.as_deref().unwrap_or_default(),
        name_of(&d.metadata)
    )
}

/// Upstream `handleErr`: success and NamespaceTerminating errors are forgotten; other errors
/// are requeued with backoff while the key has fewer than 15 requeues, then dropped.
pub(crate) fn retry_policy() -> RetryPolicy<SyncError> {
    RetryPolicy::max_retries(DEPLOYMENT_MAX_RETRIES).forget_if(SyncError::is_namespace_terminating)
}

/// [`retry_policy`] plus kcm's slow retry of dropped keys whose Deployment is not complete.
fn retry_policy_with_slow_retry(inner: Arc<Inner>) -> RetryPolicy<SyncError> {
    retry_policy().on_drop(move |key, err| super::slow_retry::on_dropped_key(&inner, key, err))
}

/// The Deployment controller of kube-controller-manager.
///
/// Build it with the shared [`InformerFactory`] of the process, start the factory, then
/// [`run`](Self::run) it until the token is cancelled. Against the embedded test API server:
///
/// ```
/// use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
/// use kcm_deployment::{DeploymentController, DeploymentControllerConfig};
/// use kcm_informer::{CancellationToken, InformerFactory, InformerOptions};
/// use kube::api::{Api, PostParams};
///
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let env = kcm_testenv::TestEnv::start(Default::default()).await?;
/// let client = env.client();
/// let factory = InformerFactory::new(client.clone(), InformerOptions::default());
/// let controller =
///     DeploymentController::new(client.clone(), &factory, DeploymentControllerConfig::default())?;
/// let cancel = CancellationToken::new();
/// factory.start(&cancel);
/// let running = tokio::spawn(controller.run(cancel.clone()));
///
/// let web: Deployment = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web", "namespace": "default"},
///     "spec": {
///         "replicas": 2,
///         "selector": {"matchLabels": {"app": "web"}},
///         "template": {
///             "metadata": {"labels": {"app": "web"}},
///             "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}
///         }
///     }
/// }))?;
/// Api::<Deployment>::namespaced(client.clone(), "default")
///     .create(&PostParams::default(), &web)
///     .await?;
///
/// // The controller creates the first ReplicaSet, `web-<pod-template-hash>`, with 2 replicas.
/// let replica_sets = Api::<ReplicaSet>::namespaced(client.clone(), "default");
/// let mut found = None;
/// for _ in 0..500 {
///     if let Some(rs) = replica_sets.list(&Default::default()).await?.items.pop() {
///         found = Some(rs);
///         break;
///     }
///     tokio::time::sleep(std::time::Duration::from_millis(20)).await;
/// }
/// let rs = found.expect("the controller created a ReplicaSet");
/// assert!(rs.metadata.name.unwrap().starts_with("web-"));
/// assert_eq!(rs.spec.replicas, Some(2));
///
/// cancel.cancel();
/// running.await?;
/// factory.shutdown().await;
/// env.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct DeploymentController {
    inner: Arc<Inner>,
    registrations: Vec<HandlerRegistration>,
    broadcaster: EventBroadcaster,
    workers: usize,
}

impl fmt::Debug for DeploymentController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeploymentController")
            .field("workers", &self.workers)
            .field("queue_len", &self.inner.queue.len())
            .finish_non_exhaustive()
    }
}

impl DeploymentController {
    /// Registers the Deployment (add/update/delete), ReplicaSet (add/update/delete) and Pod
    /// (delete only) handlers on the factory's informers and creates the `deployment` queue
    /// (default controller rate limiter). Must be called within a tokio runtime (the event
    /// broadcaster task is spawned here).
    pub fn new(
        client: kube::Client,
        factory: &InformerFactory,
        config: DeploymentControllerConfig,
    ) -> Result<Self, InformerError> {
        let d_informer = factory.informer::<Deployment>();
        let rs_informer = factory.informer::<ReplicaSet>();
        let pod_informer = factory.informer::<PodView>();
        let broadcaster = EventBroadcaster::start_with_queue(
            KubeEventSink::new(client.clone()),
            EventCorrelator::default(),
            kcm_controller::event_recorder::MAX_QUEUED_EVENTS,
            config.clock.clone(),
        );
        let recorder = broadcaster.new_recorder(EVENT_COMPONENT, None);
        let queue = RateLimitingQueue::builder()
            .name(QUEUE_NAME)
            .rate_limiter(default_controller_rate_limiter())
            .build();
        let cache = d_informer.clone();
        let own_writes = Arc::new(ConsistencyStore::new(vec![(
            DEPLOYMENTS,
            Arc::new(move || cache.store_resource_version()),
        )]));
        let inner = Arc::new(Inner {
            client: client.clone(),
            d_lister: d_informer.lister(),
            rs_lister: rs_informer.lister(),
            pod_lister: pod_informer.lister(),
            queue,
            recorder,
            rs_control: Arc::new(KubeReplicaSetControl::new(client)),
            clock: config.clock.clone(),
            features: config.features,
            own_writes,
        });
        let registrations = vec![
            d_informer.add_event_handler(handlers::deployment_handler(inner.clone()))?,
            rs_informer.add_event_handler(handlers::replica_set_handler(inner.clone()))?,
            pod_informer.add_event_handler(handlers::pod_handler(inner.clone()))?,
        ];
        Ok(Self {
            inner,
            registrations,
            broadcaster,
            workers: config.workers,
        })
    }

    /// Whether the three informers synced and their initial lists reached the handlers.
    pub fn has_synced(&self) -> bool {
        self.registrations
            .iter()
            .all(HandlerRegistration::has_synced)
    }

    /// The `deployment` work queue (for metrics and tests).
    pub fn queue(&self) -> &RateLimitingQueue<String> {
        &self.inner.queue
    }

    /// One `syncDeployment` of `key` (`namespace/name`) outside the worker pool.
    pub async fn sync(&self, key: &str) -> Result<(), SyncError> {
        super::sync_deployment::sync_deployment(&self.inner, key).await
    }

    /// Waits for the caches, runs the workers until `cancel` fires, then shuts the queue
    /// down, waits for in-flight syncs and flushes the event broadcaster. Returns at once
    /// (after the flush) if the token is cancelled before the caches synced.
    pub async fn run(self, cancel: CancellationToken) {
        tracing::info!(controller = QUEUE_NAME, "Starting controller");
        let synced = {
            let regs = &self.registrations;
            let check = || regs.iter().all(HandlerRegistration::has_synced);
            wait_for_named_cache_sync(QUEUE_NAME, &[&check], None, &cancel).await
        };
        if synced {
            let pool = WorkerPool::new(
                self.inner.queue.clone(),
                self.workers,
                retry_policy_with_slow_retry(self.inner.clone()),
            );
            let inner = self.inner.clone();
            let token = cancel.clone();
            pool.run(
                move |key: String| {
                    let inner = inner.clone();
                    async move { super::sync_deployment::sync_deployment(&inner, &key).await }
                },
                async move { token.cancelled().await },
            )
            .await;
        }
        tracing::info!(controller = QUEUE_NAME, "Shutting down controller");
        self.inner.queue.shutdown();
        self.broadcaster.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use kcm_controller::ControlError;
    use kcm_controller::error::NAMESPACE_TERMINATING_CAUSE;
    use kcm_controller::worker::process_item;
    use kcm_workqueue::ItemExponentialFailureRateLimiter;

    use super::*;

    /// Runs a key whose sync always fails with `err()` until the queue lets go of it;
    /// returns how many times it was synced.
    async fn attempts(err: impl Fn() -> SyncError) -> usize {
        let queue: RateLimitingQueue<String> = RateLimitingQueue::builder()
            .name(QUEUE_NAME)
            .rate_limiter(ItemExponentialFailureRateLimiter::new(
                Duration::ZERO,
                Duration::ZERO,
            ))
            .build();
        let calls = AtomicUsize::new(0);
        let policy = retry_policy();
        queue.add("default/web".to_string());
        for _ in 0..100 {
            let key = tokio::select! {
                k = queue.get() => k,
                () = tokio::time::sleep(Duration::from_millis(200)) => None,
            };
            let Some(key) = key else { break };
            let sync = |_k: String| {
                calls.fetch_add(1, Ordering::SeqCst);
                let e = err();
                async move { Err::<(), SyncError>(e) }
            };
            process_item(&queue, &policy, &sync, key).await;
        }
        calls.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn failing_key_is_dropped_after_15_retries() {
        let n = attempts(|| SyncError::Other("boom".into())).await;
        assert_eq!(n, 1 + DEPLOYMENT_MAX_RETRIES);
    }

    #[tokio::test]
    async fn namespace_terminating_errors_are_not_retried() {
        let n = attempts(|| {
            SyncError::Control(
                ControlError::api(403, "Forbidden", "namespace default is being terminated")
                    .with_cause(NAMESPACE_TERMINATING_CAUSE),
            )
        })
        .await;
        assert_eq!(n, 1);
    }
}
