//! The peers of the store benchmark: kube-runtime's reflector store, a bare `DashMap` without
//! indices, and the Pods alone (the object bytes every store holds).

use std::sync::Arc;

use dashmap::DashMap;
use k8s_openapi::api::core::v1::Pod;
use kcm_store::ObjectKey;
use kcm_util::proc_stats::peak_rss_kib;
use kube_runtime::reflector::{ObjectRef, store::Writer};
use kube_runtime::watcher::Event;
use serde_json::{Value, json};

use crate::workload::{
    LISTS, N, NAMESPACES, SCAN_LOOKUPS, Span, Timer, c, concurrent, fill, gets, ms, name_of, ns_of,
    rate, shuffled, threads, update_all, w,
};

pub(crate) fn run_kube() -> Value {
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

pub(crate) fn run_dashmap() -> Value {
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
pub(crate) fn run_pods_only() -> Value {
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
