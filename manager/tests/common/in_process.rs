//! kcm run in-process, as `main` runs it (`app::run`), against a test cluster.

use std::path::Path;

use kcm_manager::app::{self, Controller, Exit};
use kcm_manager::metrics::Metrics;
use kcm_manager::options::Options;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Starts `app::run` with `options` and `controllers` on a task of its own, its clients (100 QPS,
/// burst 100) talking to the cluster of `kubeconfig`; returns the token that stops it and the
/// task.
pub async fn spawn(
    options: Options,
    kubeconfig: &Path,
    controllers: Vec<Controller>,
) -> (CancellationToken, JoinHandle<anyhow::Result<Exit>>) {
    let config = kcm_manager::client::load_config(Some(kubeconfig), None)
        .await
        .expect("kubeconfig");
    let metrics = Metrics::new();
    let clients =
        kcm_manager::client::ClientFactory::new(config.config, 100.0, 100, metrics.clone())
            .expect("clients");
    let stop = CancellationToken::new();
    let run = tokio::spawn({
        let stop = stop.clone();
        async move { app::run(&options, clients, metrics, controllers, stop).await }
    });
    (stop, run)
}
