//! A built controller starting and running: its informers and handlers registered on the
//! shared factory, its queue, its event broadcaster, then — once every cache it reads has
//! synced — its workers, as kcm's own controllers run (`WorkerPool` with the namespace gate,
//! the write fence's requeue and client-go's rate-limited retries).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use kcm_informer::{HasSynced, InformerError, InformerFactory, InformerObject, Lister, ObjectKey};
use kcm_workqueue::RateLimitingQueue;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::action::{Action, BoxError, is_fenced};
use super::context::{Context, Listers};
use crate::NamespaceGate;
use crate::clock::real_clock;
use crate::event_correlator::{CorrelatorOptions, EventCorrelator};
use crate::event_recorder::{EventBroadcaster, KubeEventSink};
use crate::worker::{RetryPolicy, WorkerPool};

/// What a controller is started with: under a manager, the controller's own client, the
/// process's informer factory (started by the caller once every controller was started) and,
/// when sharded, the namespaces it may sync now.
#[derive(Clone)]
pub struct Env {
    client: kube::Client,
    factory: InformerFactory,
    namespace_gate: Option<NamespaceGate>,
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Env")
            .field("factory", &self.factory)
            .field("namespace_gate", &self.namespace_gate)
            .finish_non_exhaustive()
    }
}

impl Env {
    /// A client and the informer factory whose informers the controller shares.
    pub fn new(client: kube::Client, factory: InformerFactory) -> Self {
        Env {
            client,
            factory,
            namespace_gate: None,
        }
    }

    /// Syncs only the keys of the namespaces `gate` allows (a sharded manager's active shard).
    #[must_use]
    pub fn namespace_gate(mut self, gate: Option<NamespaceGate>) -> Self {
        self.namespace_gate = gate;
        self
    }
}

/// A started controller's run: it returns once `cancel` fired and in-flight reconciles and
/// queued events finished.
pub type Run = Box<dyn FnOnce(CancellationToken) -> BoxFuture<'static, ()> + Send>;

/// One cache a controller waits for, by its informer's name.
pub(crate) type Synced = (String, Arc<dyn HasSynced>);

/// What a builder's `owns` and `watches` registered, given the shared parts.
pub(crate) struct Registrar<'a, K: InformerObject> {
    pub(crate) factory: &'a InformerFactory,
    pub(crate) queue: &'a RateLimitingQueue<ObjectKey>,
    pub(crate) own: &'a Lister<K>,
    pub(crate) listers: &'a mut Listers,
    pub(crate) synced: &'a mut Vec<Synced>,
}

impl<K: InformerObject> Registrar<'_, K> {
    /// Records `informer`'s lister for the context and its sync for the start.
    pub(crate) fn add<C: InformerObject>(
        &mut self,
        informer: kcm_informer::SharedIndexInformer<C>,
    ) {
        self.listers
            .insert(std::any::TypeId::of::<C>(), Box::new(informer.lister()));
        self.synced
            .push((informer.name().to_string(), Arc::new(informer)));
    }
}

/// A registration of an `owns` or `watches`.
pub(crate) type Registration<K> =
    Box<dyn for<'a> FnOnce(&mut Registrar<'a, K>) -> Result<(), InformerError> + Send>;

/// The settings a builder hands to [`start`].
pub(crate) struct Settings<K: InformerObject> {
    pub(crate) name: &'static str,
    pub(crate) workers: usize,
    pub(crate) cache_sync_timeout: Option<Duration>,
    pub(crate) registrations: Vec<Registration<K>>,
}

/// Why a reconcile did not end in `Ok`: an error, or a requested rate-limited requeue.
enum Outcome {
    Requeue,
    Failed(BoxError),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Requeue => f.write_str("the reconcile asked for a rate-limited requeue"),
            Outcome::Failed(e) => {
                write!(f, "{e}")?;
                let mut source = e.source();
                while let Some(s) = source {
                    write!(f, ": {s}")?;
                    source = s.source();
                }
                Ok(())
            }
        }
    }
}

