//! [`SimConfig`]: what the simulated cluster looks like and how fast it moves.

use std::time::Duration;

use kcm_util::go_duration::parse_go_duration;

/// The images upstream's e2e tests use to make a rollout stall, none of which any registry has:
/// `webserver:404` (the Deployment proportional-scaling test, `test/e2e/apps/deployment.go`),
/// `gcr.io/google_samples/gb-redisslave:nonexistent` (rollover), `foo:non-existent` (DaemonSet
/// rolling update, `test/e2e/apps/daemon_set.go`), `localhost/some-image-that-doesnt-exist`
/// (`test/e2e/node/pods.go`) and anything from `invalid.registry.k8s.io` (`InvalidRegistryImage`
/// of `test/utils/image/manifest.go`), as patterns for [`SimConfig::missing_images`].
pub const DEFAULT_MISSING_IMAGES: &[&str] = &[
    "*:404",
    "*:nonexistent",
    "*:non-existent",
    "*doesnt-exist*",
    "invalid.registry.k8s.io/*",
];

/// [`DEFAULT_MISSING_IMAGES`], owned.
pub(crate) fn default_missing_images() -> Vec<String> {
    DEFAULT_MISSING_IMAGES
        .iter()
        .map(|s| s.to_string())
        .collect()
}

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
    /// Write the Events the real scheduler, kubelet and garbage collector write (`Scheduled`,
    /// `FailedScheduling`, `Pulling`, `Pulled`, `Failed`, `Created`, `Started`, `BackOff`,
    /// `Killing`, `OwnerRefInvalidNamespace`). Off by default, so that tests counting their
    /// controllers' events see only those.
    pub events: bool,
    /// Period of node Lease renewals in `kube-node-lease` (upstream: 10 s).
    pub heartbeat_interval: Duration,
    /// First back-off of a crash-looping container (upstream: 10 s); it doubles on every restart.
    pub crash_loop_backoff: Duration,
    /// Longest back-off of a crash-looping container (upstream: 5 min).
    pub crash_loop_max_backoff: Duration,
    /// Images the kubelets cannot pull: patterns over the image as the pod spec writes it, `*`
    /// matching any run of characters. Such a container waits with `ErrImagePull`, then
    /// `ImagePullBackOff`, and its pod stays Pending and never Ready. Default: upstream e2e's
    /// convention, [`DEFAULT_MISSING_IMAGES`].
    pub missing_images: Vec<String>,
    /// First image pull back-off (upstream: 10 s); it doubles after every failed pull.
    pub image_pull_backoff: Duration,
    /// Longest image pull back-off (upstream: 5 min).
    pub image_pull_max_backoff: Duration,
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
            missing_images: default_missing_images(),
            image_pull_backoff: Duration::from_secs(1),
            image_pull_max_backoff: Duration::from_secs(10),
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
    /// Write scheduler, kubelet and garbage collector Events.
    #[arg(long)]
    pub sim_events: bool,
    /// Images the simulated kubelets cannot pull, comma-separated patterns (`*` matches any
    /// run of characters); `--missing-images=` for none.
    #[arg(long, value_delimiter = ',', default_values_t = default_missing_images())]
    pub missing_images: Vec<String>,
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
            missing_images: self
                .missing_images
                .iter()
                .filter(|p| !p.is_empty())
                .cloned()
                .collect(),
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
        let c = Cli::parse_from(["x", "--missing-images", "*:broken,bad/*"])
            .sim
            .config();
        assert_eq!(
            c.map(|c| c.missing_images),
            Some(vec!["*:broken".to_string(), "bad/*".to_string()])
        );
        let none = Cli::parse_from(["x", "--missing-images="]).sim.config();
        assert_eq!(none.map(|c| c.missing_images), Some(Vec::new()));
        assert!(Cli::try_parse_from(["x", "--max-grace", "soon"]).is_err());
    }
}
