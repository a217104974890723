//! Informer benchmark: initial sync time, peak RSS and steady-state RSS of a pod cache.
//!
//! The parent process starts kcm-testenv, stores `BENCH_PODS` (default 100,000) realistic pods of
//! about 2–3 KB in 100 namespaces (written straight into the server's storage, not over HTTP), and
//! then runs each variant in its **own child process** (this same binary with `--child`), so every
//! RSS figure is that of a process holding exactly one cache and nothing else:
//!
//! * `informer` — `SharedIndexInformer<Pod>` (k8s-openapi `Pod`);
//! * `informer-transform` — the same with a transform dropping `managedFields`, the
//!   last-applied annotation and unused status fields;
//! * `informer-compact` — `SharedIndexInformer<Compact<Pod>>`: full objects, metadata decoded and
//!   the rest kept as JSON; its line also carries the time to decode every cached pod once;
//! * `kube-runtime` — `kube_runtime::reflector(writer, watcher(api, Config::default()))`;
//! * `informer-projected` — `SharedIndexInformer<PodLite>`, a projected type holding only what the
//!   ReplicaSet/Deployment controllers read (managedFields also dropped by a transform);
//! * `reflector-only` — the reflector writing into a bare map;
//! * `client-go` — client-go v0.37.2's pod `SharedIndexInformer`: the Go program named by
//!   `BENCH_PEER` (`upstream/cmd/peerbench`, built by `cargo xtask bench informer`), run as
//!   `peerbench informer --url URL --pods N`; skipped when `BENCH_PEER` is unset.
//!   client-go v0.37 starts with a streaming list (its `WatchListClient` gate is on by default);
//!   `client-go-list` turns the gate off (`KUBE_FEATURE_WatchListClient=false`), for the
//!   LIST that `informer` starts with. `client-go-protobuf` (only when named in
//!   `BENCH_MODES`) adds `--protobuf`.
//!
//! Each child prints one JSON line: sync time (process start of the watch → cache holds every pod),
//! process CPU time until then, baseline RSS (before the client starts), peak RSS (`VmHWM`) and
//! steady-state RSS (`VmRSS` 3 s after sync, once the list buffers were freed).
//!
//! `BENCH_ROUNDS` (default 1) runs every mode that many times on the same server, the order of the
//! modes reversed every other round; each line then carries its `round`. `BENCH_MODES` (comma
//! separated) picks modes.
//!
//! Run: `cargo run --release -p kcm-informer --example informer_bench` (or `cargo xtask bench informer`).

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_informer::{CancellationToken, Compact, InformerOptions, SharedIndexInformer};
use kcm_testenv::apiserver::handlers;
use kcm_testenv::{TestEnv, TestEnvConfig, registry};
use kcm_util::proc_stats::{peak_rss_kib, process_cpu_ms, rss_kib};
use serde::Deserialize;
use serde_json::{Value, json};

const NAMESPACES: usize = 100;
const MODES: &[&str] = &[
    "informer",
    "informer-transform",
    "informer-compact",
    "kube-runtime",
    "informer-projected",
    "reflector-only",
    "client-go",
    "client-go-list",
];

/// Process CPU time (user + system, every thread) at the moment the cache was seen synced, in ms.
static SYNC_CPU_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn mib(kib: u64) -> f64 {
    (kib as f64 / 1024.0 * 10.0).round() / 10.0
}

/// A realistic ReplicaSet-owned pod (~2.5 KB of JSON with managedFields and last-applied).
fn pod(ns: &str, i: usize) -> Value {
    let name = format!("web-{i:06}");
    let last_applied = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "web", "tier": "frontend"}},
        "spec": {"containers": [{"name": "web", "image": "registry.example.com/team/web:1.27.3",
            "ports": [{"containerPort": 8080}], "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    })
    .to_string();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns,
            "generateName": "web-7d9f8b6c5-",
            "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "7d9f8b6c5", "version": "v1.27.3"},
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": last_applied,
                "prometheus.io/scrape": "true", "prometheus.io/port": "9102"
            },
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f8b6c5",
                "uid": "5f0c2a7e-8d0b-4a39-9a57-3a1f0c9e2b11", "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-11-23T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}, "f:version": {}},
                   "f:ownerReferences": {".": {}, "k:{\"uid\":\"5f0c2a7e-8d0b-4a39-9a57-3a1f0c9e2b11\"}": {}}},
                   "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                     "f:ports": {}, "f:resources": {}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}, "f:volumeMounts": {}}},
                   "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {},
                   "f:terminationGracePeriodSeconds": {}, "f:volumes": {}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-11-23T10:00:05Z",
                 "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}}}
            ]
        },
        "spec": {
            "containers": [{
                "name": "web", "image": "registry.example.com/team/web:1.27.3", "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "PORT", "value": "8080"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"
            }],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
            "nodeName": format!("node-{:03}", i % 200), "serviceAccountName": "default",
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
            "terminationGracePeriodSeconds": 30, "enableServiceLinks": true,
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.3.17", "podIP": format!("10.244.{}.{}", (i / 250) % 250, i % 250),
            "startTime": "2026-11-23T10:00:01Z", "qosClass": "Burstable",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-11-23T10:00:01Z"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-23T10:00:05Z"},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-23T10:00:05Z"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-23T10:00:00Z"}],
            "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "started": true,
                "image": "registry.example.com/team/web:1.27.3",
                "imageID": "registry.example.com/team/web@sha256:3f1c5e2b9a7d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a",
                "containerID": "containerd://9b1f2e3d4c5b6a7980f1e2d3c4b5a69788f7e6d5c4b3a2918f7e6d5c4b3a2910",
                "state": {"running": {"startedAt": "2026-11-23T10:00:04Z"}}}]
        }
    })
}