/// Registers the controller's informers and handlers on `env`'s factory and returns its run.
pub(crate) fn start<K, F, Fut, E>(
    settings: Settings<K>,
    reconcile: F,
    env: Env,
) -> Result<Run, InformerError>
where
    K: InformerObject,
    F: Fn(Arc<K>, Arc<Context>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    let Settings {
        name,
        workers,
        cache_sync_timeout,
        registrations,
    } = settings;
    let queue: RateLimitingQueue<ObjectKey> = RateLimitingQueue::builder().name(name).build();
    let informer = env.factory.informer::<K>();
    informer.add_event_handler(super::triggers::OwnHandler(queue.clone()))?;
    let own = informer.lister();
    let mut listers = Listers::new();
    let mut synced = Vec::new();
    let mut registrar = Registrar {
        factory: &env.factory,
        queue: &queue,
        own: &own,
        listers: &mut listers,
        synced: &mut synced,
    };
    registrar.add(informer);
    for register in registrations {
        register(&mut registrar)?;
    }
    let broadcaster = EventBroadcaster::start(
        KubeEventSink::new(env.client.clone()),
        EventCorrelator::new(CorrelatorOptions::default(), real_clock()),
    );
    let recorder = broadcaster.new_recorder(name, None);
    let ctx = Arc::new(Context::new(name, env.client, recorder, listers));
    let reconcile = Arc::new(reconcile);
    let gate = env.namespace_gate;
    Ok(Box::new(move |cancel: CancellationToken| {
        Box::pin(async move {
            tracing::info!(controller = name, "Starting controller");
            if wait_for_caches(name, &synced, cache_sync_timeout, &cancel).await {
                let policy = RetryPolicy::unlimited()
                    .fenced_if(|o: &Outcome| matches!(o, Outcome::Failed(e) if is_fenced(e)))
                    .requeue_if(|o: &Outcome| matches!(o, Outcome::Requeue));
                let pool = WorkerPool::new(queue.clone(), workers, policy);
                let pool = match gate {
                    Some(gate) => pool.gate(move |key: &ObjectKey| gate.allows(&key.namespace)),
                    None => pool,
                };
                let sync = sync_fn(move |key| {
                    let (own, ctx, reconcile, queue) =
                        (own.clone(), ctx.clone(), reconcile.clone(), queue.clone());
                    Box::pin(async move {
                        let Some(obj) = own.get(&key.namespace, &key.name) else {
                            tracing::debug!(controller = name, key = %key, "object no longer exists");
                            return Ok(());
                        };
                        match reconcile(obj, ctx).await {
                            Ok(Action::Done) => Ok(()),
                            Ok(Action::RequeueAfter(after)) => {
                                queue.add_after(key.clone(), after);
                                Ok(())
                            }
                            Ok(Action::RequeueRateLimited) => Err(Outcome::Requeue),
                            Err(e) => Err(Outcome::Failed(e.into())),
                        }
                    })
                });
                pool.run(sync, cancel.clone().cancelled_owned()).await;
            } else {
                queue.shutdown();
            }
            tracing::info!(controller = name, "Shutting down controller");
            broadcaster.shutdown().await;
        })
    }))
}

/// Gives a sync closure the signature the worker pool expects (the future borrows the key).
fn sync_fn<F>(f: F) -> F
where
    F: for<'k> Fn(&'k ObjectKey) -> BoxFuture<'k, Result<(), Outcome>>,
{
    f
}

/// How long a controller waits for its caches before it names those still syncing, and then
/// how often.
const SLOW_SYNC_REPORT: Duration = Duration::from_secs(15);

/// Waits until every cache synced (true), or the timeout passed or `cancel` fired (false);
/// the informers still syncing are named every [`SLOW_SYNC_REPORT`], and on a timeout.
async fn wait_for_caches(
    name: &str,
    synced: &[Synced],
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> bool {
    tracing::info!(controller = name, "Waiting for caches to sync for {name}");
    let started = Instant::now();
    let mut next_report = started + SLOW_SYNC_REPORT;
    let waiting = || -> Vec<&str> {
        synced
            .iter()
            .filter(|(_, s)| !s.has_synced())
            .map(|(n, _)| n.as_str())
            .collect()
    };
    loop {
        let pending = waiting();
        if pending.is_empty() {
            tracing::info!(controller = name, "Caches are synced for {name}");
            return true;
        }
        if cancel.is_cancelled() {
            return false;
        }
        let now = Instant::now();
        if timeout.is_some_and(|t| now >= started + t) {
            tracing::error!(controller = name, informers = %pending.join(", "),
                "unable to sync caches for {name}: gave up after {:?} waiting for {}",
                now - started, pending.join(", "));
            return false;
        }
        if now >= next_report {
            tracing::warn!(controller = name, informers = %pending.join(", "),
                "{name} still waits for the caches of {} after {:?} (see the informers' warnings: a resource the server does not serve, or may not be listed)",
                pending.join(", "), now - started);
            next_report = now + SLOW_SYNC_REPORT;
        }
        tokio::select! {
            () = cancel.cancelled() => return false,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}
