//! `sample-controller`: the Foo controller, optionally with kcm's Deployment and ReplicaSet
//! controllers, against the cluster of a kubeconfig; `sample-controller crd` prints the CRD.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kcm_sample_controller::{FooControllerConfig, RunOptions};
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio_util::sync::CancellationToken;

/// A Foo custom resource that owns a Deployment, on kcm-rs.
#[derive(Debug, Parser)]
#[command(name = "sample-controller", version)]
struct Args {
    /// Path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    #[arg(long, global = true)]
    kubeconfig: Option<PathBuf>,
    /// Concurrent Foo syncs.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Also run kcm's Deployment and ReplicaSet controllers (for clusters without
    /// kube-controller-manager's, such as kcm-testenv).
    #[arg(long)]
    with_builtin_controllers: bool,
    /// Manage only the objects of this namespace (default: all namespaces).
    #[arg(long)]
    namespace: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the Foo CustomResourceDefinition as YAML (`| kubectl apply -f -`).
    Crd,
}

async fn client(kubeconfig: Option<&PathBuf>) -> anyhow::Result<kube::Client> {
    let config = match kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?
        }
        None => kube::Config::infer().await?,
    };
    tracing::info!(server = %config.cluster_url, "using the API server");
    Ok(kube::Client::try_from(config)?)
}

/// Resolves on the first SIGTERM or SIGINT.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

async fn run(args: Args) -> anyhow::Result<()> {
    let client = client(args.kubeconfig.as_ref()).await?;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("signal received: stopping");
        stop.cancel();
    });
    let options = RunOptions {
        foo: FooControllerConfig {
            workers: args.workers,
            ..FooControllerConfig::default()
        },
        with_builtin_controllers: args.with_builtin_controllers,
        namespace: args.namespace,
    };
    kcm_sample_controller::run(client, options, cancel).await?;
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(Command::Crd) = args.command {
        return match kcm_sample_controller::crd_yaml() {
            Ok(yaml) => {
                print!("{yaml}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("sample-controller: {e}");
                ExitCode::FAILURE
            }
        };
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("sample-controller: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = format!("{e:#}"), "sample-controller failed");
            ExitCode::FAILURE
        }
    }
}