/// What the ReplicaSet and Deployment controllers read from a Pod. (The benchmark only holds the
/// fields, hence `dead_code`.)
#[allow(dead_code)]
#[derive(Clone, Debug, Deserialize)]
struct PodLite {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: PodLiteSpec,
    #[serde(default)]
    status: PodLiteStatus,
}

#[allow(dead_code)]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodLiteSpec {
    #[serde(default)]
    node_name: Option<String>,
}

#[allow(dead_code)]
#[derive(Clone, Debug, Default, Deserialize)]
struct PodLiteStatus {
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    conditions: Vec<PodLiteCondition>,
}

#[allow(dead_code)]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodLiteCondition {
    #[serde(rename = "type")]
    type_: String,
    status: String,
    #[serde(default)]
    last_transition_time: Option<String>,
}

impl k8s_openapi::Resource for PodLite {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for PodLite {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

fn slim_pod(mut p: Pod) -> Pod {
    p.metadata.managed_fields = None;
    if let Some(a) = p.metadata.annotations.as_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    if let Some(s) = p.status.as_mut() {
        s.container_statuses = None;
        s.host_ip = None;
        s.host_ips = None;
        s.pod_ips = None;
        s.qos_class = None;
    }
    if let Some(s) = p.spec.as_mut() {
        s.volumes = None;
        s.tolerations = None;
    }
    p
}

async fn wait_for_len(len: impl Fn() -> usize, want: usize) {
    while len() < want {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    SYNC_CPU_MS.store(process_cpu_ms(), std::sync::atomic::Ordering::Relaxed);
}

async fn run_informer<K: kcm_informer::InformerObject>(
    client: kube::Client,
    pods: usize,
    transform: Option<fn(K) -> K>,
) -> (Duration, usize, usize) {
    let (informer, elapsed, len, with_managed_fields) =
        fill_informer(client, pods, transform).await;
    // Keep the informer (and its cache) alive until the steady-state RSS was read by the caller.
    std::mem::forget(informer);
    (elapsed, len, with_managed_fields)
}

/// Starts an informer of `K` (with `transform`), waits until it holds `pods` objects and lets
/// it settle for 3 s; returns it with the time it took to fill, its length and how many cached
/// objects still carry `managedFields`.
async fn fill_informer<K: kcm_informer::InformerObject>(
    client: kube::Client,
    pods: usize,
    transform: Option<fn(K) -> K>,
) -> (SharedIndexInformer<K>, Duration, usize, usize) {
    let start = Instant::now();
    let informer = SharedIndexInformer::<K>::new(client, InformerOptions::default());
    if let Some(t) = transform {
        informer.set_transform(t).expect("transform before start");
    }
    let cancel = CancellationToken::new();
    {
        let informer = informer.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { informer.run(cancel).await });
    }
    wait_for_len(|| informer.store().len(), pods).await;
    let elapsed = start.elapsed();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let len = informer.store().len();
    let mut with_managed_fields = 0;
    informer.store().for_each(|o| {
        if o.meta()
            .managed_fields
            .as_ref()
            .is_some_and(|m| !m.is_empty())
        {
            with_managed_fields += 1;
        }
    });
    (informer, elapsed, len, with_managed_fields)
}

/// The reflector alone, writing into a plain `HashMap<ObjectKey, Arc<Pod>>` (no store, no indices,
/// no handlers): separates the list/watch path from the cache.
async fn run_reflector_only(client: kube::Client, pods: usize) -> (Duration, usize, usize) {
    use kcm_informer::ObjectKey;
    use kcm_reflector::{Reflector, ReflectorConfig, ReflectorStore};
    #[derive(Default)]
    struct MapStore(Arc<parking_lot::Mutex<std::collections::HashMap<ObjectKey, Arc<Pod>>>>);
    impl ReflectorStore<Pod> for MapStore {
        fn add(&mut self, obj: Pod) {
            self.0
                .lock()
                .insert(ObjectKey::from_meta(&obj.metadata), Arc::new(obj));
        }
        fn update(&mut self, obj: Pod) {
            self.add(obj);
        }
        fn delete(&mut self, obj: Pod) {
            self.0.lock().remove(&ObjectKey::from_meta(&obj.metadata));
        }
        fn replace(&mut self, objects: Vec<Pod>, _rv: String) {
            let map = objects
                .into_iter()
                .map(|o| (ObjectKey::from_meta(&o.metadata), Arc::new(o)))
                .collect();
            *self.0.lock() = map;
        }
    }
    let start = Instant::now();
    let map = MapStore::default();
    let view = Arc::clone(&map.0);
    tokio::spawn(async move {
        let mut map = map;
        let mut reflector = Reflector::<Pod>::new(client, None, ReflectorConfig::default());
        reflector.run(&mut map, CancellationToken::new()).await;
    });
    wait_for_len(|| view.lock().len(), pods).await;
    let elapsed = start.elapsed();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let len = view.lock().len();
    (elapsed, len, 0)
}

async fn run_kube_runtime(client: kube::Client, pods: usize) -> (Duration, usize, usize) {
    use kube_runtime::{WatchStreamExt, reflector, watcher};
    let start = Instant::now();
    let api: kube::Api<Pod> = kube::Api::all(client);
    let (reader, writer) = reflector::store::<Pod>();
    let stream = reflector(writer, watcher(api, watcher::Config::default())).applied_objects();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while stream.next().await.is_some() {}
    });
    wait_for_len(|| reader.len(), pods).await;
    let elapsed = start.elapsed();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let len = reader.len();
    let with_managed_fields = reader
        .state()
        .iter()
        .filter(|o| {
            o.metadata
                .managed_fields
                .as_ref()
                .is_some_and(|m| !m.is_empty())
        })
        .count();
    std::mem::forget(reader);
    (elapsed, len, with_managed_fields)
}

