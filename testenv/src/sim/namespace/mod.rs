//! The namespace controller (upstream `pkg/controller/namespace/namespace_controller.go`): every
//! namespace with a deletionTimestamp goes on a kcm-workqueue rate-limited queue; workers empty
//! it ([`deleter`]), requeue it after the estimated time while content remains, and finalize it
//! when nothing is left.
//!
//! Two departures from upstream, both for a simulation's time scale: upstream waits 5 s before
//! acting on a namespace event (`namespaceDeletionGracePeriod`, for caches to catch up); here a
//! terminating namespace is processed at once. And the wait while content remains (upstream:
//! half the estimate plus one second — 16 s for pods with the default grace period, 8 s for
//! content held by finalizers) is capped at [`SimConfig::max_grace`](super::SimConfig::max_grace),
//! as the simulated kubelet caps graceful deletion.

mod conditions;
mod deleter;

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kcm_informer::{EventHandlerFns, SharedIndexInformer};
use kcm_workqueue::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, RateLimitingQueue,
};
use tokio_util::sync::CancellationToken;

use deleter::DeleteError;

/// Workers (upstream `--concurrent-namespace-syncs`: 10).
const WORKERS: usize = 10;
/// Upstream `--namespace-sync-period`: every namespace is looked at again this often.
const RESYNC_PERIOD: Duration = Duration::from_secs(300);

/// Run the namespace controller until `token` is cancelled. `max_grace` caps graceful deletion
/// and the waits while content remains.
pub(crate) async fn run(
    client: kube::Client,
    namespaces: SharedIndexInformer<Namespace>,
    max_grace: Duration,
    token: CancellationToken,
) {
    // Upstream `nsControllerRateLimiter`: 5 ms doubling to 60 s per namespace, 10 qps overall.
    let queue: RateLimitingQueue<String> = RateLimitingQueue::builder()
        .name("namespace")
        .rate_limiter(MaxOfRateLimiter::new(vec![
            Box::new(ItemExponentialFailureRateLimiter::new(
                Duration::from_millis(5),
                Duration::from_secs(60),
            )),
            Box::new(BucketRateLimiter::new(10.0, 100)),
        ]))
        .build();
    let enqueue = {
        let queue = queue.clone();
        move |ns: &Namespace| {
            if ns.metadata.deletion_timestamp.is_some()
                && let Some(name) = &ns.metadata.name
            {
                queue.add(name.clone());
            }
        }
    };
    let on_update = enqueue.clone();
    let registration = namespaces.add_event_handler_with_resync_period(
        EventHandlerFns::new()
            .on_add(move |ns: &std::sync::Arc<Namespace>, _| enqueue(ns))
            .on_update(move |_, ns: &std::sync::Arc<Namespace>| on_update(ns)),
        RESYNC_PERIOD,
    );
    if let Err(e) = registration {
        tracing::warn!(error = %e, "sim ns: the namespace controller cannot follow namespaces");
        return;
    }
    if !namespaces.wait_for_cache_sync(None, &token).await {
        return;
    }
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let (client, queue, namespaces) = (client.clone(), queue.clone(), namespaces.clone());
        workers.push(tokio::spawn(async move {
            while let Some(name) = queue.get().await {
                if namespaces.store().get_by_name("", &name).is_none() {
                    tracing::debug!(namespace = %name, "sim ns: namespace has been deleted");
                    queue.forget(&name);
                } else {
                    match deleter::delete(&client, &name, max_grace).await {
                        Ok(()) => queue.forget(&name),
                        Err(DeleteError::ResourcesRemaining(estimate)) => {
                            let wait = Duration::from_secs(estimate / 2 + 1).min(max_grace);
                            tracing::debug!(namespace = %name, ?wait, "sim ns: content remaining in namespace");
                            queue.add_after(name.clone(), wait);
                        }
                        Err(e) => {
                            tracing::debug!(namespace = %name, error = %e, "sim ns: deletion of namespace failed");
                            queue.add_rate_limited(name.clone());
                        }
                    }
                }
                queue.done(&name);
            }
        }));
    }
    token.cancelled().await;
    queue.shutdown();
    for w in workers {
        let _ = w.await;
    }
}
