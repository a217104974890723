//! `cargo xtask bench replicaset`: N ReplicaSets × M replicas created at once on
//! kcm-testenv with the simulated scheduler and kubelets; measures the time
//! until every ReplicaSet reports all replicas ready, the API writes issued
//! against the minimum, the controller's CPU time and the peak RSS.
//!
//! The API server and the simulation run on their own tokio runtime; the
//! controller (with its informers and client) on another whose worker threads
//! are named `rs-ctrl`, so their on-CPU time (`/proc/self/task/*/schedstat`)
//! is the controller's alone. Peak RSS is the whole process (server included).
//!
//! Usage: `cargo run --release -p kcm-replicaset --example replicaset_bench [-- <replicasets> <replicas>]`
//! (default 500 × 20). Prints one JSON line.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kcm_informer::{InformerFactory, InformerOptions};
use kcm_replicaset::{ReplicaSetController, ReplicaSetControllerConfig};
use kcm_testenv::TestCluster;
use kcm_testenv::sim::SimConfig;
use kcm_util::proc_stats;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CTRL_THREAD: &str = "rs-ctrl";

fn replica_set(i: usize, replicas: i32) -> ReplicaSet {
    let labels: std::collections::BTreeMap<String, String> =
        [("app".to_string(), format!("app-{i}"))]
            .into_iter()
            .collect();
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(format!("rs-{i}")),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some("nginx".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            }),
            ..Default::default()
        },
        status: None,
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n_rs: usize = args.first().map(|s| s.parse()).transpose()?.unwrap_or(500);
    let replicas: i32 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(20);

    let env_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("testenv")
        .enable_all()
        .build()?;
    let ctrl_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(CTRL_THREAD)
        .enable_all()
        .build()?;

    let cluster = env_rt.block_on(
        TestCluster::builder()
            .simulation(SimConfig {
                // Simulated nodes take 110 pods each (upstream default): ~100 per node.
                nodes: (n_rs * usize::try_from(replicas).unwrap_or(0))
                    .div_ceil(100)
                    .max(1),
                pod_ready_after: Duration::from_millis(100),
                gc: false,
                namespace_controller: false,
                ..SimConfig::default()
            })
            .start(),
    )?;
    let env = cluster.env();
    let url: http::Uri = env.url().parse()?;

    // The controller, its client and informers live on the controller runtime.
    let cancel = CancellationToken::new();
    let (factory, run) = ctrl_rt.block_on(async {
        let client = kube::Client::try_from(kube::Config::new(url))?;
        let factory = InformerFactory::new(client.clone(), InformerOptions::default());
        let controller =
            ReplicaSetController::new(client, &factory, ReplicaSetControllerConfig::default())?;
        factory.start(&cancel);
        let run = tokio::spawn(controller.run(cancel.clone()));
        factory
            .wait_for_cache_sync(Some(Duration::from_secs(60)), &cancel)
            .await;
        anyhow::Ok((factory, run))
    })?;

    let before = env.counters();
    let cpu_before = proc_stats::threads_cpu_ns(CTRL_THREAD);
    let start = Instant::now();
    let elapsed_ready = env_rt.block_on(async {
        let client = env.client();
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        futures::stream::iter(0..n_rs)
            .map(|i| {
                let api = api.clone();
                async move {
                    api.create(&PostParams::default(), &replica_set(i, replicas))
                        .await
                }
            })
            .buffer_unordered(32)
            .for_each(|r| async move {
                if let Err(e) = r {
                    eprintln!("create failed: {e}");
                }
            })
            .await;
        let created = start.elapsed();
        let deadline = Instant::now() + Duration::from_secs(1800);
        loop {
            let list = api.list(&ListParams::default()).await?;
            let ready = list
                .items
                .iter()
                .filter(|rs| {
                    rs.status.as_ref().is_some_and(|s| {
                        s.replicas == replicas
                            && s.ready_replicas.unwrap_or(0) == replicas
                            && s.available_replicas.unwrap_or(0) == replicas
                    })
                })
                .count();
            if ready == n_rs {
                return anyhow::Ok((created, start.elapsed()));
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "not ready after 30 min: {ready}/{n_rs}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })?;
    let ctrl_cpu_s = (proc_stats::threads_cpu_ns(CTRL_THREAD) - cpu_before) as f64 / 1e9;
    let after = env.counters();
    let delta = |verb: &str, res: &str| after.count(verb, res) - before.count(verb, res);
    let pods = (n_rs as u64) * u64::try_from(replicas).unwrap_or(0);
    let pod_creates = delta("create", "pods");
    let status_updates = delta("update", "replicasets/status");
    let pod_patches = delta("patch", "pods");
    let pod_deletes = delta("delete", "pods");
    let event_writes = delta("create", "events") + delta("patch", "events");
    let rs_gets = delta("get", "replicasets");
    let conflicts = |c: &kcm_testenv::RequestCounts| {
        c.requests
            .iter()
            .filter(|((v, r, code), _)| v == "update" && r == "replicasets/status" && *code == 409)
            .map(|(_, n)| n)
            .sum::<u64>()
    };
    let status_conflicts = conflicts(&after) - conflicts(&before);

    cancel.cancel();
    ctrl_rt.block_on(async {
        let _ = run.await;
        factory.shutdown().await;
    });
    let process_cpu = proc_stats::process_cpu_secs();
    drop(ctrl_rt);
    env_rt.block_on(cluster.shutdown());

    let line = json!({
        "workload": "replicaset",
        "impl": "kcm-replicaset",
        "replicasets": n_rs,
        "replicas": replicas,
        "pods": pods,
        "create_all_rs_ms": elapsing_ms(elapsed_ready.0),
        "time_to_all_ready_ms": elapsing_ms(elapsed_ready.1),
        "pod_creates": pod_creates,
        "status_updates": status_updates,
        "status_conflicts": status_conflicts,
        "controller_writes": pod_creates + status_updates + pod_patches + pod_deletes,
        "min_writes": pods + n_rs as u64,
        "pod_patches": pod_patches,
        "pod_deletes": pod_deletes,
        "event_writes": event_writes,
        "uncached_rs_gets": rs_gets,
        "controller_cpu_s": (ctrl_cpu_s * 1000.0).round() / 1000.0,
        "process_cpu_s": process_cpu,
        "peak_rss_kb_process": proc_stats::peak_rss_kib(),
    });
    println!("{line}");
    Ok(())
}

fn elapsing_ms(d: Duration) -> u128 {
    d.as_millis()
}