/// Decode time of every cached pod once, for `informer-compact` (ms, µs per pod).
static DECODE_ALL: parking_lot::Mutex<Option<(f64, f64)>> = parking_lot::Mutex::new(None);
/// Peak and steady RSS (KiB) read before the decode pass of `informer-compact`.
static RSS_BEFORE_DECODE: parking_lot::Mutex<Option<(u64, u64)>> = parking_lot::Mutex::new(None);

/// `informer` with `Compact<Pod>`; after the RSS settled, every pod is decoded once (timed).
async fn run_compact(client: kube::Client, pods: usize) -> (Duration, usize, usize) {
    let (informer, elapsed, len, with_managed_fields) =
        fill_informer::<Compact<Pod>>(client, pods, None).await;
    *RSS_BEFORE_DECODE.lock() = Some((peak_rss_kib(), rss_kib()));
    let all = informer.store().list();
    let t = Instant::now();
    let decoded = all.iter().filter(|c| c.decode().is_ok()).count();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(decoded, len, "every cached pod decodes");
    *DECODE_ALL.lock() = Some((ms, ms * 1e3 / len.max(1) as f64));
    drop(all);
    std::mem::forget(informer);
    (elapsed, len, with_managed_fields)
}

fn child(mode: &str, url: &str, pods: usize) {
    let baseline = rss_kib();
    let cpu0 = process_cpu_ms();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (elapsed, len, with_managed_fields) = rt.block_on(async {
        let uri: http::Uri = url.parse().expect("url");
        let client = kube::Client::try_from(kube::Config::new(uri)).expect("client");
        match mode {
            "informer" => run_informer::<Pod>(client, pods, None).await,
            "informer-transform" => run_informer::<Pod>(client, pods, Some(slim_pod)).await,
            "informer-compact" => run_compact(client, pods).await,
            "informer-projected" => {
                let drop_managed: fn(PodLite) -> PodLite = |mut p| {
                    p.metadata.managed_fields = None;
                    if let Some(a) = p.metadata.annotations.as_mut() {
                        a.remove("kubectl.kubernetes.io/last-applied-configuration");
                    }
                    p
                };
                run_informer::<PodLite>(client, pods, Some(drop_managed)).await
            }
            "kube-runtime" => run_kube_runtime(client, pods).await,
            "reflector-only" => run_reflector_only(client, pods).await,
            other => panic!("unknown mode {other}"),
        }
    });
    let (peak, steady) = RSS_BEFORE_DECODE
        .lock()
        .unwrap_or_else(|| (peak_rss_kib(), rss_kib()));
    let mut line = json!({
        "bench": "informer",
        "mode": mode,
        "pods": len,
        "cached_with_managed_fields": with_managed_fields,
        "namespaces": NAMESPACES,
        "initial_sync_s": (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
        "sync_cpu_ms": SYNC_CPU_MS
            .load(std::sync::atomic::Ordering::Relaxed)
            .saturating_sub(cpu0),
        "baseline_rss_mib": mib(baseline),
        "peak_rss_mib": mib(peak),
        "steady_rss_mib": mib(steady),
    });
    if let Some((ms, us_per_pod)) = *DECODE_ALL.lock() {
        line["decode_all_ms"] = json!((ms * 10.0).round() / 10.0);
        line["decode_us_per_pod"] = json!((us_per_pod * 100.0).round() / 100.0);
    }
    println!("{line}");
    std::process::exit(0);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        let mode = args.get(2).expect("mode");
        let url = args.get(3).expect("url");
        let pods: usize = args.get(4).and_then(|v| v.parse().ok()).expect("pods");
        child(mode, url, pods);
        return;
    }
    let pods: usize = std::env::var("BENCH_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let env = TestEnv::start(TestEnvConfig::default())
            .await
            .expect("testenv");
        let srv = env.server().clone();
        let ns_res = registry::find("", "v1", "namespaces").expect("namespaces");
        let pod_res = registry::find("", "v1", "pods").expect("pods");
        let start = Instant::now();
        for n in 0..NAMESPACES {
            handlers::create_value(
                &srv,
                ns_res,
                None,
                json!({"metadata": {"name": format!("bench-{n:03}")}}),
            )
            .expect("namespace");
        }
        for i in 0..pods {
            let ns = format!("bench-{:03}", i % NAMESPACES);
            handlers::create_value(&srv, pod_res, Some(&ns), pod(&ns, i)).expect("pod");
        }
        let api: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
            env.client(),
            "bench-000",
            &kube::api::ApiResource::erase::<Pod>(&()),
        );
        let sample = api.get("web-000000").await.expect("sample pod");
        let sample_bytes = serde_json::to_vec(&sample).map(|v| v.len()).unwrap_or(0);
        let mut summary = BTreeMap::new();
        summary.insert("bench", json!("informer-setup"));
        summary.insert("pods", json!(pods));
        summary.insert("pod_json_bytes", json!(sample_bytes));
        summary.insert(
            "populate_s",
            json!((start.elapsed().as_secs_f64() * 10.0).round() / 10.0),
        );
        println!("{}", serde_json::to_string(&summary).unwrap_or_default());

        let exe = std::env::current_exe().expect("current exe");
        let peer = std::env::var_os("BENCH_PEER");
        let modes: Vec<String> = match std::env::var("BENCH_MODES") {
            Ok(only) => only.split(',').map(str::to_owned).collect(),
            Err(_) => MODES.iter().map(|m| m.to_string()).collect(),
        };
        let rounds: usize = std::env::var("BENCH_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        for round in 0..rounds {
            let mut order: Vec<&String> = modes.iter().collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for mode in order {
                let is_peer = mode.starts_with("client-go");
                let mut cmd = match (is_peer, &peer) {
                    (true, None) => {
                        eprintln!("{mode} skipped: BENCH_PEER names no peerbench binary");
                        continue;
                    }
                    (true, Some(peer)) => {
                        let mut cmd = Command::new(peer);
                        cmd.args(["informer", "--url", env.url(), "--pods", &pods.to_string()]);
                        match mode.as_str() {
                            "client-go-protobuf" => {
                                cmd.arg("--protobuf");
                            }
                            "client-go-list" => {
                                cmd.env("KUBE_FEATURE_WatchListClient", "false");
                            }
                            _ => {}
                        }
                        cmd
                    }
                    _ => {
                        let mut cmd = Command::new(&exe);
                        cmd.args(["--child", mode, env.url(), &pods.to_string()]);
                        cmd
                    }
                };
                let out = cmd.output().expect("child runs");
                if !out.status.success() {
                    eprintln!("{mode} failed: {}", String::from_utf8_lossy(&out.stderr));
                }
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    match serde_json::from_str::<Value>(line) {
                        Ok(mut v) if v.is_object() => {
                            if rounds > 1 {
                                v["round"] = json!(round + 1);
                            }
                            if is_peer {
                                v["mode"] = json!(mode);
                            }
                            println!("{v}");
                        }
                        _ => println!("{line}"),
                    }
                }
            }
        }
        let _ = Arc::strong_count(&srv);
        env.shutdown().await;
    });
}
