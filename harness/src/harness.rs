//! [`Harness`]: a cluster, CRDs, a namespace and the controllers under test.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcm_manager::{Controller, Manager, NoFlags};
use kcm_testenv::TestCluster;
use kube::api::{Api, DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Names a kubeconfig: the harness then runs against that cluster instead of starting
/// kcm-testenv.
pub const KUBECONFIG_ENV: &str = "KCM_TEST_KUBECONFIG";

/// How long waits last on kcm-testenv, and on a real cluster (which pulls images).
const PATIENCE_TESTENV: Duration = Duration::from_secs(30);
const PATIENCE_REAL: Duration = Duration::from_secs(180);

/// What to start: built by [`Harness::new`], started by [`HarnessBuilder::start`].
#[derive(Debug)]
pub struct HarnessBuilder {
    name: &'static str,
    crds: Vec<CustomResourceDefinition>,
    controllers: Vec<Controller>,
    args: Vec<String>,
    all_namespaces: bool,
}

impl HarnessBuilder {
    /// Installs `crd` before the controllers start (kept installed on a real cluster).
    #[must_use]
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.crds.push(crd);
        self
    }

    /// Runs `controller` (a [`Controller`] or a builder's controller). A harness given no
    /// controller starts no manager: the test runs its own controller on [`Harness::client`].
    #[must_use]
    pub fn controller(mut self, controller: impl Into<Controller>) -> Self {
        self.controllers.push(controller.into());
        self
    }

    /// More kcm-manager flags, after the test options `--leader-elect=false --secure-port=0`
    /// (e.g. `--sharding=namespace`, `--leader-elect=true`, `--kube-api-qps=100`).
    #[must_use]
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Lets the controllers' informers see every namespace (default: the test's only).
    #[must_use]
    pub fn all_namespaces(mut self) -> Self {
        self.all_namespaces = true;
        self
    }

    /// Starts the cluster (or connects to [`KUBECONFIG_ENV`]'s), installs the CRDs, creates
    /// the test's namespace and runs the controllers.
    ///
    /// # Errors
    ///
    /// When the cluster cannot start or be reached, a CRD is refused or never established,
    /// the namespace cannot be created, or the flags are refused.
    pub async fn start(self) -> anyhow::Result<Harness> {
        init_logs();
        let (config, cluster, patience) = match std::env::var(KUBECONFIG_ENV) {
            Ok(path) => (kubeconfig(path.as_ref()).await?, None, PATIENCE_REAL),
            Err(_) => {
                let cluster = TestCluster::builder()
                    .nodes(2)
                    .pod_ready_after(Duration::from_millis(50))
                    .max_grace(Duration::from_millis(100))
                    .start()
                    .await?;
                let config = kubeconfig(cluster.env().kubeconfig_path()).await?;
                (config, Some(cluster), PATIENCE_TESTENV)
            }
        };
        let client = kube::Client::try_from(config.clone())?;
        for crd in &self.crds {
            crate::crds::install(&client, crd, patience).await?;
        }
        let namespace = format!("{}-{:08x}", self.name, rand::random::<u32>());
        let ns: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": namespace}}))?;
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .map_err(|e| {
                anyhow::Error::new(e).context(format!("creating namespace {namespace}"))
            })?;

        let no_controllers = self.controllers.is_empty();
        let manager = Manager::new(self.name).controllers(self.controllers);
        let argv = [self.name, "--leader-elect=false", "--secure-port=0"]
            .into_iter()
            .map(String::from)
            .chain(self.args);
        let (mut parsed, NoFlags {}) = manager.parse_args(argv)?;
        if !self.all_namespaces {
            parsed.options.namespace = Some(namespace.clone());
        }
        let cancel = CancellationToken::new();
        let stopped = Arc::new(Mutex::new(None));
        // Without controllers (a test that runs its own, e.g. a kube-runtime one) no manager
        // runs: the cluster, CRDs, namespace and waits are the harness's whole service.
        let manager = (!no_controllers).then(|| {
            tokio::spawn({
                let (cancel, stopped) = (cancel.clone(), stopped.clone());
                async move {
                    let outcome = match manager.run(&parsed.options, config, cancel).await {
                        Ok(exit) => format!("exited: {exit:?}"),
                        Err(e) => format!("failed: {e:#}"),
                    };
                    tracing::info!("the controllers' manager {outcome}");
                    if let Ok(mut s) = stopped.lock() {
                        *s = Some(outcome);
                    }
                }
            })
        });
        Ok(Harness {
            client,
            namespace,
            patience,
            cluster,
            cancel,
            manager,
            stopped,
        })
    }
}

