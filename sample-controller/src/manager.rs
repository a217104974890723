//! The process around the controllers: one informer factory, the Foo controller and, with
//! [`RunOptions::with_builtin_controllers`], kcm's Deployment and ReplicaSet controllers in the
//! same process, all stopped together.
//!
//! A small stand-in for the controller-manager library kcm-rs is growing (leader election,
//! metrics and health serving are not here).

use futures::future::join_all;
use kcm_deployment::{DeploymentController, DeploymentControllerConfig};
use kcm_informer::{InformerError, InformerFactory, InformerOptions};
use kcm_replicaset::{ReplicaSetController, ReplicaSetControllerConfig};
use tokio_util::sync::CancellationToken;

use crate::controller::{FooController, FooControllerConfig};

/// What [`run`] runs.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The Foo controller's settings.
    pub foo: FooControllerConfig,
    /// Also run the Deployment and ReplicaSet controllers (for clusters without
    /// kube-controller-manager's, such as kcm-testenv).
    pub with_builtin_controllers: bool,
    /// Watch and manage only this namespace (`None`: all namespaces).
    pub namespace: Option<String>,
}

/// Runs the controllers with `client` until `cancel` fires, then waits until every controller
/// finished its in-flight work and the informers stopped.
///
/// ```no_run
/// use kcm_sample_controller::{RunOptions, run};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn example() -> anyhow::Result<()> {
/// let client = kube::Client::try_default().await?;
/// let cancel = CancellationToken::new();
/// let options = RunOptions { with_builtin_controllers: true, ..RunOptions::default() };
/// let controllers = tokio::spawn(run(client, options, cancel.clone()));
/// // ... on SIGTERM:
/// cancel.cancel();
/// controllers.await??;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// When a controller cannot register its informer handlers.
pub async fn run(
    client: kube::Client,
    options: RunOptions,
    cancel: CancellationToken,
) -> Result<(), InformerError> {
    let informers = InformerOptions {
        namespace: options.namespace,
        ..InformerOptions::default()
    };
    let factory = InformerFactory::new(client.clone(), informers);
    let mut runs = Vec::new();
    let foo = FooController::new(client.clone(), &factory, options.foo)?;
    runs.push(tokio::spawn(foo.run(cancel.clone())));
    if options.with_builtin_controllers {
        let deployments = DeploymentController::new(
            client.clone(),
            &factory,
            DeploymentControllerConfig::default(),
        )?;
        let replica_sets =
            ReplicaSetController::new(client, &factory, ReplicaSetControllerConfig::default())?;
        runs.push(tokio::spawn(deployments.run(cancel.clone())));
        runs.push(tokio::spawn(replica_sets.run(cancel.clone())));
    }
    // After every controller asked for its informers: they all share these.
    factory.start(&cancel);
    for result in join_all(runs).await {
        if let Err(e) = result {
            tracing::error!(error = %e, "a controller task failed");
        }
    }
    factory.shutdown().await;
    Ok(())
}
