//! [`Simulation::start`] and the running [`SimHandle`]: which components run, node failures,
//! shutdown. The components share one kcm-informer [`InformerFactory`]: one informer per kind
//! (pods, nodes, namespaces, CustomResourceDefinitions), as kube-controller-manager's controllers
//! share theirs.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcm_informer::{BackoffConfig, InformerFactory, InformerOptions, ReflectorConfig};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::config::SimConfig;
use super::error::SimError;
use super::{gc, kubelet, namespace, node_control, nodes, scheduler};
use crate::env::{TestEnv, TestEnvConfig};

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
        let reflector = reflector_config();
        let factory = InformerFactory::new(
            client.clone(),
            InformerOptions::default().reflector(reflector.clone()),
        );
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
                factory.informer::<Pod>(),
                token.clone(),
            )));
            tasks.push(tokio::spawn(node_control::run(
                client.clone(),
                nodes.clone(),
                factory.informer::<Node>(),
                token.clone(),
            )));
        }
        if config.scheduler {
            tasks.push(tokio::spawn(scheduler::run(
                client.clone(),
                config.clone(),
                nodes.clone(),
                factory.informer::<Pod>(),
                factory.informer::<Node>(),
                token.clone(),
            )));
        }
        if config.gc {
            tasks.push(tokio::spawn(gc::run(
                client.clone(),
                factory.informer::<CustomResourceDefinition>(),
                reflector.clone(),
                config.events,
                token.clone(),
            )));
        }
        if config.namespace_controller {
            tasks.push(tokio::spawn(namespace::run(
                client.clone(),
                factory.informer::<Namespace>(),
                config.max_grace,
                token.clone(),
            )));
        }
        factory.start(&token);
        Ok(SimHandle {
            client,
            scheduler: config.scheduler,
            nodes,
            factory,
            token,
            tasks,
        })
    }
}

/// The reflectors of the simulation back off from 20 ms up to 2 s between failed attempts
/// (client-go: 800 ms up to 30 s), so that a test's injected faults heal quickly.
fn reflector_config() -> ReflectorConfig {
    ReflectorConfig::default().backoff(BackoffConfig {
        initial: Duration::from_millis(20),
        cap: Duration::from_secs(2),
        ..BackoffConfig::default()
    })
}

impl Simulation {
    /// Start a test API server and a simulation against it. The server's built-in namespace
    /// cleanup is turned off when the simulated namespace controller runs, so namespaces are
    /// emptied as upstream does it (pods terminating gracefully, finalizers honoured).
    pub async fn start_with_env(
        env_config: TestEnvConfig,
        config: SimConfig,
    ) -> Result<(TestEnv, SimHandle), SimError> {
        let env = TestEnv::start(TestEnvConfig {
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
    factory: InformerFactory,
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
        self.factory.shutdown().await;
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.token.cancel();
    }
}
