//! What the process-level tests share: a test cluster and a folder for logs, a `kcm` process
//! logging to a file, killed when dropped, its sent writes, a Deployment manifest, a check that
//! Deployments rolled out, and a wait.

#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kcm_testenv::TestCluster;
use kube::api::{Api, ListParams};

/// kcm-testenv with two simulated nodes whose pods are Ready 200 ms after they start, and an
/// empty folder for the logs of the test `name`.
pub async fn cluster_and_log_dir(name: &str) -> (TestCluster, PathBuf) {
    let cluster = TestCluster::builder()
        .nodes(2)
        .pod_ready_after(Duration::from_millis(200))
        .start()
        .await
        .expect("test cluster");
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("log dir");
    (cluster, dir)
}

/// A kcm process that is killed when dropped, logging to a file.
pub struct Kcm {
    pub child: Child,
    pub log: PathBuf,
}

impl Kcm {
    /// `kcm --kubeconfig <kubeconfig> --secure-port=0 --v=2 <args>`, stderr to `log`.
    pub fn start(kubeconfig: &Path, log: PathBuf, args: &[&str]) -> Kcm {
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_kcm"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--secure-port=0", "--v=2"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start kcm");
        Kcm { child, log }
    }

    /// Sends `signal` (`-STOP`, `-CONT`, ...).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {signal}");
    }

    /// Its log so far.
    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Kcm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The log lines of writes that were sent (`"API write"` lines with `result="ok"` or
/// `"error"`, not `"fenced"`).
pub fn sent_writes(log: &str) -> impl Iterator<Item = &str> {
    log.lines()
        .filter(|l| l.contains("\"API write\"") && !l.contains("result=\"fenced\""))
}

/// Whether `deployments` lists exactly `count` Deployments, each with exactly `replicas`
/// available, updated pods for its latest generation.
pub async fn all_available(deployments: &Api<Deployment>, count: usize, replicas: i32) -> bool {
    let Ok(list) = deployments.list(&ListParams::default()).await else {
        return false;
    };
    list.items.len() == count
        && list.items.iter().all(|d| {
            let status = d.status.clone().unwrap_or_default();
            d.metadata.generation == status.observed_generation
                && status.replicas == Some(replicas)
                && status.updated_replicas == Some(replicas)
                && status.available_replicas == Some(replicas)
        })
}

/// Polls `done` every 100 ms; panics after `limit`.
pub async fn wait_until<F: AsyncFnMut() -> bool>(what: &str, limit: Duration, mut done: F) {
    let deadline = Instant::now() + limit;
    while !done().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Deployment `name` in `ns` with `replicas` pause pods, RollingUpdate maxSurge 1,
/// maxUnavailable 0.
pub fn deployment(ns: &str, name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
            }
        }
    }))
    .expect("deployment")
}
