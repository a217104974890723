//! Store benchmark (`cargo xtask bench store`): 100,000 k8s-openapi Pods (namespace among 100,
//! 8 labels, `spec.nodeName` among 1,000) in `kcm_store::Store` with namespace and node
//! indices, and the same insert/get/list/update workloads on kube-runtime's reflector store
//! (the peer) and on a bare `DashMap` (the lock-design alternative, no indices).
//!
//! Each store runs in its own child process (this binary re-executed with `--child NAME`) so
//! that its RSS figures are its own; a first child holding only the Pods gives the object
//! bytes, so `store_overhead_bytes_per_object` is what each store adds on top. Prints one JSON line per store, then one line of ratios
//! kcm-store / kube-runtime. client-go's `cache.NewIndexer` runs the same workload in
//! `upstream/cmd/peerbench store`; `cargo xtask bench store` runs both and tables the medians.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use dashmap::DashMap;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_store::{Lister, NAMESPACE_INDEX, ObjectKey, Selector, Store, index_fn};
use kcm_util::proc_stats::{peak_rss_kib, rss_kib, thread_cpu_ns};

/// On-CPU nanoseconds of every live thread of this process (`/proc/self/task/*/schedstat`):
/// process CPU as client-go's side counts it with `getrusage`, at nanosecond resolution, so
/// work a store hands to a thread of its own (kcm-store frees replaced objects on one) is
/// counted. Threads that have exited are not; none exits during a timed phase.
fn process_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return thread_cpu_ns();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}
use kube_runtime::reflector::{ObjectRef, store::Writer};
use kube_runtime::watcher::Event;
use serde_json::{Value, json};

const N: usize = 100_000;
const NAMESPACES: usize = 100;
const NODES: usize = 1_000;
const SCAN_LOOKUPS: usize = 1_000;
const LISTS: usize = 100;
const BATCH: usize = 1_000;

/// `KCM_STORE_BENCH_QUICK=1` shrinks the lookup loops 100x (smoke test of the benchmark).
fn quick() -> bool {
    std::env::var_os("KCM_STORE_BENCH_QUICK").is_some()
}

/// Lookups per get workload.
fn gets() -> usize {
    if quick() { 10_000 } else { 1_000_000 }
}

/// Lookups per index workload.
fn index_lookups() -> usize {
    if quick() { 10_000 } else { 1_000_000 }
}
const NODE_INDEX: &str = "node";

fn ns_of(i: usize) -> String {
    format!("namespace-{:03}", i % NAMESPACES)
}

fn name_of(i: usize) -> String {
    format!("web-{:06}-7d9f8c6b5-x{:04}", i, i % 9973)
}

