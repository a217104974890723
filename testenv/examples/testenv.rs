//! An embedded Kubernetes test cluster in one process: the API server over real HTTP, three
//! simulated nodes with a scheduler and kubelets. A plain kube client creates a pod, sees it bound
//! and Ready, deletes it gracefully, and the server's request counters show what was called.
//! Run: `cargo run -p kcm-testenv --example testenv`

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use kcm_testenv::TestCluster;
use kube::api::{Api, DeleteParams, ListParams, PostParams};

const POD: &str = r#"{"metadata": {"name": "hello"},
  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cluster = TestCluster::builder().nodes(3).start().await?;
    let env = cluster.env();
    println!(
        "API server at {}, kubeconfig {}",
        env.url(),
        env.kubeconfig_path().display()
    );
    let nodes: Api<Node> = Api::all(env.client());
    for n in nodes.list(&ListParams::default()).await?.items {
        println!("node {}", n.metadata.name.unwrap_or_default());
    }

    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &serde_json::from_str(POD)?)
        .await?;
    let start = Instant::now();
    let mut last = String::new();
    loop {
        let pod = pods.get_opt("hello").await?;
        let Some(pod) = pod else { break };
        let node = pod.spec.and_then(|s| s.node_name).unwrap_or_default();
        let status = pod.status.unwrap_or_default();
        let ready = status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        let phase = status.phase.unwrap_or_default();
        let line = format!(
            "node={node:?} phase={phase} ready={ready} deleting={}",
            pod.metadata.deletion_timestamp.is_some()
        );
        if line != last {
            println!("{:>5} ms  pod hello: {line}", start.elapsed().as_millis());
            last = line;
        }
        if ready && pod.metadata.deletion_timestamp.is_none() {
            pods.delete("hello", &DeleteParams::default()).await?; // graceful: the kubelet ends it
        }
        anyhow::ensure!(
            start.elapsed() < Duration::from_secs(30),
            "pod stuck: {last}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("{:>5} ms  pod hello is gone", start.elapsed().as_millis());

    for ((verb, resource, code), n) in &env.counters().requests {
        if resource.starts_with("pods") {
            println!("requests: {verb} {resource} -> {code}: {n}");
        }
    }
    cluster.shutdown().await;
    Ok(())
}
