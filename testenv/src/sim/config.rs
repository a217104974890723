//! [`SimConfig`]: what the simulated cluster looks like and how fast it moves.

use std::time::Duration;

/// Configuration of a [`Simulation`](super::Simulation).
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
