//! The Foo controller's wiring (upstream's `NewController`, `Run`, `enqueueFoo`,
//! `handleObject`): informers and handlers, the work queue, the event broadcaster, the workers.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kcm_controller::clock::real_clock;
use kcm_controller::event_correlator::{CorrelatorOptions, EventCorrelator};
use kcm_controller::event_recorder::{EventBroadcaster, KubeEventSink};
use kcm_controller::worker::{RetryPolicy, WorkerPool};
use kcm_informer::{
    DeletedObject, EventHandlerFns, InformerError, InformerFactory, Lister, ObjectKey,
    wait_for_cache_sync,
};
use kcm_workqueue::RateLimitingQueue;
use tokio_util::sync::CancellationToken;

use crate::deployment::{controller_of, refers_to_foo};
use crate::foo::Foo;
use crate::sync::{SyncContext, sync_foo};

/// The controller's name: its events' source component and its work queue's name.
pub const CONTROLLER_NAME: &str = "sample-controller";

/// Settings of a [`FooController`].
#[derive(Debug, Clone)]
pub struct FooControllerConfig {
    /// Worker tasks (upstream's sample runs 2).
    pub workers: usize,
    /// Give up waiting for the caches after this long (`None`: wait until cancelled).
    pub cache_sync_timeout: Option<Duration>,
}

impl Default for FooControllerConfig {
    fn default() -> Self {
        Self {
            workers: 2,
            cache_sync_timeout: None,
        }
    }
}

/// The Foo controller: each Foo gets a Deployment it controls, with the Foo's replicas, and
/// the Deployment's available replicas in its status.
///
/// ```no_run
/// use kcm_informer::{InformerFactory, InformerOptions};
/// use kcm_sample_controller::{FooController, FooControllerConfig};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn example() -> anyhow::Result<()> {
/// let client = kube::Client::try_default().await?;
/// let factory = InformerFactory::new(client.clone(), InformerOptions::default());
/// let controller = FooController::new(client, &factory, FooControllerConfig::default())?;
/// let cancel = CancellationToken::new();
/// factory.start(&cancel); // after every controller asked for its informers
/// let run = tokio::spawn(controller.run(cancel.clone()));
/// // ... on SIGTERM:
/// cancel.cancel();
/// run.await?;
/// factory.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct FooController {
    ctx: Arc<SyncContext>,
    queue: RateLimitingQueue<ObjectKey>,
    broadcaster: EventBroadcaster,
    synced: Vec<Arc<dyn kcm_informer::HasSynced>>,
    config: FooControllerConfig,
}

impl fmt::Debug for FooController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FooController")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl FooController {
    /// Builds the controller over the shared `factory` (a Foo informer and a Deployment
    /// informer), registers its handlers and starts its event broadcaster. Call inside a
    /// tokio runtime; the caller starts the factory.
    ///
    /// # Errors
    ///
    /// When an informer it needs has already stopped.
    pub fn new(
        client: kube::Client,
        factory: &InformerFactory,
        config: FooControllerConfig,
    ) -> Result<Self, InformerError> {
        let broadcaster = EventBroadcaster::start(
            KubeEventSink::new(client.clone()),
            EventCorrelator::new(CorrelatorOptions::default(), real_clock()),
        );
        let recorder = broadcaster.new_recorder(CONTROLLER_NAME, None);
        let queue: RateLimitingQueue<ObjectKey> =
            RateLimitingQueue::builder().name(CONTROLLER_NAME).build();
        let foo_informer = factory.informer::<Foo>();
        let deployment_informer = factory.informer::<Deployment>();

        let q = queue.clone();
        let enqueue = move |foo: &Arc<Foo>| q.add(ObjectKey::from_meta(&foo.metadata));
        let on_update = enqueue.clone();
        foo_informer.add_event_handler(
            EventHandlerFns::new()
                .on_add(move |foo: &Arc<Foo>, _| enqueue(foo))
                .on_update(move |_, new: &Arc<Foo>| on_update(new)),
        )?;

        let foos = foo_informer.lister();
        let owner = Arc::new(OwnerEnqueuer {
            foos: foos.clone(),
            queue: queue.clone(),
        });
        let (on_add, on_update, on_delete) = (owner.clone(), owner.clone(), owner);
        deployment_informer.add_event_handler(
            EventHandlerFns::new()
                .on_add(move |d: &Arc<Deployment>, _| on_add.enqueue_owner(d))
                .on_update(move |old: &Arc<Deployment>, new: &Arc<Deployment>| {
                    // A resync delivers the same version again: nothing changed.
                    if old.metadata.resource_version != new.metadata.resource_version {
                        on_update.enqueue_owner(new);
                    }
                })
                .on_delete(move |d: DeletedObject<Deployment>| on_delete.enqueue_owner(d.object())),
        )?;

        let ctx = Arc::new(SyncContext {
            client,
            foos,
            deployments: deployment_informer.lister(),
            recorder,
        });
        let synced: Vec<Arc<dyn kcm_informer::HasSynced>> =
            vec![Arc::new(foo_informer), Arc::new(deployment_informer)];
        Ok(Self {
            ctx,
            queue,
            broadcaster,
            synced,
            config,
        })
    }

    /// The work queue of Foo keys.
    pub fn queue(&self) -> &RateLimitingQueue<ObjectKey> {
        &self.queue
    }

    /// Waits for the caches, runs the workers until `cancel` fires, then lets in-flight syncs
    /// finish and flushes the queued events.
    pub async fn run(self, cancel: CancellationToken) {
        tracing::info!(controller = CONTROLLER_NAME, "Starting Foo controller");
        let synced: Vec<&dyn kcm_informer::HasSynced> =
            self.synced.iter().map(|s| s.as_ref()).collect();
        let ok = wait_for_cache_sync(&synced, self.config.cache_sync_timeout, &cancel).await;
        if ok {
            tracing::info!(workers = self.config.workers, "Starting workers");
            let ctx = self.ctx.clone();
            let pool = WorkerPool::new(
                self.queue.clone(),
                self.config.workers,
                RetryPolicy::unlimited(),
            );
            pool.run(
                move |key: &ObjectKey| {
                    let ctx = ctx.clone();
                    Box::pin(async move { sync_foo(&ctx, key).await })
                },
                cancel.clone().cancelled_owned(),
            )
            .await;
        } else {
            tracing::error!("failed to wait for caches to sync");
            self.queue.shutdown();
        }
        tracing::info!("Shutting down workers");
        self.broadcaster.shutdown().await;
    }
}

/// Enqueues the Foo that controls a Deployment (upstream's `handleObject`).
struct OwnerEnqueuer {
    foos: Lister<Foo>,
    queue: RateLimitingQueue<ObjectKey>,
}

impl OwnerEnqueuer {
    fn enqueue_owner(&self, deployment: &Deployment) {
        let Some(owner) = controller_of(deployment).filter(|r| refers_to_foo(r)) else {
            return;
        };
        let ns = deployment.metadata.namespace.as_deref().unwrap_or_default();
        if self.foos.get(ns, &owner.name).is_none() {
            tracing::debug!(foo = %owner.name, namespace = ns, "ignoring orphaned Deployment of a Foo");
            return;
        }
        self.queue.add(ObjectKey::new(ns, owner.name.clone()));
    }
}
