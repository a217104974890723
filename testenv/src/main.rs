//! `kcm-testenv --listen 127.0.0.1:0 --kubeconfig-out FILE [--watch-window N]`
//!
//! Starts the test API server, writes a kubeconfig (context `kcm-testenv`, no auth), prints
//! `kcm-testenv ready: http://127.0.0.1:PORT kubeconfig=FILE`, and runs until SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use kcm_testenv::{TestEnv, TestEnvConfig};

/// Embedded Kubernetes API server for tests.
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
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let env = TestEnv::start(TestEnvConfig {
        listen: args.listen,
        watch_window: args.watch_window,
        kubeconfig_path: Some(args.kubeconfig_out.clone()),
        ..TestEnvConfig::default()
    })
    .await?;
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
    env.shutdown().await;
    Ok(())
}
