//! [`TestEnv`]: start the server on a local port, hand out a client and a kubeconfig.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::apiserver::audit::AuditLog;
use crate::apiserver::metrics::{Metrics, RequestCounts};
use crate::apiserver::{ApiServer, RequestHook, cluster_objects, dispatch, handlers};
use crate::registry;
use crate::storage::Store;

/// Namespaces that exist at start.
pub const BOOTSTRAP_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Configuration of a [`TestEnv`].
#[derive(Debug, Clone)]
pub struct TestEnvConfig {
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    pub listen: SocketAddr,
    /// Number of change events kept for watches and continue tokens.
    pub watch_window: usize,
    /// How often each watcher gets a bookmark (upstream: about a minute).
    pub bookmark_interval: Duration,
    /// Where to write the kubeconfig (default: a file in the temp directory, removed on shutdown).
    pub kubeconfig_path: Option<PathBuf>,
    /// The first revision handed out is `start_revision + 1` (keep revisions monotonic across restarts).
    pub start_revision: u64,
    /// A hook consulted before every request (fault injection).
    pub hook: Option<Arc<dyn RequestHook>>,
    /// Run the built-in namespace cleanup after a namespace DELETE (content removed at
    /// once, then the namespace). Turn off when a simulated namespace controller does it.
    pub namespace_cleanup: bool,
    /// Append every answered write to this file as kube-apiserver's audit log would
    /// ([`audit`](crate::apiserver::audit)).
    pub audit_log_path: Option<PathBuf>,
    /// Give every namespace its `default` ServiceAccount and `kube-root-ca.crt` ConfigMap, as
    /// kube-controller-manager's serviceaccount and root-ca-cert-publisher controllers do. Turn
    /// off when a real kube-controller-manager runs against this server.
    pub namespace_defaults: bool,
}

impl Default for TestEnvConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            watch_window: 20_000,
            bookmark_interval: Duration::from_secs(60),
            kubeconfig_path: None,
            start_revision: 0,
            hook: None,
            namespace_cleanup: true,
            audit_log_path: None,
            namespace_defaults: true,
        }
    }
}

