//! The rest of a cluster, simulated against the test API server through its own HTTP API: nodes with
//! heartbeats, a scheduler, kubelets, the garbage collector and the namespace controller.
//!
//! Every component talks to the server the way the real one talks to kube-apiserver: list + watch
//! through a [`kube::Client`] (surviving 410 Gone and dropped connections), then writes — bindings,
//! `/status` patches, deletes with preconditions, finalizer patches — each with its own
//! resourceVersion, so controllers under test see the same intermediate states as in a real cluster.
//!
//! Pods can ask for special behaviour through annotations (see [`annotations`]), so a Deployment's
//! template can produce slow, never-ready, crash-looping, failing or unschedulable pods.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use kcm_testenv::sim::{SimConfig, Simulation};
//! use std::time::Duration;
//!
//! let config = SimConfig { nodes: 2, pod_ready_after: Duration::from_millis(50), ..SimConfig::default() };
//! let sim = Simulation::start(client, config).await?;
//! // ... create pods: they get bound to node-1 / node-2 and become Ready 50 ms later ...
//! sim.set_node_ready("node-1", false).await?; // node-1 NotReady, its pods lose Ready
//! sim.shutdown().await;
//! # Ok(()) }
//! ```

pub mod annotations;
mod clock;
mod config;
mod events;
mod gc;
mod gc_graph;
mod gc_queue;
mod informer;
mod kinds;
mod kubelet;
mod namespace;
pub mod node_control;
mod nodes;
mod pod_status;
mod scheduler;

use std::sync::Arc;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use annotations::PodBehaviour;
pub use config::{SimArgs, SimConfig};
pub use nodes::{NODE_LEASE_NAMESPACE, UNREACHABLE_TAINT};
pub use scheduler::DEFAULT_SCHEDULER;

/// Errors of the simulation's own API calls.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// An API request failed.
    #[error("{context}: {source}")]
    Api {
        /// What the simulation was doing.
        context: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The node is not one of the simulated nodes.
    #[error("unknown simulated node {0:?}")]
    UnknownNode(String),
    /// A simulation bug (an object that could not be built).
    #[error("internal simulation error: {0}")]
    Internal(String),
    /// The test API server did not start.
    #[error("starting the test API server: {0}")]
    Env(#[from] crate::TestEnvError),
}

impl SimError {
    pub(crate) fn api(context: impl Into<String>, source: kube::Error) -> Self {
        SimError::Api {
            context: context.into(),
            source,
        }
    }
}

/// Entry point: [`Simulation::start`].
#[derive(Debug)]
pub struct Simulation;

impl Simulation {
    /// Register the nodes (waiting until they exist), then start the enabled components in the
    /// background. They run until [`SimHandle::shutdown`] or until the handle is dropped.
    pub async fn start(client: kube::Client, config: SimConfig) -> Result<SimHandle, SimError> {
        let config = Arc::new(config);
        let nodes = Arc::new(nodes::NodeSet::new(config.nodes));
        let token = CancellationToken::new();
        let mut tasks = Vec::new();
        if config.kubelet {
            nodes::register(&client, &nodes).await?;
            for node in nodes.all() {
                tasks.push(tokio::spawn(nodes::heartbeat(
                    client.clone(),
                    node.clone(),
                    config.heartbeat_interval,
                    token.clone(),
                )));
            }
            tasks.push(tokio::spawn(kubelet::run(
                client.clone(),
                nodes.clone(),
                config.clone(),
                token.clone(),
            )));
            tasks.push(tokio::spawn(node_control::run(
                client.clone(),
                nodes.clone(),
                token.clone(),
            )));
        }
        if config.scheduler {
            tasks.push(tokio::spawn(scheduler::run(
                client.clone(),
                config.clone(),
                nodes.clone(),
                token.clone(),
            )));
        }
        if config.gc {
            tasks.push(tokio::spawn(gc::run(client.clone(), token.clone())));
        }
        if config.namespace_controller {
            tasks.push(tokio::spawn(namespace::run(client.clone(), token.clone())));
        }
        Ok(SimHandle {
            client,
            scheduler: config.scheduler,
            nodes,
            token,
            tasks,
        })
    }
}

impl Simulation {
    /// Start a test API server and a simulation against it. The server's built-in namespace
    /// cleanup is turned off when the simulated namespace controller runs, so namespaces are
    /// emptied as upstream does it (pods terminating gracefully, finalizers honoured).
    pub async fn start_with_env(
        env_config: crate::TestEnvConfig,
        config: SimConfig,
    ) -> Result<(crate::TestEnv, SimHandle), SimError> {
        let env = crate::TestEnv::start(crate::TestEnvConfig {
            namespace_cleanup: env_config.namespace_cleanup && !config.namespace_controller,
            ..env_config
        })
        .await?;
        let sim = Simulation::start(env.client(), config).await?;
        Ok((env, sim))
    }
}

/// A running simulation. Dropping it stops the components (without waiting for them).
pub struct SimHandle {
    client: kube::Client,
    nodes: Arc<nodes::NodeSet>,
    scheduler: bool,
    token: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for SimHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimHandle")
            .field("nodes", &self.node_names())
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

impl SimHandle {
    /// Names of the simulated nodes.
    pub fn node_names(&self) -> Vec<String> {
        self.nodes.all().iter().map(|n| n.name.clone()).collect()
    }

    /// Whether a node is currently up (as set by [`SimHandle::set_node_ready`]).
    pub fn node_ready(&self, name: &str) -> Option<bool> {
        self.nodes.get(name).map(|n| n.is_ready())
    }

    /// Take a node down (`false`) or bring it back (`true`).
    ///
    /// Down: its kubelet stops (no heartbeats, pod status and deletions frozen), its conditions become
    /// `Unknown` with reason `NodeStatusUnknown`, it gets the `node.kubernetes.io/unreachable`
    /// NoSchedule and NoExecute taints, and its pods' `Ready` condition becomes `False` (as upstream's
    /// `MarkPodsNotReady`). Up: conditions Ready again, taints removed, the kubelet reposts every pod's
    /// status. Returns once these writes are done and the scheduler has seen them.
    pub async fn set_node_ready(&self, name: &str, ready: bool) -> Result<(), SimError> {
        let node = self
            .nodes
            .get(name)
            .ok_or_else(|| SimError::UnknownNode(name.to_string()))?;
        let rv = nodes::set_ready(&self.client, node, ready).await?;
        if self.scheduler {
            // Return once the scheduler has seen the change, so that pods created next are
            // scheduled with it (bounded, in case the scheduler cannot watch).
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                self.nodes.scheduler_caught_up(rv),
            )
            .await;
        }
        Ok(())
    }

    /// Stop every component and wait for them.
    pub async fn shutdown(mut self) {
        self.token.cancel();
        for t in self.tasks.drain(..) {
            let _ = t.await;
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.token.cancel();
    }
}
