//! `kcm`: kube-controller-manager's Deployment and ReplicaSet controllers, in Rust.

use std::process::ExitCode;

use clap::Parser;
use kcm::app::{self, Exit};
use kcm::options::Options;

/// The controllers compiled into this binary. The Deployment and ReplicaSet controllers are
/// added here as their crates become runnable (see README.md, Status).
fn controllers() -> Vec<app::Controller> {
    Vec::new()
}

fn main() -> ExitCode {
    let options = Options::parse();
    if let Err(e) = options.validate() {
        eprintln!("kcm: {e}");
        return ExitCode::from(2);
    }
    kcm::logging::init(options.verbosity, &options.logging_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kcm: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let result = async {
            let config =
                kcm::client::load_config(options.kubeconfig.as_deref(), options.master.as_deref())
                    .await?;
            let limiter = kcm::client::rate_limiter(options.kube_api_qps, options.kube_api_burst)?;
            let client = kcm::client::build_client(config, limiter)?;
            let stop = tokio_util::sync::CancellationToken::new();
            let signal_stop = stop.clone();
            tokio::spawn(async move {
                app::shutdown_signal().await;
                signal_stop.cancel();
            });
            app::run(&options, client, controllers(), stop).await
        }
        .await;
        match result {
            Ok(Exit::Stopped) => ExitCode::SUCCESS,
            Ok(Exit::LeaderElectionLost) => ExitCode::FAILURE,
            Err(e) => {
                tracing::error!(error = format!("{e:#}"), "kcm failed");
                eprintln!("kcm: {e:#}");
                ExitCode::FAILURE
            }
        }
    })
}
