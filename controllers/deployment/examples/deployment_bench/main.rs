//! `cargo xtask bench deployment`: N Deployments × M replicas created at once on kcm-testenv
//! with the simulated scheduler and kubelets and the ReplicaSet controller running, then every
//! Deployment rolled to a new image. For each phase: the time until every Deployment is complete
//! (what `kubectl rollout status` checks), the API writes the controllers issued against the
//! minimum needed, the controllers' CPU time against the test API server's, and the peak RSS.
//!
//! Threads (each group is its own tokio runtime; `/proc/self/task/*/schedstat` gives per-thread
//! on-CPU time, summed by thread name):
//!
//! | name | what runs there |
//! |---|---|
//! | `testenv` | the test API server (accept loop, every request handler, watch fan-out) |
//! | `sim` | the simulated scheduler, kubelets and node heartbeats (their client side) |
//! | `bench` | this driver: creating, patching and polling the Deployments (its client side) |
//! | `kcm-inf` | the shared `InformerFactory` (Deployment, ReplicaSet, Pod informers) and the event handlers both controllers register on it |
//! | `dep-ctrl` | the Deployment controller: workers, its client, its event broadcaster |
//! | `rs-ctrl` | the ReplicaSet controller: workers, its client, its event broadcaster |
//!
//! "Controller CPU" is `kcm-inf` + `dep-ctrl` + `rs-ctrl` (what a kube-controller-manager process
//! running these two controllers would spend); "server CPU" is `testenv` alone.
//!
//! Writes are counted on the client side: each controller gets its own `kube::Client` with a
//! counting layer, so the figures are exactly that controller's requests (the simulation's and
//! this driver's requests do not appear in them). The server's own counters give the totals.
//!
//! Usage: `cargo run --release -p kcm-deployment --example deployment_bench [-- <deployments> <replicas>
//! [<namespaces>]]` (default 1000 × 10, all in `default`; with k > 1 namespaces, Deployment i
//! goes to `bench-<i mod k>`). Prints one JSON line per phase (`create`, `rollout`) and a `total` line.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, ReplicaSet};
use k8s_openapi::api::core::v1::{Container, Namespace, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kcm_deployment::{DeploymentController, DeploymentControllerConfig};
use kcm_informer::{InformerFactory, InformerOptions};
use kcm_replicaset::{ReplicaSetController, ReplicaSetControllerConfig};
use kcm_testenv::sim::{SimConfig, Simulation};
use kcm_testenv::{TestEnv, TestEnvConfig};
use kcm_util::proc_stats;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const OLD_IMAGE: &str = "nginx:1.27";
const NEW_IMAGE: &str = "nginx:1.28";
/// How often the driver lists the Deployments (and ReplicaSets) to check completion.
const POLL: Duration = Duration::from_millis(500);
/// Pause after a phase completes before its counters are read, so that writes the controllers
/// issue right after completion (trailing status syncs) belong to the phase that caused them.
const SETTLE: Duration = Duration::from_secs(2);
/// Requests in flight while the driver creates or patches the Deployments.
const DRIVER_CONCURRENCY: usize = 32;

mod min_writes;
mod request_log;

use min_writes::{default_fenceposts, min_writes_create, min_writes_rollout, rolling_scale_steps};
use request_log::{
    Counts, RequestLog, conflicts, counting_client, counts_json, diff, event_writes, object_writes,
    reads, server_diff, sum,
};

// ---------------------------------------------------------------------------------------------
// CPU and memory (`kcm_util::proc_stats`). Every runtime keeps its blocking threads alive for
// the whole run, so no thread's on-CPU time is lost by it exiting.

const THREAD_GROUPS: [&str; 6] = ["testenv", "sim", "bench", "kcm-inf", "dep-ctrl", "rs-ctrl"];

/// On-CPU seconds per thread group, and the whole process.
#[derive(Clone)]
struct CpuSample {
    groups: BTreeMap<&'static str, f64>,
    process: f64,
}

impl CpuSample {
    fn now() -> Self {
        Self {
            groups: THREAD_GROUPS
                .iter()
                .map(|g| (*g, proc_stats::threads_cpu_ns(g) as f64 / 1e9))
                .collect(),
            process: proc_stats::process_cpu_secs(),
        }
    }

    fn since(&self, before: &CpuSample) -> CpuSample {
        CpuSample {
            groups: self
                .groups
                .iter()
                .map(|(g, s)| (*g, s - before.groups.get(g).copied().unwrap_or(0.0)))
                .collect(),
            process: self.process - before.process,
        }
    }

    fn get(&self, group: &str) -> f64 {
        self.groups.get(group).copied().unwrap_or(0.0)
    }

    fn controllers(&self) -> f64 {
        self.get("kcm-inf") + self.get("dep-ctrl") + self.get("rs-ctrl")
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

// ---------------------------------------------------------------------------------------------
// Objects and completion checks.

/// The namespace of Deployment `i`: `default` with one namespace, else `bench-<i mod k>`.
fn namespace_of(i: usize, namespaces: usize) -> String {
    if namespaces <= 1 {
        "default".into()
    } else {
        format!("bench-{}", i % namespaces)
    }
}

fn deployment(i: usize, replicas: i32, namespaces: usize) -> Deployment {
    let labels: BTreeMap<String, String> = [("app".to_string(), format!("app-{i}"))]
        .into_iter()
        .collect();
    Deployment {
        metadata: ObjectMeta {
            name: Some(format!("d-{i}")),
            namespace: Some(namespace_of(i, namespaces)),
            ..Default::default()
        },
        // No strategy: the API server defaults it to RollingUpdate, maxSurge and
        // maxUnavailable 25% (3 and 2 of 10 replicas); revisionHistoryLimit 10; no minReadySeconds.
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some(OLD_IMAGE.into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

/// What `kubectl rollout status` waits for: the controller observed the latest generation, every
/// replica is updated, no old replica is left, and every updated replica is available.
fn rollout_complete(d: &Deployment, replicas: i32) -> bool {
    let Some(st) = d.status.as_ref() else {
        return false;
    };
    st.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0)
        && st.updated_replicas.unwrap_or(0) == replicas
        && st.replicas.unwrap_or(0) == replicas
        && st.available_replicas.unwrap_or(0) == replicas
}

fn rs_image(rs: &ReplicaSet) -> &str {
    rs.spec
        .template
        .as_ref()
        .and_then(|t| t.spec.as_ref())
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.as_deref())
        .unwrap_or_default()
}

/// An old ReplicaSet is done when both its desired and its observed replicas are 0.
fn old_rs_scaled_down(rs: &ReplicaSet) -> bool {
    rs.spec.replicas.unwrap_or(1) == 0 && rs.status.as_ref().map_or(0, |s| s.replicas) == 0
}

/// Polls until every Deployment is complete (and, with `old_image`, every ReplicaSet of that
/// image is scaled to 0). Returns the time it took from `start`.
async fn wait_all_complete(
    client: &kube::Client,
    n: usize,
    replicas: i32,
    old_image: Option<&str>,
    start: Instant,
) -> anyhow::Result<Duration> {
    let deployments: Api<Deployment> = Api::all(client.clone());
    let replica_sets: Api<ReplicaSet> = Api::all(client.clone());
    let deadline = Instant::now() + Duration::from_secs(1800);
    let mut last_report = Instant::now();
    loop {
        let list = deployments.list(&ListParams::default()).await?;
        let complete = list
            .items
            .iter()
            .filter(|d| rollout_complete(d, replicas))
            .count();
        let mut old_left = 0;
        if complete == n
            && let Some(old) = old_image
        {
            old_left = replica_sets
                .list(&ListParams::default())
                .await?
                .items
                .iter()
                .filter(|rs| rs_image(rs) == old && !old_rs_scaled_down(rs))
                .count();
        }
        if complete == n && old_left == 0 {
            return Ok(start.elapsed());
        }
        if last_report.elapsed() > Duration::from_secs(30) {
            eprintln!(
                "[{:?}] {complete}/{n} complete, {old_left} old ReplicaSets not at 0",
                start.elapsed()
            );
            last_report = Instant::now();
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "not complete after 30 min: {complete}/{n}, {old_left} old ReplicaSets left"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// Runs `op` on every index with bounded concurrency; returns the failures.
async fn for_all<F, Fut>(n: usize, op: F) -> usize
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<(), kube::Error>>,
{
    futures::stream::iter(0..n)
        .map(op)
        .buffer_unordered(DRIVER_CONCURRENCY)
        .fold(0, |failed, r| async move {
            match r {
                Ok(()) => failed,
                Err(e) => {
                    eprintln!("driver request failed: {e}");
                    failed + 1
                }
            }
        })
        .await
}

// ---------------------------------------------------------------------------------------------

struct Phase {
    name: &'static str,
    driver_ms: u128,
    complete_ms: u128,
    dep: Counts,
    rs: Counts,
    informer: Counts,
    server: kcm_testenv::RequestCounts,
    cpu: CpuSample,
    min_writes: u64,
}

struct Logs {
    dep: RequestLog,
    rs: RequestLog,
    informer: RequestLog,
}

struct Shape {
    deployments: usize,
    replicas: i32,
    namespaces: usize,
}

fn phase_json(p: &Phase, shape: &Shape, load: &str) -> Value {
    let (n, replicas, namespaces) = (shape.deployments, shape.replicas, shape.namespaces);
    let pods = n as u64 * u64::try_from(replicas).unwrap_or(0);
    let dep_writes = object_writes(&p.dep);
    let rs_writes = object_writes(&p.rs);
    let controller_writes = dep_writes + rs_writes;
    let server_cpu = p.cpu.get("testenv");
    let ctrl_cpu = p.cpu.controllers();
    json!({
        "workload": "deployment",
        "impl": "kcm-deployment + kcm-replicaset",
        "phase": p.name,
        "deployments": n,
        "namespaces": namespaces,
        "replicas": replicas,
        "pods": pods,
        "driver_requests_ms": p.driver_ms,
        "time_to_all_complete_ms": p.complete_ms,
        "controller_writes": controller_writes,
        "min_writes": p.min_writes,
        "write_amplification": if p.min_writes > 0 {
            (controller_writes as f64 / p.min_writes as f64 * 100.0).round() / 100.0
        } else { 0.0 },
        "dep_ctrl_writes": dep_writes,
        "rs_ctrl_writes": rs_writes,
        "rs_creates": sum(&p.dep, "create", "replicasets"),
        "rs_updates": sum(&p.dep, "update", "replicasets"),
        "rs_patches": sum(&p.dep, "patch", "replicasets"),
        "deployment_status_updates": sum(&p.dep, "update", "deployments/status"),
        "deployment_updates": sum(&p.dep, "update", "deployments"),
        "pod_creates": sum(&p.rs, "create", "pods"),
        "pod_deletes": sum(&p.rs, "delete", "pods"),
        "rs_status_updates": sum(&p.rs, "update", "replicasets/status"),
        "conflicts_409": conflicts(&p.dep) + conflicts(&p.rs),
        "event_writes": event_writes(&p.dep) + event_writes(&p.rs),
        "controller_uncached_reads": reads(&p.dep) + reads(&p.rs),
        "informer_lists": sum(&p.informer, "list", "deployments")
            + sum(&p.informer, "list", "replicasets")
            + sum(&p.informer, "list", "pods"),
        "dep_ctrl_requests": counts_json(&p.dep),
        "rs_ctrl_requests": counts_json(&p.rs),
        "server_writes_all_clients": p.server.writes(),
        "server_reads_all_clients": p.server.reads(),
        "controller_cpu_s": round3(ctrl_cpu),
        "controller_cpu_split_s": {
            "informers+handlers": round3(p.cpu.get("kcm-inf")),
            "deployment": round3(p.cpu.get("dep-ctrl")),
            "replicaset": round3(p.cpu.get("rs-ctrl")),
        },
        "testenv_server_cpu_s": round3(server_cpu),
        "sim_cpu_s": round3(p.cpu.get("sim")),
        "driver_cpu_s": round3(p.cpu.get("bench")),
        "controller_over_server_cpu": if server_cpu > 0.0 { round3(ctrl_cpu / server_cpu) } else { 0.0 },
        "process_cpu_s": round3(p.cpu.process),
        "peak_rss_kb_process": proc_stats::peak_rss_kib(),
        "loadavg": load,
    })
}

fn runtime(name: &str, workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .thread_keep_alive(Duration::from_secs(24 * 3600))
        .enable_all()
        .build()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let replicas: i32 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(10);
    let namespaces: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(1);
    anyhow::ensure!(replicas > 0, "replicas must be positive");
    let r = u64::try_from(replicas)?;
    let pods = n as u64 * r;

    let env_rt = runtime("testenv", 2)?;
    let sim_rt = runtime("sim", 2)?;
    let bench_rt = runtime("bench", 1)?;
    let inf_rt = runtime("kcm-inf", 2)?;
    let dep_rt = runtime("dep-ctrl", 2)?;
    let rs_rt = runtime("rs-ctrl", 2)?;

    let env = env_rt.block_on(TestEnv::start(TestEnvConfig::default()))?;
    let url: http::Uri = env.url().parse()?;
    let sim = sim_rt.block_on(async {
        let client = kube::Client::try_from(kube::Config::new(url.clone()))?;
        let sim = Simulation::start(
            client,
            SimConfig {
                // 110 pods fit a node (upstream default). During the rollout up to 13 of 10 pods
                // run per Deployment, plus terminating ones: 2 nodes' worth per 100 pods keeps
                // capacity out of the way.
                nodes: (pods * 2).div_ceil(100).max(1) as usize,
                pod_ready_after: Duration::from_millis(100),
                // A deleted pod (grace 30 s) is gone after 1 s.
                max_grace: Duration::from_secs(1),
                gc: false,
                namespace_controller: false,
                ..SimConfig::default()
            },
        )
        .await?;
        anyhow::Ok(sim)
    })?;

    let logs = Logs {
        dep: RequestLog::default(),
        rs: RequestLog::default(),
        informer: RequestLog::default(),
    };
    let cancel = CancellationToken::new();
    let factory = inf_rt.block_on(async {
        let client = counting_client(&url, &logs.informer)?;
        anyhow::Ok(InformerFactory::new(client, InformerOptions::default()))
    })?;
    let dep_run = dep_rt.block_on(async {
        let client = counting_client(&url, &logs.dep)?;
        let c = DeploymentController::new(client, &factory, DeploymentControllerConfig::default())?;
        anyhow::Ok(tokio::spawn(c.run(cancel.clone())))
    })?;
    let rs_run = rs_rt.block_on(async {
        let client = counting_client(&url, &logs.rs)?;
        let c = ReplicaSetController::new(client, &factory, ReplicaSetControllerConfig::default())?;
        anyhow::Ok(tokio::spawn(c.run(cancel.clone())))
    })?;
    inf_rt.block_on(async {
        factory.start(&cancel);
        factory
            .wait_for_cache_sync(Some(Duration::from_secs(60)), &cancel)
            .await;
    });
    let driver = bench_rt.block_on(async {
        let driver = kube::Client::try_from(kube::Config::new(url))?;
        let api: Api<Namespace> = Api::all(driver.clone());
        for k in 0..namespaces.min(n) {
            let name = namespace_of(k, namespaces);
            if name != "default" {
                let ns = Namespace {
                    metadata: ObjectMeta {
                        name: Some(name),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                api.create(&PostParams::default(), &ns).await?;
            }
        }
        anyhow::Ok(driver)
    })?;

    let (s, u) = default_fenceposts(r);
    let shape = Shape {
        deployments: n,
        replicas,
        namespaces,
    };
    let mut phases = Vec::new();
    let first_sample = (
        logs.dep.snapshot(),
        logs.rs.snapshot(),
        logs.informer.snapshot(),
        env.counters(),
        CpuSample::now(),
    );
    let mut before = first_sample.clone();
    for phase in ["create", "rollout"] {
        let start = Instant::now();
        let (driver_ms, complete) = bench_rt.block_on(async {
            let failed = if phase == "create" {
                for_all(n, |i| {
                    let api: Api<Deployment> =
                        Api::namespaced(driver.clone(), &namespace_of(i, namespaces));
                    async move {
                        api.create(&PostParams::default(), &deployment(i, replicas, namespaces))
                            .await
                            .map(drop)
                    }
                })
                .await
            } else {
                let patch = json!({"spec": {"template": {"spec": {
                    "containers": [{"name": "c", "image": NEW_IMAGE}]
                }}}});
                for_all(n, |i| {
                    let api: Api<Deployment> =
                        Api::namespaced(driver.clone(), &namespace_of(i, namespaces));
                    let patch = patch.clone();
                    async move {
                        api.patch(
                            &format!("d-{i}"),
                            &PatchParams::default(),
                            &Patch::Strategic(&patch),
                        )
                        .await
                        .map(drop)
                    }
                })
                .await
            };
            anyhow::ensure!(failed == 0, "{failed} driver requests failed");
            let driver_ms = start.elapsed().as_millis();
            let old = (phase == "rollout").then_some(OLD_IMAGE);
            let complete = wait_all_complete(&driver, n, replicas, old, start).await?;
            tokio::time::sleep(SETTLE).await;
            anyhow::Ok((driver_ms, complete))
        })?;
        let after = (
            logs.dep.snapshot(),
            logs.rs.snapshot(),
            logs.informer.snapshot(),
            env.counters(),
            CpuSample::now(),
        );
        let server = server_diff(&after.3, &before.3);
        let per_deployment = if phase == "create" {
            min_writes_create(r)
        } else {
            min_writes_rollout(r, s, u)
        };
        phases.push(Phase {
            name: phase,
            driver_ms,
            complete_ms: complete.as_millis(),
            dep: diff(&after.0, &before.0),
            rs: diff(&after.1, &before.1),
            informer: diff(&after.2, &before.2),
            server,
            cpu: after.4.since(&before.4),
            min_writes: per_deployment * n as u64,
        });
        let load = proc_stats::loadavg_text();
        if let Some(p) = phases.last() {
            println!("{}", phase_json(p, &shape, &load));
        }
        before = after;
    }

    // Totals over both phases.
    let total = Phase {
        name: "total",
        driver_ms: phases.iter().map(|p| p.driver_ms).sum(),
        complete_ms: phases.iter().map(|p| p.complete_ms).sum(),
        dep: diff(&before.0, &first_sample.0),
        rs: diff(&before.1, &first_sample.1),
        informer: diff(&before.2, &first_sample.2),
        server: server_diff(&before.3, &first_sample.3),
        cpu: before.4.since(&first_sample.4),
        min_writes: phases.iter().map(|p| p.min_writes).sum(),
    };
    let mut line = phase_json(&total, &shape, &proc_stats::loadavg_text());
    if let Value::Object(m) = &mut line {
        let (create_size, steps) = rolling_scale_steps(r, s, u);
        m.insert(
            "min_writes_per_deployment".into(),
            json!({
                "create": min_writes_create(r),
                "rollout": min_writes_rollout(r, s, u),
                "rollout_fenceposts": {"max_surge": s, "max_unavailable": u},
                "rollout_new_rs_created_at": create_size,
                "rollout_rs_scale_updates": steps,
            }),
        );
    }
    println!("{line}");

    cancel.cancel();
    dep_rt.block_on(async {
        let _ = dep_run.await;
    });
    rs_rt.block_on(async {
        let _ = rs_run.await;
    });
    inf_rt.block_on(factory.shutdown());
    sim_rt.block_on(sim.shutdown());
    env_rt.block_on(env.shutdown());
    Ok(())
}
