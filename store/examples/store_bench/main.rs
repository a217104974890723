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

mod peers;
mod workload;

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kcm_store::{Lister, NAMESPACE_INDEX, ObjectKey, Selector, Store, index_fn};
use kcm_util::proc_stats::{peak_rss_kib, thread_cpu_ns};
use serde_json::{Value, json};

use peers::{run_dashmap, run_kube, run_pods_only};
use workload::{
    LISTS, N, NAMESPACES, NODE_INDEX, NODES, SCAN_LOOKUPS, Timer, c, concurrent, fill, gets,
    index_lookups, ms, name_of, ns_of, rate, round2, shuffled, threads, update_all, update_to, w,
};

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
