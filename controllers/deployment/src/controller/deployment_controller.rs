//! `DeploymentController` (upstream `NewDeploymentController` / `Run`): informers, handlers,
//! the `deployment` work queue and the worker pool.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_controller::PodView;
use kcm_controller::event_correlator::EventCorrelator;
use kcm_controller::event_recorder::{EventBroadcaster, KubeEventSink, MAX_QUEUED_EVENTS};
use kcm_controller::owner_index::{CONTROLLER_UID_INDEX, controller_uid_index_fn, ensure_index};
use kcm_controller::worker::{DEPLOYMENT_MAX_RETRIES, RetryPolicy, WorkerPool};
use kcm_informer::{
    CancellationToken, HandlerRegistration, InformerError, InformerFactory, ObjectKey,
    wait_for_named_cache_sync,
};
use kcm_workqueue::RateLimitingQueue;

use crate::config::{DeploymentControllerConfig, QUEUE_NAME};
use crate::events::EVENT_COMPONENT;

use super::SyncError;
use super::context::Context;
use super::handlers::{DeploymentHandler, PodHandler, ReplicaSetHandler};
use super::slow_retry::on_dropped_key;
use super::sync_deployment::sync_deployment;

/// Upstream `handleErr`: success and NamespaceTerminating errors are forgotten; other errors
/// are requeued with backoff while the key has fewer than 15 requeues, then dropped.
pub(crate) fn retry_policy() -> RetryPolicy<ObjectKey, SyncError> {
    RetryPolicy::max_retries(DEPLOYMENT_MAX_RETRIES)
        .forget_if(SyncError::is_namespace_terminating)
        .fenced_if(SyncError::is_fenced)
}

/// [`retry_policy`] plus kcm's slow retry of dropped keys whose Deployment is not complete.
fn retry_policy_with_slow_retry(ctx: Arc<Context>) -> RetryPolicy<ObjectKey, SyncError> {
    retry_policy().on_drop(move |key, err| on_dropped_key(&ctx, key, err))
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
    ctx: Arc<Context>,
    registrations: Vec<HandlerRegistration>,
    broadcaster: EventBroadcaster,
    workers: usize,
    namespace_gate: Option<kcm_controller::NamespaceGate>,
}

impl fmt::Debug for DeploymentController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeploymentController")
            .field("workers", &self.workers)
            .field("queue_len", &self.ctx.queue.len())
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
        // Shared with the ReplicaSet controller: whichever is built first registers them.
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
        let broadcaster = EventBroadcaster::start_with_queue(
            KubeEventSink::new(client.clone()),
            EventCorrelator::default(),
            MAX_QUEUED_EVENTS,
            config.clock.clone(),
        );
        let recorder = broadcaster.new_recorder(EVENT_COMPONENT, None);
        let ctx = Arc::new(Context::new(
            client,
            &d_informer,
            &rs_informer,
            &pod_informer,
            recorder,
            &config,
        ));
        let registrations = vec![
            d_informer.add_event_handler(DeploymentHandler(ctx.clone()))?,
            rs_informer.add_event_handler(ReplicaSetHandler(ctx.clone()))?,
            pod_informer.add_event_handler(PodHandler(ctx.clone()))?,
        ];
        Ok(Self {
            ctx,
            registrations,
            broadcaster,
            workers: config.workers,
            namespace_gate: config.namespace_gate.clone(),
        })
    }

    /// Whether the three informers synced and their initial lists reached the handlers.
    pub fn has_synced(&self) -> bool {
        self.registrations
            .iter()
            .all(HandlerRegistration::has_synced)
    }

    /// The `deployment` work queue (for metrics and tests).
    pub fn queue(&self) -> &RateLimitingQueue<ObjectKey> {
        &self.ctx.queue
    }

    /// One `syncDeployment` of `key` outside the worker pool.
    pub async fn sync(&self, key: &ObjectKey) -> Result<(), SyncError> {
        sync_deployment(&self.ctx, key).await
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
                self.ctx.queue.clone(),
                self.workers,
                retry_policy_with_slow_retry(self.ctx.clone()),
            );
            let pool = match self.namespace_gate.clone() {
                Some(gate) => pool.gate(move |key: &ObjectKey| gate.allows(&key.namespace)),
                None => pool,
            };
            let ctx = self.ctx.clone();
            let token = cancel.clone();
            pool.run(
                move |key: &ObjectKey| {
                    let ctx = ctx.clone();
                    Box::pin(async move { sync_deployment(&ctx, key).await })
                },
                async move { token.cancelled().await },
            )
            .await;
        }
        tracing::info!(controller = QUEUE_NAME, "Shutting down controller");
        self.ctx.queue.shutdown();
        self.broadcaster.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use futures::future::BoxFuture;
    use kcm_controller::ControlError;
    use kcm_controller::error::NAMESPACE_TERMINATING_CAUSE;
    use kcm_controller::worker::process_item;
    use kcm_workqueue::ItemExponentialFailureRateLimiter;

    use super::*;

    /// Gives a sync closure bound to a variable the signature the worker expects.
    fn sync_fn<F>(f: F) -> F
    where
        F: Fn(&ObjectKey) -> BoxFuture<'_, Result<(), SyncError>>,
    {
        f
    }

    /// Runs a key whose sync always fails with `err()` until the queue lets go of it;
    /// returns how many times it was synced.
    async fn attempts(err: impl Fn() -> SyncError) -> usize {
        let queue: RateLimitingQueue<ObjectKey> = RateLimitingQueue::builder()
            .name(QUEUE_NAME)
            .rate_limiter(ItemExponentialFailureRateLimiter::new(
                Duration::ZERO,
                Duration::ZERO,
            ))
            .build();
        let calls = AtomicUsize::new(0);
        let policy = retry_policy();
        queue.add(ObjectKey::new("default", "web"));
        for _ in 0..100 {
            let key = tokio::select! {
                k = queue.get() => k,
                () = tokio::time::sleep(Duration::from_millis(200)) => None,
            };
            let Some(key) = key else { break };
            let sync = sync_fn(|_k| {
                calls.fetch_add(1, Ordering::SeqCst);
                let e = err();
                Box::pin(async move { Err(e) })
            });
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
