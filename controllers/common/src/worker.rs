//! The controller worker loop (upstream `worker` / `processNextWorkItem` /
//! `handleErr` of the ReplicaSet and Deployment controllers): `N` tasks take keys
//! from a [`RateLimitingQueue`], run the sync, then `forget` on success or
//! requeue with backoff on failure, and always mark the key `done`.
//!
//! Retry policy:
//! * ReplicaSet: [`RetryPolicy::unlimited`], a failing key is retried forever
//!   (per-key exponential backoff capped by the queue's rate limiter);
//! * Deployment: [`RetryPolicy::max_retries(15)`](RetryPolicy::max_retries), after
//!   15 requeues the key is dropped (forgotten) until the next event; errors the
//!   policy's `forget_if` accepts (upstream: NamespaceTerminating) are forgotten
//!   at once.
//!
//! A sync that failed because the leader's write fence refused one of its writes (the policy's
//! [`fenced_if`](RetryPolicy::fenced_if) says which errors those are) is neither a failure
//! nor a success: the key is requeued after [`FENCED_REQUEUE_DELAY`] without touching its
//! backoff or retry count, and the sync is reported as [`SyncOutcome::Fenced`].
//!
//! Every sync is timed and reported to the observer installed with
//! [`set_sync_observer`](crate::sync_metrics::set_sync_observer), under the queue's name.
//!
//! Shutdown is graceful: once the shutdown future completes, workers stop
//! taking keys, the queue is shut down, and [`WorkerPool::run`] returns after
//! every in-flight sync has finished.

use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use futures::future::BoxFuture;
use kcm_workqueue::RateLimitingQueue;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::sync_metrics::{self, SyncOutcome};

/// Upstream Deployment controller's `maxRetries`.
pub const DEPLOYMENT_MAX_RETRIES: usize = 15;

/// How long a key whose sync was stopped by the write fence waits before it is synced again:
/// by then the elector has renewed the lease (the fence is open again) or leadership is lost
/// and the controllers are stopping.
pub const FENCED_REQUEUE_DELAY: std::time::Duration = std::time::Duration::from_secs(1);

/// A predicate over sync errors.
type ErrorFilter<E> = Arc<dyn Fn(&E) -> bool + Send + Sync>;

/// Called with the key and its last error when a key is dropped after the maximum retries.
type DropHandler<K, E> = Arc<dyn Fn(&K, &E) + Send + Sync>;

/// The key a [`WorkerPool`] hands to its sync: anything the work queue can hold that logs as
/// text (the controllers use [`kcm_store::ObjectKey`], displayed `namespace/name`).
pub trait WorkKey: Hash + Eq + Clone + fmt::Display + Send + Sync + 'static {}
impl<K: Hash + Eq + Clone + fmt::Display + Send + Sync + 'static> WorkKey for K {}

/// What to do with a key of type `K` whose sync failed with an `E`.
pub struct RetryPolicy<K, E> {
    max_retries: Option<usize>,
    forget_if: Option<ErrorFilter<E>>,
    fenced_if: Option<ErrorFilter<E>>,
    requeue_if: Option<ErrorFilter<E>>,
    on_drop: Option<DropHandler<K, E>>,
}

impl<K, E> Clone for RetryPolicy<K, E> {
    fn clone(&self) -> Self {
        Self {
            max_retries: self.max_retries,
            forget_if: self.forget_if.clone(),
            fenced_if: self.fenced_if.clone(),
            requeue_if: self.requeue_if.clone(),
            on_drop: self.on_drop.clone(),
        }
    }
}

impl<K, E> fmt::Debug for RetryPolicy<K, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_retries", &self.max_retries)
            .field("forget_if", &self.forget_if.is_some())
            .field("fenced_if", &self.fenced_if.is_some())
            .field("requeue_if", &self.requeue_if.is_some())
            .field("on_drop", &self.on_drop.is_some())
            .finish()
    }
}

impl<K, E> RetryPolicy<K, E> {
    /// Requeue with rate limiting forever (ReplicaSet controller).
    pub fn unlimited() -> Self {
        Self {
            max_retries: None,
            forget_if: None,
            fenced_if: None,
            requeue_if: None,
            on_drop: None,
        }
    }

    /// Requeue while the key has fewer than `n` requeues, then drop it
    /// (Deployment controller: 15).
    pub fn max_retries(n: usize) -> Self {
        Self {
            max_retries: Some(n),
            forget_if: None,
            fenced_if: None,
            requeue_if: None,
            on_drop: None,
        }
    }

