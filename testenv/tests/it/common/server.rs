//! The server a check runs on: an embedded TestEnv (the default), or a real kube-apiserver
//! reached through `kubectl proxy` when `KCM_SPEC_SERVER=http://127.0.0.1:PORT` is set.
//!
//! Every check creates its own namespaces (`ns`), named after the check plus a random suffix, so
//! checks can share one real server; on a real server they are deleted when the `Server` drops
//! (also when the check panics).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use kcm_testenv::{TestCluster, TestEnv};
use serde_json::json;

use super::{Target, req, start};

/// The environment variable that points the checks at a real API server.
pub const SERVER_VAR: &str = "KCM_SPEC_SERVER";

pub struct Server {
    cluster: Option<TestCluster>,
    /// `host:port` of the plain-HTTP endpoint.
    host: String,
    tag: String,
    suffix: String,
    namespaces: Mutex<Vec<String>>,
    /// CRDs to delete at the end on a real server (`track_crd`).
    crds: Mutex<Vec<String>>,
    /// A kubeconfig written for the proxy (real server without `KUBECONFIG`).
    scratch: Option<PathBuf>,
}

impl Target for Server {
    fn host(&self) -> String {
        self.host.clone()
    }
}

impl Server {
    /// An embedded TestEnv, or the real server named by `KCM_SPEC_SERVER`. `tag` names the
    /// check's namespaces.
    pub async fn start(tag: &str) -> Server {
        let suffix = uuid::Uuid::new_v4().simple().to_string()[..6].to_string();
        let (cluster, host) = match std::env::var(SERVER_VAR) {
            Ok(url) if !url.trim().is_empty() => {
                let host = url
                    .trim()
                    .trim_start_matches("http://")
                    .trim_end_matches('/')
                    .to_string();
                assert!(
                    !host.contains('/') && !url.starts_with("https"),
                    "{SERVER_VAR} must be http://HOST:PORT (a `kubectl proxy`), not {url}"
                );
                (None, host)
            }
            _ => {
                let cluster = start().await;
                let host = cluster.env().addr().to_string();
                (Some(cluster), host)
            }
        };
        Server {
            cluster,
            host,
            tag: tag.to_string(),
            suffix,
            namespaces: Mutex::new(Vec::new()),
            crds: Mutex::new(Vec::new()),
            scratch: None,
        }
    }

    /// True on a real kube-apiserver.
    pub fn is_real(&self) -> bool {
        self.cluster.is_none()
    }

    /// The embedded TestEnv, None on a real server.
    pub fn env(&self) -> Option<&TestEnv> {
        self.cluster.as_ref().map(TestCluster::env)
    }

    /// The TestEnv for a testenv-only control; on a real server prints why the step is
    /// skipped and returns None.
    pub fn testenv_only(&self, what: &str) -> Option<&TestEnv> {
        if self.cluster.is_none() {
            eprintln!("[{}] skipped on kube-apiserver: {what}", self.tag);
        }
        self.env()
    }

    /// The name of this check's namespace `name` (`<tag>-<name>-<random>`), to be created by the
    /// caller; deleted with the `Server` on a real server.
    pub fn ns_name(&self, name: &str) -> String {
        let full = format!("{}-{name}-{}", self.tag, self.suffix);
        self.namespaces
            .lock()
            .expect("namespaces")
            .push(full.clone());
        full
    }

    /// An API group of this check's own (`<tag>-<name>-<random>.checks.kcm-rs.io`), for its
    /// CRDs (cluster-scoped, so a real server's checks must not share names).
    pub fn group(&self, name: &str) -> String {
        format!("{}-{name}-{}.checks.kcm-rs.io", self.tag, self.suffix)
    }

    /// Delete the CRD `name` when the check ends on a real server (also after a failure).
    pub fn track_crd(&self, name: &str) {
        self.crds.lock().expect("crds").push(name.to_string());
    }

