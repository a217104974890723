//! Benchmark workloads for `cargo xtask bench testenv`; one JSON line per workload.
//!
//! * `writes` — 20,000 pod creates then 20,000 merge patches over HTTP (kube-client),
//!   64 requests in flight, 2-thread runtime: throughput and latency percentiles;
//! * `watch_fanout` — 10 watchers on pods, 2,000 creates by one writer; the latency from
//!   the write's start (stamped in an annotation) to each watcher receiving the event;
//! * `list_100k` — 100,000 pods stored (through the library write path), then a full list
//!   and a paginated list (limit 500) over HTTP.
//!
//! Pass a workload name to run just that one.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::Pod;
use kcm_testenv::{TestEnv, TestEnvConfig, registry};
use kcm_util::proc_stats::peak_rss_kib;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::{Value, json};

const WRITES: usize = 20_000;
const IN_FLIGHT: usize = 64;
const WATCHERS: usize = 10;
const FANOUT_EVENTS: usize = 2_000;
const LIST_PODS: usize = 100_000;

fn pod(name: &str, stamp: Option<u128>) -> Pod {
    let mut v = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": "10m"}}}]}
    });
    if let Some(s) = stamp {
        v["metadata"]["annotations"] = json!({"bench/sent-ns": s.to_string()});
    }
    serde_json::from_value(v).unwrap_or_default()
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    (sorted[i.min(sorted.len() - 1)] * 100.0).round() / 100.0
}

async fn start(window: usize) -> TestEnv {
    match TestEnv::start(TestEnvConfig {
        watch_window: window,
        ..TestEnvConfig::default()
    })
    .await
    {
        Ok(env) => env,
        Err(e) => {
            eprintln!("cannot start: {e}");
            std::process::exit(1);
        }
    }
}

async fn timed<F: std::future::Future<Output = bool>>(f: F) -> (bool, f64) {
    let t = Instant::now();
    let ok = f.await;
    (ok, t.elapsed().as_secs_f64() * 1e6)
}

async fn writes() -> Value {
    let env = start(100_000).await;
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let t0 = Instant::now();
    let mut create_lat: Vec<f64> = stream::iter(0..WRITES)
        .map(|i| {
            let pods = pods.clone();
            timed(async move {
                pods.create(&PostParams::default(), &pod(&format!("p-{i}"), None))
                    .await
                    .is_ok()
            })
        })
        .buffer_unordered(IN_FLIGHT)
        .filter_map(|(ok, us)| async move { ok.then_some(us) })
        .collect()
        .await;
    let create_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let mut patch_lat: Vec<f64> = stream::iter(0..WRITES)
        .map(|i| {
            let pods = pods.clone();
            timed(async move {
                let p = json!({"metadata": {"labels": {"round": "1"}}});
                pods.patch(
                    &format!("p-{i}"),
                    &PatchParams::default(),
                    &Patch::Merge(&p),
                )
                .await
                .is_ok()
            })
        })
        .buffer_unordered(IN_FLIGHT)
        .filter_map(|(ok, us)| async move { ok.then_some(us) })
        .collect()
        .await;
    let patch_s = t1.elapsed().as_secs_f64();
    create_lat.sort_by(f64::total_cmp);
    patch_lat.sort_by(f64::total_cmp);
    let out = json!({
        "workload": "writes",
        "impl": "kcm-testenv",
        "writes": WRITES,
        "in_flight": IN_FLIGHT,
        "creates_ok": create_lat.len(),
        "creates_per_s": (create_lat.len() as f64 / create_s).round(),
        "create_p50_us": pct(&create_lat, 0.5),
        "create_p99_us": pct(&create_lat, 0.99),
        "patches_ok": patch_lat.len(),
        "patches_per_s": (patch_lat.len() as f64 / patch_s).round(),
        "patch_p50_us": pct(&patch_lat, 0.5),
        "patch_p99_us": pct(&patch_lat, 0.99),
        "peak_rss_kb": peak_rss_kib(),
    });
    env.shutdown().await;
    out
}