    /// Errors for which `f` returns true are treated like success (forgotten, not requeued).
    pub fn forget_if(mut self, f: impl Fn(&E) -> bool + Send + Sync + 'static) -> Self {
        self.forget_if = Some(Arc::new(f));
        self
    }

    /// Errors for which `f` returns true were refused by the leader's write fence
    /// (`kcm_leaderelection::is_fenced` on the error's chain): the key is requeued after
    /// [`FENCED_REQUEUE_DELAY`], not counted as a failure.
    pub fn fenced_if(mut self, f: impl Fn(&E) -> bool + Send + Sync + 'static) -> Self {
        self.fenced_if = Some(Arc::new(f));
        self
    }

    /// Errors for which `f` returns true are a sync's request to run again later, not a
    /// failure: the key is requeued through the queue's rate limiter (its per-key backoff grows
    /// as for a failure, up to the retry limit) and the sync is reported as a success, logged
    /// at debug level only (a builder controller's `Action::requeue_rate_limited`).
    pub fn requeue_if(mut self, f: impl Fn(&E) -> bool + Send + Sync + 'static) -> Self {
        self.requeue_if = Some(Arc::new(f));
        self
    }

    /// Calls `f` with the key and its last error instead of logging the drop at error level
    /// when a key runs out of retries; the key is still forgotten as upstream does. `f` may
    /// log and schedule a later retry itself (the Deployment controller's slow retry).
    pub fn on_drop(mut self, f: impl Fn(&K, &E) + Send + Sync + 'static) -> Self {
        self.on_drop = Some(Arc::new(f));
        self
    }
}

/// Runs a controller's workers over a shared queue of keys.
///
/// The sync borrows the key (the queue still owns it for `forget` and `done`) and returns a
/// boxed future.
///
/// ```
/// use kcm_controller::worker::{RetryPolicy, WorkerPool};
/// use kcm_store::ObjectKey;
/// use kcm_workqueue::RateLimitingQueue;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue: RateLimitingQueue<ObjectKey> = RateLimitingQueue::builder().name("replicaset").build();
/// queue.add(ObjectKey::new("default", "web"));
/// let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
/// let pool = WorkerPool::new(queue.clone(), 5, RetryPolicy::unlimited());
/// let run = tokio::spawn(pool.run(
///     |key: &ObjectKey| {
///         let key = key.to_string();
///         Box::pin(async move {
///             println!("syncing {key}");
///             Ok::<(), String>(())
///         })
///     },
///     async move { let _ = stop_rx.await; },
/// ));
/// stop_tx.send(()).unwrap();
/// run.await.unwrap();
/// # }
/// ```
pub struct WorkerPool<K: WorkKey, E> {
    queue: RateLimitingQueue<K>,
    workers: usize,
    policy: RetryPolicy<K, E>,
    gate: Option<KeyGate<K>>,
}

/// Which keys may be synced now.
type KeyGate<K> = Arc<dyn Fn(&K) -> bool + Send + Sync>;

impl<K: WorkKey, E> fmt::Debug for WorkerPool<K, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerPool")
            .field("queue", &self.queue)
            .field("workers", &self.workers)
            .field("policy", &self.policy)
            .field("gated", &self.gate.is_some())
            .finish()
    }
}