fn make_pod(i: usize, generation: usize) -> Pod {
    let node = (i + generation * i.is_multiple_of(10) as usize) % NODES;
    let labels: BTreeMap<String, String> = [
        ("app", format!("app-{}", i % 50)),
        ("tier", ["frontend", "backend", "cache"][i % 3].to_string()),
        ("env", ["prod", "staging"][i % 2].to_string()),
        ("version", format!("v{}", 1 + generation)),
        ("team", format!("team-{}", i % 20)),
        ("component", "server".to_string()),
        ("track", "stable".to_string()),
        ("pod-template-hash", format!("7d9f8c6b{}", i % 10)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Pod {
        metadata: ObjectMeta {
            namespace: Some(ns_of(i)),
            name: Some(name_of(i)),
            uid: Some(format!("4f8c2a1e-0b7d-4c3e-9a5f-{:012}", i)),
            resource_version: Some(format!("{}", 1000 + i + generation * N)),
            labels: Some(labels),
            ..Default::default()
        },
        spec: Some(PodSpec {
            node_name: Some(format!("node-{node:04}")),
            containers: vec![Container {
                name: "app".into(),
                image: Some("registry.example.com/team/app:v1.2.3".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            pod_ip: Some(format!(
                "10.{}.{}.{}",
                i / 65536 % 256,
                i / 256 % 256,
                i % 256
            )),
            ..Default::default()
        }),
    }
}

/// A fixed pseudo-random permutation of 0..N (7919 is coprime with 100,000).
fn shuffled(i: usize) -> usize {
    (i * 7919 + 13) % N
}

/// Wall-clock and process-CPU stopwatch.
struct Timer {
    wall: Instant,
    cpu_ns: u64,
}

/// Elapsed wall and CPU milliseconds.
#[derive(Clone, Copy, Default)]
struct Span {
    wall_ms: f64,
    cpu_ms: f64,
}

impl std::ops::AddAssign for Span {
    fn add_assign(&mut self, o: Span) {
        self.wall_ms += o.wall_ms;
        self.cpu_ms += o.cpu_ms;
    }
}

impl Timer {
    fn start() -> Self {
        Timer {
            cpu_ns: process_cpu_ns(),
            wall: Instant::now(),
        }
    }

    fn span(&self) -> Span {
        Span {
            wall_ms: self.wall.elapsed().as_secs_f64() * 1e3,
            cpu_ms: process_cpu_ns().saturating_sub(self.cpu_ns) as f64 / 1e6,
        }
    }
}

/// Wall milliseconds of a span, rounded.
fn w(s: Span) -> f64 {
    round2(s.wall_ms)
}

/// CPU milliseconds of a span, rounded.
fn c(s: Span) -> f64 {
    round2(s.cpu_ms)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// (wall ms, CPU ms), rounded, divided by `per`.
fn ms(span: Span, per: usize) -> (f64, f64) {
    (
        round2(span.wall_ms / per as f64),
        round2(span.cpu_ms / per as f64),
    )
}

/// (ops per wall second, ops per CPU second).
fn rate(ops: usize, span: Span) -> (f64, f64) {
    let r = |ms: f64| {
        if ms > 0.0 {
            (ops as f64 * 1e3 / ms).round()
        } else {
            0.0
        }
    };
    (r(span.wall_ms), r(span.cpu_ms))
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4))
}

/// Streams N pods into `insert` in batches, timing only the insert calls.
/// Returns (insert time, resident bytes per stored object).
fn fill(mut insert: impl FnMut(Vec<Pod>) -> Span) -> (Span, u64) {
    let rss0 = rss_kib();
    let mut total = Span::default();
    for b in 0..N / BATCH {
        let pods: Vec<Pod> = (b * BATCH..(b + 1) * BATCH)
            .map(|i| make_pod(i, 0))
            .collect();
        total += insert(pods);
    }
    let rss1 = rss_kib();
    (total, (rss1.saturating_sub(rss0) * 1024) / N as u64)
}

/// Times N updates (new generation of every pod; 10% move to another node).
fn update_all(update: impl FnMut(Vec<Pod>) -> Span) -> Span {
    update_to(1, update)
}

/// Times N updates to `generation`.
fn update_to(generation: usize, mut update: impl FnMut(Vec<Pod>) -> Span) -> Span {
    let mut total = Span::default();
    for b in 0..N / BATCH {
        let pods: Vec<Pod> = (b * BATCH..(b + 1) * BATCH)
            .map(|i| make_pod(i, generation))
            .collect();
        total += update(pods);
    }
    total
}

fn run_kcm() -> Value {
    let store: Store<Pod> = Store::new();
    store
        .add_indexer(
            NODE_INDEX,
            index_fn(|p: &Pod| {
                p.spec
                    .as_ref()
                    .and_then(|s| s.node_name.clone())
                    .into_iter()
                    .collect()
            }),
        )
        .expect("fresh index name");
    let (insert_ms, bytes_per_object) = fill(|pods| {
        let pods: Vec<Arc<Pod>> = pods.into_iter().map(Arc::new).collect();
        let t = Timer::start();
        for p in pods {
            store.add(p);
        }
        t.span()
    });
    let peak_after_insert = peak_rss_kib();
    assert_eq!(store.len(), N);

    let keys: Vec<ObjectKey> = (0..N)
        .map(|i| ObjectKey::new(ns_of(i), name_of(i)))
        .collect();
    let t = Timer::start();
    let mut found = 0usize;
    for i in 0..gets() {
        found += store.get_by_key(&keys[shuffled(i % N)]).is_some() as usize;
    }
    let get_ops = rate(gets(), t.span());
    assert_eq!(found, gets());

    // The lending read: the object is looked up and lent, as client-go's `GetByKey` returns
    // a pointer; like that side, the loop only checks that it was found.
    let t = Timer::start();
    let mut found = 0usize;
    for i in 0..gets() {
        found += store.with(&keys[shuffled(i % N)], |_| ()).is_some() as usize;
    }
    let get_lend_ops = rate(gets(), t.span());
    assert_eq!(found, gets());

    let t = Timer::start();
    for _ in 0..LISTS {
        assert_eq!(store.list().len(), N);
    }
    let list_ms = ms(t.span(), LISTS);

    let namespaces: Vec<String> = (0..NAMESPACES).map(ns_of).collect();
    let t = Timer::start();
    let mut n = 0usize;
    for i in 0..index_lookups() {
        n += store
            .by_index(NAMESPACE_INDEX, &namespaces[i % NAMESPACES])
            .map_or(0, |v| v.len());
    }
    let by_index_ops = rate(index_lookups(), t.span());
    assert_eq!(n, index_lookups() * (N / NAMESPACES));

    let nodes: Vec<String> = (0..NODES).map(|i| format!("node-{i:04}")).collect();
    let t = Timer::start();
    let mut n = 0usize;
    for i in 0..index_lookups() {
        n += store
            .by_index(NODE_INDEX, &nodes[i % NODES])
            .map_or(0, |v| v.len());
    }
    let by_node_ops = rate(index_lookups(), t.span());
    assert_eq!(n, index_lookups() * (N / NODES));

    let lister = Lister::new(store.clone());
    let sel = Selector::parse("app=app-7,tier in (frontend,backend)").expect("valid selector");
    let t = Timer::start();
    let mut n = 0usize;
    for i in 0..SCAN_LOOKUPS * 100 {
        n += lister
            .namespaced(&namespaces[i % NAMESPACES])
            .list(&sel)
            .len();
    }
    let ns_list_ops = rate(SCAN_LOOKUPS * 100, t.span());
    assert!(n > 0);

    let update_ms = update_all(|pods| {
        let pods: Vec<Arc<Pod>> = pods.into_iter().map(Arc::new).collect();
        let t = Timer::start();
        for p in pods {
            store.update(p);
        }
        t.span()
    });
    assert_eq!(store.len(), N);
    // Pods on node-0000 (i % 1000 == 0) moved to node-0001; the empty value is gone.
    assert_eq!(
        store
            .by_index(NODE_INDEX, "node-0001")
            .map_or(0, |v| v.len()),
        2 * N / NODES
    );
    assert!(
        store
            .by_index(NODE_INDEX, "node-0000")
            .is_ok_and(|v| v.is_empty())
    );
    // Every node whose number is a multiple of 10 lost all its pods.
    assert_eq!(
        store.list_index_values(NODE_INDEX).len(),
        NODES - NODES / 10
    );

    // The same updates (to the next generation) with deferred drops: the replaced Pods are
    // freed on kcm-store's background thread. Each batch waits for that thread, so the
    // freeing is inside the timed span and its CPU in the process figure; the writer's own
    // thread CPU is reported beside it.
    store.set_deferred_drop(true);
    let mut writer_cpu_ns = 0u64;
    let update_deferred_ms = update_to(2, |pods| {
        let pods: Vec<Arc<Pod>> = pods.into_iter().map(Arc::new).collect();
        let t = Timer::start();
        let writer0 = thread_cpu_ns();
        for p in pods {
            store.update(p);
        }
        writer_cpu_ns += thread_cpu_ns().saturating_sub(writer0);
        store.drain_drops();
        t.span()
    });
    store.set_deferred_drop(false);
    assert_eq!(store.len(), N);

    let concurrent_get_ops = concurrent(|i| store.get_by_key(&keys[shuffled(i % N)]).is_some());
    let concurrent_get_lend_ops =
        concurrent(|i| store.with(&keys[shuffled(i % N)], |_| ()).is_some());

    json!({
        "workload": "store", "impl": "kcm-store", "objects": N,
        "insert_ms": w(insert_ms), "insert_cpu_ms": c(insert_ms), "get_ops_per_s": get_ops.0, "get_ops_per_cpu_s": get_ops.1, "list_all_ms": list_ms.0, "list_all_cpu_ms": list_ms.1,
        "get_lend_ops_per_s": get_lend_ops.0, "get_lend_ops_per_cpu_s": get_lend_ops.1,
        "update_deferred_ms": w(update_deferred_ms), "update_deferred_cpu_ms": c(update_deferred_ms),
        "update_deferred_writer_cpu_ms": round2(writer_cpu_ns as f64 / 1e6),
        "concurrent_get_lend_ops_per_s": concurrent_get_lend_ops.0, "concurrent_get_lend_ops_per_cpu_s": concurrent_get_lend_ops.1,
        "by_index_namespace_ops_per_s": by_index_ops.0, "by_index_namespace_ops_per_cpu_s": by_index_ops.1, "by_index_namespace_lookups": index_lookups(),
        "by_index_node_ops_per_s": by_node_ops.0, "by_index_node_ops_per_cpu_s": by_node_ops.1,
        "namespaced_list_selector_ops_per_s": ns_list_ops.0, "namespaced_list_selector_ops_per_cpu_s": ns_list_ops.1,
        "update_ms": w(update_ms), "update_cpu_ms": c(update_ms), "concurrent_get_ops_per_s": concurrent_get_ops.0, "concurrent_get_ops_per_cpu_s": concurrent_get_ops.1,
        "concurrent_get_threads": threads(),
        "bytes_per_object": bytes_per_object,
        "peak_rss_after_insert_kb": peak_after_insert,
        "peak_rss_kb": peak_rss_kib(),
    })
}

fn run_kube() -> Value {
    let mut writer: Writer<Pod> = Writer::default();
    let reader = writer.as_reader();
    // kube-runtime's API takes `&Event<K>` and stores `Arc::new(obj.clone())`: the deep clone
    // is part of its insert cost (the caller's copy is dropped afterwards).
    let (insert_ms, bytes_per_object) = fill(|pods| {
        let t = Timer::start();
        for p in pods {
            writer.apply_watcher_event(&Event::Apply(p));
        }
        t.span()
    });
    let peak_after_insert = peak_rss_kib();
    assert_eq!(reader.len(), N);

    let keys: Vec<ObjectRef<Pod>> = (0..N)
        .map(|i| ObjectRef::new(&name_of(i)).within(&ns_of(i)))
        .collect();
    let t = Timer::start();
    let mut found = 0usize;
    for i in 0..gets() {
        found += reader.get(&keys[shuffled(i % N)]).is_some() as usize;
    }
    let get_ops = rate(gets(), t.span());
    assert_eq!(found, gets());

    let t = Timer::start();
    for _ in 0..LISTS {
        assert_eq!(reader.state().len(), N);
    }
    let list_ms = ms(t.span(), LISTS);

    // No indices: a namespace lookup is a filtered scan.
    let namespaces: Vec<String> = (0..NAMESPACES).map(ns_of).collect();
    let t = Timer::start();
    let mut n = 0usize;
    for i in 0..SCAN_LOOKUPS {
        let ns = namespaces[i % NAMESPACES].as_str();
        n += reader
            .state_filter(|p| p.metadata.namespace.as_deref() == Some(ns))
            .len();
    }
    let by_ns_ops = rate(SCAN_LOOKUPS, t.span());
    assert_eq!(n, SCAN_LOOKUPS * (N / NAMESPACES));

    let update_ms = update_all(|pods| {
        let t = Timer::start();
        for p in pods {
            writer.apply_watcher_event(&Event::Apply(p));
        }
        t.span()
    });
    assert_eq!(reader.len(), N);

    let concurrent_get_ops = concurrent(|i| reader.get(&keys[shuffled(i % N)]).is_some());

    json!({
        "workload": "store", "impl": "kube-runtime reflector::Store", "objects": N,
        "insert_ms": w(insert_ms), "insert_cpu_ms": c(insert_ms), "get_ops_per_s": get_ops.0, "get_ops_per_cpu_s": get_ops.1, "list_all_ms": list_ms.0, "list_all_cpu_ms": list_ms.1,
        "by_index_namespace_ops_per_s": by_ns_ops.0, "by_index_namespace_ops_per_cpu_s": by_ns_ops.1, "by_index_namespace_lookups": SCAN_LOOKUPS,
        "by_index_namespace_method": "state_filter full scan (no indices)",
        "update_ms": w(update_ms), "update_cpu_ms": c(update_ms), "concurrent_get_ops_per_s": concurrent_get_ops.0, "concurrent_get_ops_per_cpu_s": concurrent_get_ops.1,
        "concurrent_get_threads": threads(),
        "bytes_per_object": bytes_per_object,
        "peak_rss_after_insert_kb": peak_after_insert,
        "peak_rss_kb": peak_rss_kib(),
    })
}

fn run_dashmap() -> Value {
    let map: DashMap<ObjectKey, Arc<Pod>, foldhash::fast::RandomState> = DashMap::default();
    let key = |p: &Pod| {
        ObjectKey::new(
            p.metadata.namespace.clone().unwrap_or_default(),
            p.metadata.name.clone().unwrap_or_default(),
        )
    };
    let (insert_ms, bytes_per_object) = fill(|pods| {
        let pods: Vec<Arc<Pod>> = pods.into_iter().map(Arc::new).collect();
        let t = Timer::start();
        for p in pods {
            map.insert(key(&p), p);
        }
        t.span()
    });
    let keys: Vec<ObjectKey> = (0..N)
        .map(|i| ObjectKey::new(ns_of(i), name_of(i)))
        .collect();
    let t = Timer::start();
    let mut found = 0usize;
    for i in 0..gets() {
        found += map
            .get(&keys[shuffled(i % N)])
            .map(|r| r.value().clone())
            .is_some() as usize;
    }
    let get_ops = rate(gets(), t.span());
    assert_eq!(found, gets());
    let t = Timer::start();
    for _ in 0..LISTS {
        let v: Vec<Arc<Pod>> = map.iter().map(|r| r.value().clone()).collect();
        assert_eq!(v.len(), N);
    }
    let list_ms = ms(t.span(), LISTS);
    let update_ms = update_all(|pods| {
        let pods: Vec<Arc<Pod>> = pods.into_iter().map(Arc::new).collect();
        let t = Timer::start();
        for p in pods {
            map.insert(key(&p), p);
        }
        t.span()
    });
    let concurrent_get_ops = concurrent(|i| {
        map.get(&keys[shuffled(i % N)])
            .map(|r| r.value().clone())
            .is_some()
    });
    json!({
        "workload": "store", "impl": "dashmap (items only, no indices)", "objects": N,
        "insert_ms": w(insert_ms), "insert_cpu_ms": c(insert_ms), "get_ops_per_s": get_ops.0, "get_ops_per_cpu_s": get_ops.1, "list_all_ms": list_ms.0, "list_all_cpu_ms": list_ms.1,
        "update_ms": w(update_ms), "update_cpu_ms": c(update_ms), "concurrent_get_ops_per_s": concurrent_get_ops.0, "concurrent_get_ops_per_cpu_s": concurrent_get_ops.1,
        "concurrent_get_threads": threads(),
        "bytes_per_object": bytes_per_object,
        "peak_rss_kb": peak_rss_kib(),
    })
}

/// Baseline: the Pods alone, held in a `Vec<Arc<Pod>>` (no map at all), to separate object
/// bytes from store overhead.
fn run_pods_only() -> Value {
    let mut all: Vec<Arc<Pod>> = Vec::with_capacity(N);
    let (_, bytes_per_object) = fill(|pods| {
        all.extend(pods.into_iter().map(Arc::new));
        Span::default()
    });
    assert_eq!(all.len(), N);
    json!({
        "workload": "store", "impl": "baseline: Vec<Arc<Pod>> (objects only)", "objects": N,
        "bytes_per_object": bytes_per_object, "peak_rss_kb": peak_rss_kib(),
    })
}

/// `threads()` threads doing gets() lookups each: (aggregate ops per wall second, ops per
/// CPU second summed over the threads).
fn concurrent(get: impl Fn(usize) -> bool + Sync) -> (f64, f64) {
    let t = Timer::start();
    let (found, cpu_ns): (usize, u64) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads())
            .map(|th| {
                let get = &get;
                s.spawn(move || {
                    let c0 = thread_cpu_ns();
                    let n = (0..gets()).filter(|i| get(i + th * 31)).count();
                    (n, thread_cpu_ns().saturating_sub(c0))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or((0, 0)))
            .fold((0, 0), |(a, b), (n, c)| (a + n, b + c))
    });
    assert_eq!(found, gets() * threads());
    let wall = t.span();
    rate(
        gets() * threads(),
        Span {
            wall_ms: wall.wall_ms,
            cpu_ms: cpu_ns as f64 / 1e6,
        },
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--child") {
        let line = match args.get(pos + 1).map(String::as_str) {
            Some("kcm") => run_kcm(),
            Some("kube") => run_kube(),
            Some("dashmap") => run_dashmap(),
            Some("pods") => run_pods_only(),
            other => return Err(format!("unknown child {other:?}").into()),
        };
        println!("{line}");
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let mut results = BTreeMap::new();
    for child in ["pods", "kcm", "kube", "dashmap"] {
        let out = Command::new(&exe).args(["--child", child]).output()?;
        if !out.status.success() {
            return Err(format!(
                "child {child} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        let line = String::from_utf8(out.stdout)?;
        let mut value: Value = serde_json::from_str(line.trim())?;
        if let (Some(base), Some(b)) = (
            results
                .get("pods")
                .and_then(|p: &Value| p["bytes_per_object"].as_i64()),
            value["bytes_per_object"].as_i64(),
        ) && child != "pods"
        {
            value["store_overhead_bytes_per_object"] = json!(b - base);
        }
        println!("{value}");
        results.insert(child, value);
    }
    let (k, p) = (&results["kcm"], &results["kube"]);
    let ratio = |f: &str| match (k[f].as_f64(), p[f].as_f64()) {
        (Some(a), Some(b)) if b != 0.0 => json!((a / b * 100.0).round() / 100.0),
        _ => Value::Null,
    };
    println!(
        "{}",
        json!({
            "workload": "store", "impl": "ratio kcm-store / kube-runtime",
            "insert_ms": ratio("insert_ms"), "insert_cpu_ms": ratio("insert_cpu_ms"),
            "get_ops_per_s": ratio("get_ops_per_s"), "get_ops_per_cpu_s": ratio("get_ops_per_cpu_s"),
            "list_all_ms": ratio("list_all_ms"), "list_all_cpu_ms": ratio("list_all_cpu_ms"),
            "by_index_namespace_ops_per_s": ratio("by_index_namespace_ops_per_s"),
            "by_index_namespace_ops_per_cpu_s": ratio("by_index_namespace_ops_per_cpu_s"),
            "update_ms": ratio("update_ms"), "update_cpu_ms": ratio("update_cpu_ms"),
            "concurrent_get_ops_per_s": ratio("concurrent_get_ops_per_s"),
            "concurrent_get_ops_per_cpu_s": ratio("concurrent_get_ops_per_cpu_s"),
            "bytes_per_object": ratio("bytes_per_object"),
            "store_overhead_bytes_per_object": ratio("store_overhead_bytes_per_object"),
            "peak_rss_kb": ratio("peak_rss_kb"),
            "note": "ms: lower is better; ops/s: higher is better; *_cpu_* figures use the process's on-CPU time (every thread; robust to machine load); client-go: cargo xtask bench store",
        })
    );
    Ok(())
}
