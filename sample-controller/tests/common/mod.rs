//! The test cluster of the sample controller's tests: kcm-testenv in-process (with simulated
//! nodes whose pods become Ready), or the cluster of `KCM_SAMPLE_KUBECONFIG`. Either way the
//! Foo CRD is installed, each test gets a namespace of its own, and the controllers run in the
//! test process on kcm-manager (as the binary runs them) scoped to that namespace.

#![allow(dead_code)] // each test binary uses a part

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcm_manager::{Manager, NoFlags};
use kcm_sample_controller::{FooControllerConfig, controllers, crd};
use kcm_testenv::TestCluster;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_runtime::wait::{await_condition, conditions};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Names a kubeconfig: the tests run against that cluster instead of kcm-testenv.
pub const KUBECONFIG_ENV: &str = "KCM_SAMPLE_KUBECONFIG";
/// `0` on a cluster whose kube-controller-manager runs the Deployment and ReplicaSet
/// controllers: the tests then do not run kcm's.
pub const BUILTIN_ENV: &str = "KCM_SAMPLE_BUILTIN_CONTROLLERS";

/// A cluster with the Foo CRD and the sample controller running in `namespace`.
pub struct Harness {
    pub client: kube::Client,
    pub namespace: String,
    cluster: Option<TestCluster>,
    cancel: CancellationToken,
    controllers: JoinHandle<()>,
}

/// How long to wait for the controllers (a real cluster pulls images).
pub fn patience() -> Duration {
    if std::env::var_os(KUBECONFIG_ENV).is_some() {
        Duration::from_secs(180)
    } else {
        Duration::from_secs(30)
    }
}

async fn kubeconfig(path: &std::path::Path) -> anyhow::Result<kube::Config> {
    let kubeconfig = Kubeconfig::read_from(path)?;
    Ok(kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?)
}

/// Installs the Foo CRD (or finds it installed) and waits until it is Established.
pub async fn install_crd(client: &kube::Client) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds.create(&PostParams::default(), &crd()).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => return Err(e.into()),
    }
    let established = await_condition(
        crds,
        "foos.samplecontroller.k8s.io",
        conditions::is_crd_established(),
    );
    tokio::time::timeout(Duration::from_secs(30), established).await??;
    Ok(())
}

impl Harness {
    /// The cluster, the CRD, a fresh namespace `<prefix>-<random>`, and the controllers.
    pub async fn start(prefix: &str) -> anyhow::Result<Harness> {
        let (config, cluster) = match std::env::var(KUBECONFIG_ENV) {
            Ok(path) => (kubeconfig(path.as_ref()).await?, None),
            Err(_) => {
                let cluster = TestCluster::builder()
                    .nodes(2)
                    .pod_ready_after(Duration::from_millis(50))
                    .max_grace(Duration::from_millis(100))
                    .start()
                    .await?;
                (
                    kubeconfig(cluster.env().kubeconfig_path()).await?,
                    Some(cluster),
                )
            }
        };
        let client = kube::Client::try_from(config.clone())?;
        install_crd(&client).await?;
        let namespace = format!("{prefix}-{:08x}", rand::random::<u32>());
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": namespace}
        }))?;
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await?;
        // kcm-manager in-process, as the binary runs it, without leader election or serving,
        // its informers scoped to the test's namespace.
        let with_builtin = std::env::var(BUILTIN_ENV).as_deref() != Ok("0");
        let manager = Manager::new("sample-controller")
            .controllers(controllers(FooControllerConfig::default(), with_builtin));
        let argv = [
            "sample-controller",
            "--leader-elect=false",
            "--secure-port=0",
        ];
        let (mut parsed, NoFlags {}) = manager.parse_args(argv)?;
        parsed.options.namespace = Some(namespace.clone());
        let cancel = CancellationToken::new();
        let controllers = tokio::spawn({
            let cancel = cancel.clone();
            async move {
                if let Err(e) = manager.run(&parsed.options, config, cancel).await {
                    panic!("the controllers failed: {e:#}");
                }
            }
        });
        Ok(Harness {
            client,
            namespace,
            cluster,
            cancel,
            controllers,
        })
    }

    /// An API of `K` in the test's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// The events of the object named `name`, as `(type, reason, message, source component)`.
    pub async fn events_of(&self, name: &str) -> anyhow::Result<Vec<[String; 4]>> {
        let events = self.api::<Event>().list(&ListParams::default()).await?;
        Ok(events
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .filter(|e| e.involved_object.kind.as_deref() == Some("Foo"))
            .map(|e| {
                [
                    e.type_.unwrap_or_default(),
                    e.reason.unwrap_or_default(),
                    e.message.unwrap_or_default(),
                    e.source.and_then(|s| s.component).unwrap_or_default(),
                ]
            })
            .collect())
    }

    /// Stops the controllers, deletes the namespace, stops kcm-testenv.
    pub async fn stop(self) {
        self.cancel.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.controllers).await;
        let _ = Api::<Namespace>::all(self.client.clone())
            .delete(&self.namespace, &DeleteParams::default())
            .await;
        if let Some(cluster) = self.cluster {
            cluster.shutdown().await;
        }
    }
}

/// Polls `check` every 50 ms until it returns `Some`, for at most [`patience`]; the error
/// says what was last seen.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Result<T, String>>>,
{
    let deadline = tokio::time::Instant::now() + patience();
    loop {
        let last = match check().await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(seen)) => seen,
            Err(e) => format!("error: {e}"),
        };
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!("timed out waiting for {what}; last seen: {last}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
