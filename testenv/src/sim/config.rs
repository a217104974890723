//! [`SimConfig`]: what the simulated cluster looks like and how fast it moves.

use std::time::Duration;

use kcm_util::go_duration::parse_go_duration;

/// Configuration of a [`Simulation`](super::simulation::Simulation).
///
/// The defaults are tuned for tests: a 3-node cluster whose pods become Ready 200 ms after they are
/// bound and whose graceful deletions take at most 2 s.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Number of nodes, named `node-1` … `node-N`.
    pub nodes: usize,
    /// Delay between binding and Ready, unless a pod's `sim.kcm-rs.io/ready-after` says otherwise.
    pub pod_ready_after: Duration,
    /// Cap on graceful deletion: a pod deleted with a grace of G seconds goes after `min(G, max_grace)`.
    pub max_grace: Duration,
    /// Run the scheduler (binds pods to nodes).
    pub scheduler: bool,
    /// Run the kubelets (pod status, graceful deletion, node heartbeats).
    pub kubelet: bool,
    /// Run the garbage collector.
    pub gc: bool,
    /// Run the namespace controller (empties and finalizes terminating namespaces).
    pub namespace_controller: bool,
    /// Write the Events the real scheduler and kubelet write (`Scheduled`, `FailedScheduling`,
    /// `Pulled`, `Created`, `Started`, `BackOff`, `Killing`). Off by default, so that tests counting
    /// their controllers' events see only those.
    pub events: bool,
    /// Period of node Lease renewals in `kube-node-lease` (upstream: 10 s).
    pub heartbeat_interval: Duration,
    /// First back-off of a crash-looping container (upstream: 10 s); it doubles on every restart.
    pub crash_loop_backoff: Duration,
    /// Longest back-off of a crash-looping container (upstream: 5 min).
    pub crash_loop_max_backoff: Duration,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nodes: 3,
            pod_ready_after: Duration::from_millis(200),
            max_grace: Duration::from_secs(2),
            scheduler: true,
            kubelet: true,
            gc: true,
            namespace_controller: true,
            events: false,
            heartbeat_interval: Duration::from_secs(10),
            crash_loop_backoff: Duration::from_secs(1),
            crash_loop_max_backoff: Duration::from_secs(10),
        }
    }
}

impl SimConfig {
    /// The name of node `i` (1-based).
    pub fn node_name(i: usize) -> String {
        format!("node-{i}")
    }
}

/// Command-line flags for the simulation, to `#[command(flatten)]` into a binary's arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// Do not run the cluster simulation (nodes, scheduler, kubelet, GC, namespace controller).
    #[arg(long)]
    pub no_sim: bool,
    /// Number of simulated nodes.
    #[arg(long, default_value_t = 3)]
    pub nodes: usize,
    /// Delay from binding to Ready (Go duration).
    #[arg(long, default_value = "200ms", value_parser = parse_go_duration)]
    pub pod_ready_after: Duration,
    /// Cap on pod graceful deletion (Go duration).
    #[arg(long, default_value = "2s", value_parser = parse_go_duration)]
    pub max_grace: Duration,
    /// Do not run the simulated scheduler.
    #[arg(long)]
    pub no_scheduler: bool,
    /// Do not run the simulated kubelets (no nodes either).
    #[arg(long)]
    pub no_kubelet: bool,
    /// Do not run the garbage collector.
    #[arg(long)]
    pub no_gc: bool,
    /// Do not run the namespace controller.
    #[arg(long)]
    pub no_namespace_controller: bool,
    /// Write scheduler and kubelet Events.
    #[arg(long)]
    pub sim_events: bool,
}

impl SimArgs {
    /// The configuration, or None with `--no-sim`.
    pub fn config(&self) -> Option<SimConfig> {
        (!self.no_sim).then(|| SimConfig {
            nodes: self.nodes,
            pod_ready_after: self.pod_ready_after,
            max_grace: self.max_grace,
            scheduler: !self.no_scheduler,
            kubelet: !self.no_kubelet,
            gc: !self.no_gc,
            namespace_controller: !self.no_namespace_controller,
            events: self.sim_events,
            ..SimConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    #[test]
    fn flags() {
        let cli = Cli::parse_from(["x"]);
        assert_eq!(cli.sim.config(), Some(SimConfig::default()));
        let cli = Cli::parse_from(["x", "--nodes", "5", "--pod-ready-after", "1s", "--no-gc"]);
        let c = cli.sim.config().expect("config");
        assert_eq!(
            (c.nodes, c.pod_ready_after, c.gc),
            (5, Duration::from_secs(1), false)
        );
        assert!(Cli::parse_from(["x", "--no-sim"]).sim.config().is_none());
        assert!(Cli::try_parse_from(["x", "--max-grace", "soon"]).is_err());
    }
}
