//! `kcm-testenv --listen 127.0.0.1:0 --kubeconfig-out FILE [--watch-window N] [--nodes N]
//! [--pod-ready-after D] [--max-grace D] [--no-kubelet] [--no-gc] [--no-sim] [--faults SPEC]
//! [--seed N]`
//!
//! Starts the test API server and the cluster simulation (nodes, scheduler, kubelets, garbage
//! collector, namespace controller), writes a kubeconfig (context `kcm-testenv`, no auth),
//! prints `kcm-testenv ready: http://127.0.0.1:PORT kubeconfig=FILE`, and runs until SIGINT or
//! SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use kcm_testenv::TestEnvConfig;
use kcm_testenv::faults::FaultArgs;
use kcm_testenv::sim::{SimArgs, Simulation};

/// Embedded Kubernetes test cluster: an API server plus simulated nodes, scheduler, kubelets,
/// garbage collector and namespace controller.
#[derive(Debug, Parser)]
#[command(name = "kcm-testenv", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Where to write the kubeconfig.
    #[arg(long)]
    kubeconfig_out: PathBuf,
    /// Number of change events kept for watches (older resumes get 410).
    #[arg(long, default_value_t = 20_000)]
    watch_window: usize,
    #[command(flatten)]
    sim: SimArgs,
    #[command(flatten)]
    faults: FaultArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let env_config = TestEnvConfig {
        listen: args.listen,
        watch_window: args.watch_window,
        kubeconfig_path: Some(args.kubeconfig_out.clone()),
        ..TestEnvConfig::default()
    };
    let (env, sim) = match args.sim.config() {
        Some(sim_config) => {
            let (env, sim) = Simulation::start_with_env(env_config, sim_config).await?;
            (env, Some(sim))
        }
        None => (kcm_testenv::TestEnv::start(env_config).await?, None),
    };
    let shutdown = tokio_util::sync::CancellationToken::new();
    let faults = args
        .faults
        .injector()
        .map(|injector| injector.attach(env.server().clone(), shutdown.clone()));
    println!(
        "kcm-testenv ready: {} kubeconfig={}",
        env.url(),
        args.kubeconfig_out.display()
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    shutdown.cancel();
    if let Some(task) = faults {
        let _ = task.await;
    }
    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    env.shutdown().await;
    Ok(())
}
