//! A manager run in-process, as `main` runs it (`Manager::run`), against a test cluster.

use std::path::Path;

use kcm_manager::{Exit, Manager, NoFlags};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Parses `args` (after the program name) for `manager` and runs it on a task of its own, its
/// clients (100 QPS, burst 100) talking to the cluster of `kubeconfig`; returns the token that
/// stops it and the task.
pub async fn spawn(
    manager: Manager,
    args: &[&str],
    kubeconfig: &Path,
) -> (CancellationToken, JoinHandle<anyhow::Result<Exit>>) {
    let kubeconfig_arg = format!("--kubeconfig={}", kubeconfig.display());
    let argv = [
        "test-manager",
        "--kube-api-qps=100",
        "--kube-api-burst=100",
        &kubeconfig_arg,
    ]
    .into_iter()
    .chain(args.iter().copied());
    let (parsed, NoFlags {}) = manager.parse_args(argv).expect("flags");
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig"),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("config");
    let stop = CancellationToken::new();
    let run = tokio::spawn({
        let stop = stop.clone();
        async move { manager.run(&parsed.options, config, stop).await }
    });
    (stop, run)
}