/// Errors starting a [`TestEnv`].
#[derive(Debug, thiserror::Error)]
pub enum TestEnvError {
    /// Binding the listener failed.
    #[error("binding {addr}: {source}")]
    Bind {
        /// Address.
        addr: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
    /// Writing the kubeconfig failed.
    #[error("writing kubeconfig {path}: {source}")]
    Kubeconfig {
        /// Path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The audit log could not be opened.
    #[error("opening the audit log {path}: {source}")]
    Audit {
        /// Path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Building the kube client failed.
    #[error("building kube client: {0}")]
    Client(String),
    /// Bootstrapping objects failed.
    #[error("bootstrap: {0}")]
    Bootstrap(String),
}

/// A running test API server.
pub struct TestEnv {
    srv: Arc<ApiServer>,
    url: String,
    kubeconfig: PathBuf,
    owns_kubeconfig: bool,
    config: kube::Config,
    client: kube::Client,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("url", &self.url)
            .field("kubeconfig", &self.kubeconfig)
            .finish_non_exhaustive()
    }
}

impl TestEnv {
    /// Start the server, create the bootstrap namespaces and write the kubeconfig.
    pub async fn start(config: TestEnvConfig) -> Result<TestEnv, TestEnvError> {
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| TestEnvError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| TestEnvError::Bind {
            addr: config.listen,
            source,
        })?;
        let audit = match &config.audit_log_path {
            Some(path) => Some(AuditLog::open(path).map_err(|source| TestEnvError::Audit {
                path: path.clone(),
                source,
            })?),
            None => None,
        };
        let srv = Arc::new(ApiServer {
            store: Store::new(config.start_revision, config.watch_window),
            metrics: Metrics::default(),
            hook: parking_lot::RwLock::new(config.hook.clone()),
            bookmark_interval: config.bookmark_interval,
            addr,
            shutdown: CancellationToken::new(),
            namespace_cleanup: std::sync::atomic::AtomicBool::new(config.namespace_cleanup),
            watch_delay_ms: std::sync::atomic::AtomicU64::new(0),
            crds: Default::default(),
            crd_controller: Default::default(),
            crd_finalizing: Default::default(),
            audit,
            namespace_defaults: std::sync::atomic::AtomicBool::new(config.namespace_defaults),
            token_key: rand::random(),
        });
        cluster_objects::bootstrap(&srv);
        let ns_res = registry::find("", "v1", "namespaces")
            .ok_or_else(|| TestEnvError::Bootstrap("no namespaces".into()))?;
        for ns in BOOTSTRAP_NAMESPACES {
            handlers::create_value(&srv, ns_res, None, json!({"metadata": {"name": ns}}))
                .map_err(|e| TestEnvError::Bootstrap(e.to_string()))?;
            cluster_objects::namespace_defaults(&srv, ns);
        }
        let url = format!("http://{addr}");
        let (kubeconfig, owns_kubeconfig) = match &config.kubeconfig_path {
            Some(p) => (p.clone(), false),
            None => (
                std::env::temp_dir().join(format!(
                    "kcm-testenv-{}-{}.kubeconfig",
                    std::process::id(),
                    addr.port()
                )),
                true,
            ),
        };
        crate::kubeconfig::write(&kubeconfig, &url).map_err(|source| TestEnvError::Kubeconfig {
            path: kubeconfig.clone(),
            source,
        })?;
        let uri: http::Uri = url
            .parse()
            .map_err(|e| TestEnvError::Client(format!("{e}")))?;
        let config = kube::Config::new(uri);
        let client = kube::Client::try_from(config.clone())
            .map_err(|e| TestEnvError::Client(e.to_string()))?;
        let task = tokio::spawn(dispatch::serve(srv.clone(), listener));
        Ok(TestEnv {
            srv,
            url,
            kubeconfig,
            owns_kubeconfig,
            config,
            client,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.srv.addr
    }

    /// A ready kube client (cheap to clone).
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The client configuration of this server (plain HTTP, no credentials, namespace
    /// `default`), for building clients of your own: another timeout, a user agent, a default
    /// namespace, or [`kube::Client::try_from`] in a library that takes a `Config`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use k8s_openapi::api::coordination::v1::Lease;
    /// use kcm_testenv::{TestEnv, TestEnvConfig};
    ///
    /// let env = TestEnv::start(TestEnvConfig::default()).await?;
    /// let mut config = env.config();
    /// config.default_namespace = "kube-system".to_string();
    /// let client = kube::Client::try_from(config)?;
    /// let leases: kube::Api<Lease> = kube::Api::default_namespaced(client);
    /// assert!(leases.list(&Default::default()).await?.items.is_empty());
    /// env.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn config(&self) -> kube::Config {
        self.config.clone()
    }

    /// The kubeconfig file (context `kcm-testenv`, no auth).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The server state (storage, metrics, hook): the extension point for simulations.
    pub fn server(&self) -> &Arc<ApiServer> {
        &self.srv
    }

    /// Request counters.
    pub fn counters(&self) -> RequestCounts {
        self.srv.metrics.snapshot()
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.srv.store.rv()
    }

    /// Force a compaction, as etcd's: a watch started or resumed from an earlier revision gets
    /// `ERROR 410 Expired` (clients relist), as does an exact read at one, and continue tokens
    /// issued so far expire. Open watches keep receiving every change, as kube-apiserver's
    /// watch cache keeps serving its watchers through a compaction; combine with
    /// [`drop_watches`](Self::drop_watches) for the resumes that then get 410.
    pub fn compact(&self) {
        self.srv.store.compact();
    }

    /// Close every open watch; clients re-watch from their last revision.
    pub fn drop_watches(&self) {
        self.srv.store.drop_watches();
    }

    /// Expire every continue token issued so far.
    pub fn expire_continue_tokens(&self) {
        self.srv.store.expire_continue_tokens();
    }

    /// Change the number of events kept in the watch history.
    pub fn set_watch_window(&self, n: usize) {
        self.srv.store.set_window(n);
    }

    /// Delay every watch event by `d` before it is sent (zero turns it off).
    pub fn set_watch_delay(&self, d: Duration) {
        let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        self.srv
            .watch_delay_ms
            .store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// Install or remove the request hook.
    pub fn set_hook(&self, hook: Option<Arc<dyn RequestHook>>) {
        *self.srv.hook.write() = hook;
    }

    /// Stop serving: close watches and connections, remove an owned kubeconfig.
    pub async fn shutdown(mut self) {
        self.srv.shutdown.cancel();
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        if self.owns_kubeconfig {
            let _ = std::fs::remove_file(&self.kubeconfig);
        }
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        self.srv.shutdown.cancel();
        if self.owns_kubeconfig {
            let _ = std::fs::remove_file(&self.kubeconfig);
        }
    }
}
