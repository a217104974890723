//! `kcm-testenv --listen 127.0.0.1:0 --kubeconfig-out FILE [--watch-window N] [--nodes N]
//! [--pod-ready-after D] [--max-grace D] [--no-kubelet] [--no-gc] [--no-sim] [--faults SPEC]
//! [--seed N]`
//!
//! Starts the test API server and the cluster simulation (nodes, scheduler, kubelets, garbage
//! collector, namespace controller), writes a kubeconfig (context `kcm-testenv`, no auth),
//! prints `kcm-testenv ready: http://127.0.0.1:PORT kubeconfig=FILE`, and runs until SIGINT or
//! SIGTERM.
//!
//! `kcm-testenv sim --kubeconfig FILE [--nodes N] [--pod-ready-after D] [--no-gc]
//! [--no-namespace-controller] ...`
//!
//! Runs only the simulation, as an ordinary API client of any API server (kube-apiserver
//! included, as kwok does): registers the nodes, prints `kcm-testenv sim ready: nodes=N
//! server=URL`, and runs until SIGINT or SIGTERM. Against a cluster whose
//! kube-controller-manager runs the garbage collector and the namespace controller, pass
//! `--no-gc --no-namespace-controller`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use kcm_testenv::faults::FaultArgs;
use kcm_testenv::sim::{SimArgs, Simulation};
use kcm_testenv::{TestCluster, TestEnvConfig};

/// Embedded Kubernetes test cluster: an API server plus simulated nodes, scheduler, kubelets,
/// garbage collector and namespace controller.
#[derive(Debug, Parser)]
#[command(name = "kcm-testenv", version, args_conflicts_with_subcommands = true)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Where to write the kubeconfig.
    #[arg(long, required = true)]
    kubeconfig_out: Option<PathBuf>,
    /// Number of change events kept for watches (older resumes get 410).
    #[arg(long, default_value_t = 20_000)]
    watch_window: usize,
    /// Append every answered write to this file as kube-apiserver's audit log does (JSON
    /// lines, audit.k8s.io/v1 Events at stage ResponseComplete).
    #[arg(long)]
    audit_log_path: Option<PathBuf>,
    /// Do not give namespaces their `default` ServiceAccount and `kube-root-ca.crt` ConfigMap
    /// (a real kube-controller-manager running against this server makes them).
    #[arg(long)]
    no_namespace_defaults: bool,
    #[command(flatten)]
    sim: SimArgs,
    #[command(flatten)]
    faults: FaultArgs,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Run only the node, scheduler and kubelet simulation against an existing API server.
    Sim(SimCommand),
}

#[derive(Debug, clap::Args)]
struct SimCommand {
    /// Kubeconfig of the API server to simulate nodes for (its current context).
    #[arg(long)]
    kubeconfig: PathBuf,
    #[command(flatten)]
    sim: SimArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    if let Some(Command::Sim(sim)) = args.command {
        return run_sim(sim).await;
    }
    let Some(kubeconfig_out) = args.kubeconfig_out else {
        anyhow::bail!("--kubeconfig-out is required");
    };
    let env_config = TestEnvConfig {
        listen: args.listen,
        watch_window: args.watch_window,
        kubeconfig_path: Some(kubeconfig_out.clone()),
        audit_log_path: args.audit_log_path,
        namespace_defaults: !args.no_namespace_defaults,
        ..TestEnvConfig::default()
    };
    let mut cluster = TestCluster::builder().env_config(env_config);
    if let Some(sim_config) = args.sim.config() {
        cluster = cluster.simulation(sim_config);
    }
    if let Some(injector) = args.faults.injector() {
        cluster = cluster.faults(injector);
    }
    let cluster = cluster.start().await?;
    println!(
        "kcm-testenv ready: {} kubeconfig={}",
        cluster.env().url(),
        kubeconfig_out.display()
    );
    wait_for_signal().await?;
    cluster.shutdown().await;
    Ok(())
}

/// `kcm-testenv sim`: the simulation alone, against the API server of a kubeconfig.
async fn run_sim(cmd: SimCommand) -> anyhow::Result<()> {
    let Some(config) = cmd.sim.config() else {
        anyhow::bail!("`kcm-testenv sim --no-sim` has nothing to run");
    };
    let kubeconfig = kube::config::Kubeconfig::read_from(&cmd.kubeconfig)
        .map_err(|e| anyhow::anyhow!("reading kubeconfig {}: {e}", cmd.kubeconfig.display()))?;
    let client_config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .map_err(|e| anyhow::anyhow!("kubeconfig {}: {e}", cmd.kubeconfig.display()))?;
    let server = client_config.cluster_url.to_string();
    let client = kube::Client::try_from(client_config)
        .map_err(|e| anyhow::anyhow!("building a client for {server}: {e}"))?;
    let nodes = config.nodes;
    let sim = Simulation::start(client, config)
        .await
        .map_err(|e| anyhow::anyhow!("starting the simulation against {server}: {e}"))?;
    println!("kcm-testenv sim ready: nodes={nodes} server={server}");
    tracing::info!(%server, nodes, "simulation running");
    wait_for_signal().await?;
    sim.shutdown().await;
    Ok(())
}

async fn wait_for_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    Ok(())
}
