//! [`TestCluster`]: the test API server, and on request the simulated rest of a cluster and
//! fault injection, started together and stopped in the right order.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::env::{TestEnv, TestEnvConfig, TestEnvError};
use crate::faults::FaultInjector;
use crate::sim::{SimConfig, SimError, SimHandle, Simulation};

/// A test cluster: a [`TestEnv`], plus the [simulation](crate::sim) of nodes, scheduler,
/// kubelets, garbage collector and namespace controller when any of its settings is given, plus
/// a [`FaultInjector`] when one is given.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use kcm_testenv::TestCluster;
///
/// // The API server alone (like envtest):
/// let api_only = TestCluster::builder().start().await?;
/// assert!(api_only.sim().is_none());
/// api_only.shutdown().await;
///
/// // Three simulated nodes whose pods become Ready 50 ms after they are bound:
/// let cluster = TestCluster::builder()
///     .nodes(3)
///     .pod_ready_after(Duration::from_millis(50))
///     .start()
///     .await?;
/// assert_eq!(cluster.sim().map(|s| s.node_names().len()), Some(3));
/// let _pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
///     kube::Api::namespaced(cluster.client(), "default");
/// cluster.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TestCluster {
    env: TestEnv,
    sim: Option<SimHandle>,
    faults: Option<AttachedFaults>,
}

/// An injector installed on the server, and the task driving its timers.
#[derive(Debug)]
struct AttachedFaults {
    injector: Arc<FaultInjector>,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Drop for AttachedFaults {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Errors starting a [`TestCluster`].
#[derive(Debug, thiserror::Error)]
pub enum TestClusterError {
    /// The API server did not start.
    #[error(transparent)]
    Env(#[from] TestEnvError),
    /// The simulation did not start.
    #[error("starting the simulation: {0}")]
    Sim(#[from] SimError),
}

/// Settings of a [`TestCluster`]: [`TestCluster::builder`], then [`start`](Self::start).
#[derive(Debug, Default)]
pub struct TestClusterBuilder {
    env: TestEnvConfig,
    sim: Option<SimConfig>,
    faults: Option<Arc<FaultInjector>>,
}

impl TestClusterBuilder {
    /// The API server's configuration (default: [`TestEnvConfig::default`]).
    pub fn env_config(mut self, config: TestEnvConfig) -> Self {
        self.env = config;
        self
    }

    /// Run the simulation with this configuration.
    pub fn simulation(mut self, config: SimConfig) -> Self {
        self.sim = Some(config);
        self
    }

    fn sim_config(&mut self) -> &mut SimConfig {
        self.sim.get_or_insert_with(SimConfig::default)
    }

    /// Run the simulation with `n` nodes (`node-1` … `node-N`).
    pub fn nodes(mut self, n: usize) -> Self {
        self.sim_config().nodes = n;
        self
    }

    /// Run the simulation, pods becoming Running and Ready this long after they are bound.
    pub fn pod_ready_after(mut self, d: Duration) -> Self {
        self.sim_config().pod_ready_after = d;
        self
    }

    /// Run the simulation, a pod's graceful deletion taking at most this long.
    pub fn max_grace(mut self, d: Duration) -> Self {
        self.sim_config().max_grace = d;
        self
    }

    /// Run the simulation, the kubelets failing to pull the images `patterns` match (`*`
    /// matches any run of characters; default: upstream e2e's convention,
    /// [`DEFAULT_MISSING_IMAGES`](crate::sim::DEFAULT_MISSING_IMAGES); none: an empty list).
    pub fn missing_images<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.sim_config().missing_images = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Inject faults with this injector, installed once the simulation runs (so the nodes
    /// register without faults).
    pub fn faults(mut self, injector: Arc<FaultInjector>) -> Self {
        self.faults = Some(injector);
        self
    }

    /// Start the API server, then the simulation (with the server's built-in namespace cleanup
    /// off when the simulated namespace controller runs, as [`Simulation::start_with_env`]),
    /// then attach the fault injector.
    pub async fn start(self) -> Result<TestCluster, TestClusterError> {
        let (env, sim) = match self.sim {
            Some(sim_config) => {
                let (env, sim) = Simulation::start_with_env(self.env, sim_config).await?;
                (env, Some(sim))
            }
            None => (TestEnv::start(self.env).await?, None),
        };
        let faults = self.faults.map(|injector| {
            let stop = CancellationToken::new();
            let task = injector.attach(env.server().clone(), stop.clone());
            AttachedFaults {
                injector,
                stop,
                task: Some(task),
            }
        });
        Ok(TestCluster { env, sim, faults })
    }
}

impl TestCluster {
    /// Settings for a new cluster; [`TestClusterBuilder::start`] starts it.
    pub fn builder() -> TestClusterBuilder {
        TestClusterBuilder::default()
    }

    /// The API server (controls such as `compact`, `drop_watches`, `set_hook`, counters).
    pub fn env(&self) -> &TestEnv {
        &self.env
    }

    /// A ready kube client of the API server (cheap to clone).
    pub fn client(&self) -> kube::Client {
        self.env.client()
    }

    /// The simulation, when it runs.
    pub fn sim(&self) -> Option<&SimHandle> {
        self.sim.as_ref()
    }

    /// Take the simulation out, to stop it (or restart it) while the server runs on.
    pub fn take_sim(&mut self) -> Option<SimHandle> {
        self.sim.take()
    }

    /// The fault injector, when one was given.
    pub fn faults(&self) -> Option<&Arc<FaultInjector>> {
        self.faults.as_ref().map(|f| &f.injector)
    }

    /// Stop the fault injection, the simulation, then the server, waiting for each.
    pub async fn shutdown(mut self) {
        if let Some(mut faults) = self.faults.take() {
            faults.stop.cancel();
            if let Some(task) = faults.task.take()
                && let Err(e) = task.await
                && e.is_panic()
            {
                // A fault task that panicked is a bug the test should see.
                std::panic::resume_unwind(e.into_panic());
            }
        }
        if let Some(sim) = self.sim.take() {
            sim.shutdown().await;
        }
        self.env.shutdown().await;
    }
}
