//! Helpers shared by the simulation tests.
#![allow(dead_code)]

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use kcm_testenv::TestCluster;
use kcm_testenv::sim::SimConfig;
use kube::Api;
use serde_json::json;

/// Liveness bound for waits (not a timing assertion: a broken simulation would hang forever).
const PATIENCE: Duration = Duration::from_secs(30);

pub fn fast_config() -> SimConfig {
    SimConfig {
        pod_ready_after: Duration::from_millis(50),
        max_grace: Duration::from_millis(300),
        crash_loop_backoff: Duration::from_millis(50),
        crash_loop_max_backoff: Duration::from_millis(200),
        ..SimConfig::default()
    }
}

/// A test cluster running the simulation with `config`.
pub async fn start_sim(config: SimConfig) -> TestCluster {
    TestCluster::builder()
        .simulation(config)
        .start()
        .await
        .expect("test cluster")
}

pub fn pod(name: &str, annotations: &[(&str, &str)]) -> Pod {
    let ann: serde_json::Map<String, serde_json::Value> = annotations
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}, "annotations": ann},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    }))
    .expect("pod")
}

pub fn condition(p: &Pod, t: &str) -> Option<PodCondition> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == t)
        .cloned()
}

pub fn is_ready(p: &Pod) -> bool {
    condition(p, "Ready").is_some_and(|c| c.status == "True")
}

pub fn phase(p: &Pod) -> Option<String> {
    p.status.as_ref()?.phase.clone()
}

pub fn restart_count(p: &Pod) -> i32 {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .map_or(0, |c| c.restart_count)
}

/// Poll until `f` yields a value.
pub async fn wait_for<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = tokio::time::Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn wait_pod(pods: &Api<Pod>, name: &str, pred: impl Fn(&Pod) -> bool) -> Pod {
    wait_for(&format!("pod {name}"), || async {
        pods.get_opt(name).await.ok().flatten().filter(|p| pred(p))
    })
    .await
}

pub async fn wait_gone<K>(api: &Api<K>, name: &str)
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    wait_for(&format!("{name} to be deleted"), || async {
        match api.get_opt(name).await {
            Ok(None) => Some(()),
            _ => None,
        }
    })
    .await
}
