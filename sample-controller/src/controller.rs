//! The Foo controller on kcm-controller's builder (upstream's `NewController`, `Run`,
//! `enqueueFoo`, `handleObject`): a Foo's changes and those of the Deployments it controls
//! bring it to [`reconcile`](crate::sync::reconcile); the builder brings the shared caches,
//! the rate-limited queue, the workers, the event recorder, the namespace gate and the write
//! fence's requeue.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kcm_controller::builder::{Builder, Reconciler};

use crate::foo::Foo;
use crate::sync::reconcile;

/// The controller's name: its events' source component, its work queue's name and its field
/// manager.
pub const CONTROLLER_NAME: &str = "sample-controller";

/// Settings of the Foo controller.
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
/// use kcm_controller::builder::Env;
/// use kcm_informer::{InformerFactory, InformerOptions};
/// use kcm_sample_controller::{FooControllerConfig, foo_reconciler};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn example() -> anyhow::Result<()> {
/// let client = kube::Client::try_default().await?;
/// let factory = InformerFactory::new(client.clone(), InformerOptions::default());
/// let run = foo_reconciler(FooControllerConfig::default()).start(Env::new(client, factory.clone()))?;
/// let cancel = CancellationToken::new();
/// factory.start(&cancel); // after every controller asked for its informers
/// let run = tokio::spawn(run(cancel.clone()));
/// // ... on SIGTERM:
/// cancel.cancel();
/// run.await?;
/// factory.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub fn foo_reconciler(config: FooControllerConfig) -> Reconciler {
    let builder = Builder::<Foo>::new(CONTROLLER_NAME)
        .owns::<Deployment>()
        .workers(config.workers);
    match config.cache_sync_timeout {
        Some(timeout) => builder.cache_sync_timeout(timeout),
        None => builder,
    }
    .run(reconcile)
}