impl<K: WorkKey, E: fmt::Display + Send + 'static> WorkerPool<K, E> {
    /// `workers` tasks over `queue` (at least one).
    pub fn new(queue: RateLimitingQueue<K>, workers: usize, policy: RetryPolicy<K, E>) -> Self {
        Self {
            queue,
            workers: workers.max(1),
            policy,
            gate: None,
        }
    }

    /// Syncs only the keys `allows` accepts: a worker drops any other key it takes (forgets
    /// its backoff, marks it done) without syncing it. A sharded controller gates by the
    /// namespaces it owns ([`NamespaceGate`](crate::NamespaceGate)); whoever opens the gate
    /// for more keys later must enqueue them again.
    #[must_use]
    pub fn gate(mut self, allows: impl Fn(&K) -> bool + Send + Sync + 'static) -> Self {
        self.gate = Some(Arc::new(allows));
        self
    }

    /// Runs until `shutdown` completes (or the queue is shut down and empty),
    /// then waits for in-flight syncs and returns.
    pub async fn run<F>(self, sync: F, shutdown: impl Future<Output = ()> + Send)
    where
        F: Fn(&K) -> BoxFuture<'_, Result<(), E>> + Send + Sync + 'static,
    {
        let sync = Arc::new(sync);
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut set = JoinSet::new();
        for _ in 0..self.workers {
            let queue = self.queue.clone();
            let sync = sync.clone();
            let policy = self.policy.clone();
            let mut stop = stop_rx.clone();
            let gate = self.gate.clone();
            set.spawn(async move {
                loop {
                    let key = tokio::select! {
                        biased;
                        _ = stop.wait_for(|s| *s) => break,
                        key = queue.get() => key,
                    };
                    let Some(key) = key else { break };
                    if let Some(gate) = &gate
                        && !gate(&key)
                    {
                        tracing::trace!(key = %key, "not in this controller's shard: dropped");
                        queue.forget(&key);
                        queue.done(&key);
                        continue;
                    }
                    process_item(&queue, &policy, sync.as_ref(), key).await;
                }
            });
        }
        let queue = self.queue.clone();
        let all_done = async { while set.join_next().await.is_some() {} };
        tokio::pin!(all_done);
        tokio::select! {
            _ = shutdown => {
                let _ = stop_tx.send(true);
                queue.shutdown();
                all_done.await;
            }
            _ = &mut all_done => {}
        }
    }
}

/// One `processNextWorkItem` after the key was taken: sync, forget or requeue, done.
pub async fn process_item<K, E, F>(
    queue: &RateLimitingQueue<K>,
    policy: &RetryPolicy<K, E>,
    sync: &F,
    key: K,
) where
    K: WorkKey,
    E: fmt::Display,
    F: Fn(&K) -> BoxFuture<'_, Result<(), E>>,
{
    let started = Instant::now();
    let result = AssertUnwindSafe(sync(&key)).catch_unwind().await;
    let outcome = match &result {
        Ok(Ok(())) => SyncOutcome::Success,
        Ok(Err(err)) if policy.fenced_if.as_ref().is_some_and(|f| f(err)) => SyncOutcome::Fenced,
        Ok(Err(err)) if policy.requeue_if.as_ref().is_some_and(|f| f(err)) => SyncOutcome::Success,
        Ok(Err(_)) => SyncOutcome::Error,
        Err(_) => SyncOutcome::Panic,
    };
    sync_metrics::observe(queue.queue().name(), started.elapsed(), outcome);
    match result {
        Ok(Ok(())) => queue.forget(&key),
        Ok(Err(err)) if outcome == SyncOutcome::Fenced => {
            tracing::info!(key = %key, error = %err, "sync stopped at the write fence; requeueing");
            queue.add_after(key.clone(), FENCED_REQUEUE_DELAY);
        }
        Ok(Err(err)) if outcome == SyncOutcome::Success => {
            tracing::debug!(key = %key, reason = %err, "requeueing with the rate limiter");
            requeue_or_drop(queue, policy, &key, &err);
        }
        Ok(Err(err)) => handle_err(queue, policy, &key, &err),
        Err(_) => {
            tracing::error!(key = %key, "sync panicked; requeueing with backoff");
            queue.add_rate_limited(key.clone());
        }
    }
    queue.done(&key);
}

fn handle_err<K: WorkKey, E: fmt::Display>(
    queue: &RateLimitingQueue<K>,
    policy: &RetryPolicy<K, E>,
    key: &K,
    err: &E,
) {
    if policy.forget_if.as_ref().is_some_and(|f| f(err)) {
        queue.forget(key);
        return;
    }
    match policy.max_retries {
        None => tracing::error!(key = %key, error = %err, "sync \"{key}\" failed with {err}"),
        Some(max) if queue.num_requeues(key) < max => {
            tracing::info!(key = %key, error = %err, "error syncing; requeueing");
        }
        Some(_) => {}
    }
    requeue_or_drop(queue, policy, key, err);
}

/// Requeues `key` through the rate limiter while the policy allows, else forgets it (and calls
/// the policy's drop handler).
fn requeue_or_drop<K: WorkKey, E: fmt::Display>(
    queue: &RateLimitingQueue<K>,
    policy: &RetryPolicy<K, E>,
    key: &K,
    err: &E,
) {
    match policy.max_retries {
        Some(max) if queue.num_requeues(key) >= max => {
            queue.forget(key);
            match &policy.on_drop {
                Some(f) => f(key, err),
                None => tracing::error!(key = %key, error = %err, "dropping key out of the queue"),
            }
        }
        _ => queue.add_rate_limited(key.clone()),
    }
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