    /// Create this check's namespace `name` and return its full name (see `ns_name`); ready
    /// for pods (`wait_ready`).
    pub async fn ns(&self, name: &str) -> String {
        let full = self.ns_name(name);
        let r = req(
            self,
            "POST",
            "/api/v1/namespaces",
            Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": full}})),
        )
        .await;
        assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
        self.wait_ready(&full).await;
        full
    }

    /// On a real server, wait for the namespace's `default` ServiceAccount: the ServiceAccount
    /// admission rejects pods before the controller has created it. TestEnv has no such step.
    pub async fn wait_ready(&self, ns: &str) {
        if !self.is_real() {
            return;
        }
        let sa = format!("/api/v1/namespaces/{ns}/serviceaccounts/default");
        for _ in 0..600 {
            if req(self, "GET", &sa, None).await.code == 200 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("ServiceAccount {ns}/default never appeared");
    }

    /// The server's current resourceVersion (a consistent list's on a real server).
    pub async fn resource_version(&self) -> u64 {
        match self.env() {
            Some(env) => env.resource_version(),
            None => req(self, "GET", "/api/v1/namespaces?limit=1", None)
                .await
                .json()["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .expect("list resourceVersion"),
        }
    }

    /// A kube client for this server.
    pub fn client(&self) -> kube::Client {
        match self.env() {
            Some(env) => env.client(),
            None => {
                let url = format!("http://{}", self.host).parse().expect("url");
                kube::Client::try_from(kube::Config::new(url)).expect("client")
            }
        }
    }

    /// A kubeconfig for kubectl: TestEnv's; on a real server `$KUBECONFIG` (the admin kubeconfig
    /// of `cargo xtask cluster up --upstream`), else one written for the proxy.
    pub fn kubeconfig(&mut self) -> PathBuf {
        if let Some(env) = self.env() {
            return env.kubeconfig_path().to_path_buf();
        }
        if let Ok(k) = std::env::var("KUBECONFIG")
            && !k.is_empty()
        {
            return PathBuf::from(k);
        }
        let dir = std::env::temp_dir().join(format!("kcm-spec-{}-{}", self.tag, self.suffix));
        std::fs::create_dir_all(&dir).expect("tempdir");
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster:\n    server: http://{}\nusers:\n- name: proxy\n  user: {{}}\ncontexts:\n- name: proxy\n  context: {{cluster: proxy, user: proxy}}\ncurrent-context: proxy\n",
            self.host
        );
        std::fs::write(&path, text).expect("write kubeconfig");
        self.scratch = Some(dir);
        path
    }

    /// Wait until `path` answers 404 (`attempts` × 100 ms).
    pub async fn wait_gone(&self, path: &str, attempts: usize) -> bool {
        for _ in 0..attempts {
            if req(self, "GET", path, None).await.code == 404 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }

    /// End the check: shut the TestEnv down (the namespaces of a real server go in `Drop`).
    pub async fn finish(mut self) {
        if let Some(cluster) = self.cluster.take() {
            cluster.shutdown().await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(dir) = self.scratch.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
        if self.cluster.is_some() {
            return;
        }
        // synchronous: Drop cannot await, and this must also run when the check panicked
        let namespaces =
            std::mem::take(&mut *self.namespaces.lock().unwrap_or_else(|e| e.into_inner()));
        for ns in namespaces {
            if let Err(e) = delete_sync(&self.host, &format!("/api/v1/namespaces/{ns}")) {
                eprintln!("[{}] could not delete namespace {ns}: {e}", self.tag);
            }
        }
        let crds = std::mem::take(&mut *self.crds.lock().unwrap_or_else(|e| e.into_inner()));
        for crd in crds {
            let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}");
            if let Err(e) = delete_sync(&self.host, &path) {
                eprintln!("[{}] could not delete CRD {crd}: {e}", self.tag);
            }
        }
    }
}

fn delete_sync(host: &str, path: &str) -> std::io::Result<()> {
    let mut s = std::net::TcpStream::connect(host)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        s,
        "DELETE {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    Ok(())
}
