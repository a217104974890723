//! `/metrics` of a running manager (over HTTPS) (in-process, against the embedded test
//! cluster): after a Namespace was synced, the work-queue, REST client, leader and sync series
//! are served with upstream's names and labels.
//!
//! A test binary of its own, not a module of `tests/it`: the work-queue and sync series go to a
//! process-wide sink that the first manager of a process installs (`Metrics::install_global`; a
//! later one warns and serves `/metrics` without them), so this test's manager must be its
//! process's first. It includes the helpers it shares by path.

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kcm_manager::{Exit, Manager};
use kcm_testenv::TestCluster;
use kube::api::{Api, PostParams};

#[path = "../src/test_support/https.rs"]
mod https;
#[path = "it/common/in_process.rs"]
mod in_process;
#[path = "it/common/namespace_reader.rs"]
mod namespace_reader;

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

async fn scrape(port: u16) -> String {
    https::get(port, "/metrics", &[], None).await.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_endpoint_serves_queue_client_leader_and_sync_series() {
    let cluster = TestCluster::builder().start().await.expect("test cluster");
    let env = cluster.env();
    let port = free_port();
    let port_arg = format!("--secure-port={port}");
    let manager = Manager::new("kcm").controller(namespace_reader::namespace_reader());
    let args = [
        "--bind-address=127.0.0.1",
        &port_arg,
        "--controllers=nsreader",
        // No TokenReview in the test cluster: let anyone read /metrics.
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
    ];
    let (stop, run) = in_process::spawn(manager, &args, env.kubeconfig_path()).await;

    let ns: Namespace = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"}
    }))
    .expect("namespace");
    Api::<Namespace>::all(env.client())
        .create(&PostParams::default(), &ns)
        .await
        .expect("create");

    let host = env.addr().to_string();
    let expected = [
        "leader_election_master_status{name=\"kcm\"} 1\n".to_string(),
        "workqueue_adds_total{name=\"namespace\"}".to_string(),
        "workqueue_work_duration_seconds_count{name=\"namespace\"}".to_string(),
        // The Lease was created.
        format!("rest_client_requests_total{{code=\"201\",host=\"{host}\",method=\"POST\"}}"),
        format!("rest_client_request_duration_seconds_count{{host=\"{host}\",verb=\"GET\"}}"),
        format!("rest_client_rate_limiter_duration_seconds_count{{host=\"{host}\",verb=\"POST\"}}"),
        "kcm_controller_sync_duration_seconds_count{controller=\"namespace\",result=\"success\"}"
            .to_string(),
    ];
    let mut text = String::new();
    for _ in 0..200 {
        text = scrape(port).await;
        if expected.iter().all(|line| text.contains(line.as_str())) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for line in &expected {
        assert!(text.contains(line.as_str()), "missing {line:?} in\n{text}");
    }
    stop.cancel();
    let exit = run.await.expect("join").expect("run");
    assert_eq!(exit, Exit::Stopped);
    cluster.shutdown().await;
}
