//! A tiny controller for the manager's tests (the manager depends on no real controller): it
//! queues every Namespace it sees in a work queue named `namespace` and syncs a key by reading
//! that Namespace through its own client, with kcm-controller's worker pool, so the process's
//! work-queue, client and sync metrics all move.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use kcm_controller::worker::{RetryPolicy, WorkerPool};
use kcm_informer::{EventHandlerFns, ObjectKey};
use kcm_manager::Controller;
use kcm_workqueue::RateLimitingQueue;
use kube::api::Api;

/// The controller, under the name `namespace-reader` (alias `nsreader`).
pub fn namespace_reader() -> Controller {
    Controller::new("namespace-reader", |ctx| {
        let queue: RateLimitingQueue<ObjectKey> =
            RateLimitingQueue::builder().name("namespace").build();
        let q = queue.clone();
        ctx.factory
            .informer::<Namespace>()
            .add_event_handler(
                EventHandlerFns::new().on_add(move |ns: &Arc<Namespace>, _| {
                    q.add(ObjectKey::from_meta(&ns.metadata));
                }),
            )?;
        let namespaces: Api<Namespace> = Api::all(ctx.client.clone());
        Ok(
            move |cancel: tokio_util::sync::CancellationToken| async move {
                let pool = WorkerPool::new(queue, 1, RetryPolicy::unlimited());
                pool.run(
                    move |key: &ObjectKey| {
                        let (namespaces, name) = (namespaces.clone(), key.name.clone());
                        Box::pin(async move { namespaces.get_opt(&name).await.map(|_| ()) })
                    },
                    cancel.cancelled_owned(),
                )
                .await;
            },
        )
    })
    .alias("nsreader")
}