async fn watch_fanout() -> Value {
    let env = start(100_000).await;
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let rv = env.resource_version().to_string();
    let mut tasks = Vec::new();
    for _ in 0..WATCHERS {
        let stream = match pods.watch(&WatchParams::default().timeout(290), &rv).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("watch: {e}");
                std::process::exit(1);
            }
        };
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(FANOUT_EVENTS);
            let mut stream = stream.boxed();
            while lat.len() < FANOUT_EVENTS {
                match stream.try_next().await {
                    Ok(Some(WatchEvent::Added(p))) => {
                        let sent: u128 = p
                            .metadata
                            .annotations
                            .as_ref()
                            .and_then(|a| a.get("bench/sent-ns"))
                            .and_then(|s| s.parse().ok())
                            .unwrap_or(0);
                        lat.push((now_ns().saturating_sub(sent)) as f64 / 1e3);
                    }
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
            lat
        }));
    }
    let t0 = Instant::now();
    for i in 0..FANOUT_EVENTS {
        let _ = pods
            .create(
                &PostParams::default(),
                &pod(&format!("w-{i}"), Some(now_ns())),
            )
            .await;
    }
    let write_s = t0.elapsed().as_secs_f64();
    let mut all = Vec::new();
    for t in tasks {
        if let Ok(Ok(l)) = tokio::time::timeout(Duration::from_secs(120), t).await {
            all.extend(l);
        }
    }
    let wall_s = t0.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    let counts = env.counters();
    let out = json!({
        "workload": "watch_fanout",
        "impl": "kcm-testenv",
        "watchers": WATCHERS,
        "events_written": FANOUT_EVENTS,
        "events_delivered": all.len(),
        "writes_per_s": (FANOUT_EVENTS as f64 / write_s).round(),
        "delivered_per_s": (all.len() as f64 / wall_s).round(),
        "latency_p50_us": pct(&all, 0.5),
        "latency_p99_us": pct(&all, 0.99),
        "latency_max_us": pct(&all, 1.0),
        "watch_events_counted": counts.watch_events("pods"),
        "peak_rss_kb": peak_rss_kib(),
    });
    env.shutdown().await;
    out
}

async fn list_100k() -> Value {
    let env = start(10_000).await;
    let res = registry::find("", "v1", "pods").expect("pods resource");
    let srv = Arc::clone(env.server());
    let t0 = Instant::now();
    for i in 0..LIST_PODS {
        let body = serde_json::to_value(pod(&format!("l-{i:06}"), None)).unwrap_or_default();
        if let Err(e) =
            kcm_testenv::apiserver::handlers::create_value(&srv, res, Some("default"), body)
        {
            eprintln!("create: {e}");
            std::process::exit(1);
        }
    }
    let store_s = t0.elapsed().as_secs_f64();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let t1 = Instant::now();
    let full = pods
        .list(&ListParams::default())
        .await
        .map(|l| l.items.len())
        .unwrap_or(0);
    let full_ms = t1.elapsed().as_secs_f64() * 1e3;
    let t2 = Instant::now();
    let mut paged = 0;
    let mut pages = 0;
    let mut lp = ListParams::default().limit(500);
    loop {
        let Ok(l) = pods.list(&lp).await else { break };
        paged += l.items.len();
        pages += 1;
        match l.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => break,
        }
    }
    let paged_ms = t2.elapsed().as_secs_f64() * 1e3;
    let out = json!({
        "workload": "list_100k",
        "impl": "kcm-testenv",
        "pods": LIST_PODS,
        "store_per_s": (LIST_PODS as f64 / store_s).round(),
        "full_list_items": full,
        "full_list_ms": (full_ms * 100.0).round() / 100.0,
        "paged_items": paged,
        "pages": pages,
        "paged_list_ms": (paged_ms * 100.0).round() / 100.0,
        "peak_rss_kb": peak_rss_kib(),
    });
    env.shutdown().await;
    out
}

fn main() {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            std::process::exit(1);
        }
    };
    let which = std::env::args().nth(1);
    let run = |name: &str| which.as_deref().is_none_or(|w| w == name);
    rt.block_on(async {
        if run("writes") {
            println!("{}", writes().await);
        }
        if run("watch_fanout") {
            println!("{}", watch_fanout().await);
        }
        if run("list_100k") {
            println!("{}", list_100k().await);
        }
    });
}
