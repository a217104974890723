//! `/metrics` of a running kcm process (over HTTPS) (in-process, against the embedded test cluster):
//! after a ReplicaSet was synced, the work-queue, REST client, leader and sync series are
//! served with upstream's names and labels.

mod common;

use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_manager::app::{self, Controller, ControllerContext, RunFuture};
use kcm_manager::options::Options;
use kcm_testenv::TestCluster;
use kube::api::{Api, PostParams};

fn replicaset_controller() -> Controller {
    Controller {
        name: "replicaset-controller",
        build: Box::new(|ctx: &ControllerContext| {
            let config = kcm_replicaset::ReplicaSetControllerConfig {
                workers: 2,
                ..Default::default()
            };
            let controller = kcm_replicaset::ReplicaSetController::new(
                ctx.client.clone(),
                &ctx.factory,
                config,
            )?;
            Ok(Box::new(move |cancel| {
                Box::pin(controller.run(cancel)) as RunFuture
            }))
        }),
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

async fn scrape(port: u16) -> String {
    common::https::get(port, "/metrics", &[], None).await.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_endpoint_serves_queue_client_leader_and_sync_series() {
    let cluster = TestCluster::builder().start().await.expect("test cluster");
    let env = cluster.env();
    let port = free_port();
    let kubeconfig = env.kubeconfig_path().display().to_string();
    let port_arg = port.to_string();
    let options = Options::try_parse_from([
        "kcm",
        "--kubeconfig",
        &kubeconfig,
        "--bind-address",
        "127.0.0.1",
        "--secure-port",
        &port_arg,
        "--controllers",
        "replicaset",
        // No TokenReview in the test cluster: let anyone read /metrics.
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
    ])
    .expect("flags");
    let (stop, run) = common::in_process::spawn(
        options,
        env.kubeconfig_path(),
        vec![replicaset_controller()],
    )
    .await;

    let rs: ReplicaSet = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}
            }
        }
    }))
    .expect("replicaset");
    Api::<ReplicaSet>::namespaced(env.client(), "default")
        .create(&PostParams::default(), &rs)
        .await
        .expect("create");

    let host = env.addr().to_string();
    let expected = [
        "leader_election_master_status{name=\"kcm\"} 1\n".to_string(),
        "workqueue_adds_total{name=\"replicaset\"}".to_string(),
        "workqueue_work_duration_seconds_count{name=\"replicaset\"}".to_string(),
        // Two pods, the lease and events: at least the pods were created.
        format!("rest_client_requests_total{{code=\"201\",host=\"{host}\",method=\"POST\"}}"),
        format!("rest_client_request_duration_seconds_count{{host=\"{host}\",verb=\"GET\"}}"),
        format!("rest_client_rate_limiter_duration_seconds_count{{host=\"{host}\",verb=\"POST\"}}"),
        "kcm_controller_sync_duration_seconds_count{controller=\"replicaset\",result=\"success\"}"
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
    assert_eq!(exit, app::Exit::Stopped);
    cluster.shutdown().await;
}