/// A cluster with the controllers under test running; see the [crate docs](crate).
pub struct Harness {
    client: kube::Client,
    namespace: String,
    patience: Duration,
    cluster: Option<TestCluster>,
    cancel: CancellationToken,
    manager: Option<JoinHandle<()>>,
    stopped: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("namespace", &self.namespace)
            .field("testenv", &self.cluster.is_some())
            .finish_non_exhaustive()
    }
}

impl Harness {
    /// A harness whose manager (and namespace prefix) is `name`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(name: &'static str) -> HarnessBuilder {
        HarnessBuilder {
            name,
            crds: Vec::new(),
            controllers: Vec::new(),
            args: Vec::new(),
            all_namespaces: false,
        }
    }

    /// An admin client of the cluster.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The test's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// How long [`wait_for`](Self::wait_for) waits: 30 s on kcm-testenv, 180 s on a real
    /// cluster.
    pub fn patience(&self) -> Duration {
        self.patience
    }

    /// Whether the harness runs against kcm-testenv (not [`KUBECONFIG_ENV`]'s cluster).
    pub fn is_testenv(&self) -> bool {
        self.cluster.is_some()
    }

    /// The API of `K` in the test's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Polls `check` every 50 ms until it returns `Some`, for at most [`patience`](Self::patience).
    ///
    /// # Errors
    ///
    /// `timed out after 30s waiting for <what>` with the last error `check` returned, or the
    /// manager's own failure if it stopped meanwhile.
    pub async fn wait_for<T, F, Fut>(&self, what: &str, mut check: F) -> anyhow::Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = anyhow::Result<Option<T>>>,
    {
        let deadline = tokio::time::Instant::now() + self.patience;
        let mut last_error = None;
        loop {
            match check().await {
                Ok(Some(v)) => return Ok(v),
                Ok(None) => {}
                Err(e) => last_error = Some(format!("{e:#}")),
            }
            if let Some(outcome) = self.stopped.lock().ok().and_then(|s| s.clone()) {
                anyhow::bail!("the controllers' manager {outcome} while waiting for {what}");
            }
            if tokio::time::Instant::now() > deadline {
                let last = last_error.map_or(String::new(), |e| format!("; last error: {e}"));
                anyhow::bail!(
                    "timed out after {:?} waiting for {what}{last}",
                    self.patience
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the object `name` of `K` in the test's namespace satisfies `condition`, and
    /// returns it; the timeout message shows the object as last seen.
    ///
    /// # Errors
    ///
    /// On the timeout, or the manager's failure.
    pub async fn wait_for_object<K>(
        &self,
        name: &str,
        condition: impl Fn(&K) -> bool,
    ) -> anyhow::Result<K>
    where
        K: kube::Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + DeserializeOwned
            + serde::Serialize
            + Clone
            + std::fmt::Debug,
    {
        let api = self.api::<K>();
        let last = Mutex::new(None::<K>);
        let what = format!("{} {name}", K::kind(&()));
        let found = self
            .wait_for(&what, || async {
                let current = api.get_opt(name).await?;
                if let Ok(mut l) = last.lock() {
                    l.clone_from(&current);
                }
                Ok(current.filter(|o| condition(o)))
            })
            .await;
        found.map_err(|e| {
            let seen = last.lock().ok().and_then(|l| l.clone()).map_or_else(
                || "never seen".to_string(),
                |o| serde_json::to_string(&o).unwrap_or_default(),
            );
            e.context(format!("{what} as last seen: {seen}"))
        })
    }

    /// Stops the controllers (their in-flight work finishes, for at most 10 s), deletes the
    /// test's namespace and stops kcm-testenv.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        if let Some(manager) = self.manager.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), manager).await;
        }
        let _ = Api::<Namespace>::all(self.client.clone())
            .delete(&self.namespace, &DeleteParams::default())
            .await;
        if let Some(cluster) = self.cluster.take() {
            cluster.shutdown().await;
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Logs to the test's captured output (shown when it fails): `RUST_LOG`, else `info`.
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
}

async fn kubeconfig(path: &std::path::Path) -> anyhow::Result<kube::Config> {
    let kubeconfig = Kubeconfig::read_from(path)
        .map_err(|e| anyhow::Error::new(e).context(format!("reading {}", path.display())))?;
    Ok(kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?)
}
