//! Benchmark workloads for kcm-controller (proposed as `cargo xtask bench controller`).
//!
//! Run without arguments, this re-runs itself once per workload (so each peak RSS
//! figure belongs to one workload) and prints one JSON line per workload:
//!
//! * `pod-view` — 10,000 typical pods (2.4 KB of JSON each, unique names/uids)
//!   deserialized into `Vec<Arc<PodView>>`: retained bytes per pod (counting
//!   allocator, inline + heap), deserialize time per pod, peak RSS;
//! * `pod-full` — the same pods as k8s-openapi `Pod` (what a kube-runtime
//!   reflector caches), followed by a `pod-ratio` line;
//! * `ranking` — `get_pods_to_delete` choosing 250 of 500 ready pods spread over
//!   50 nodes (ranked, log-scale time comparison), median time per call;
//! * `correlator` — 200,000 `SuccessfulCreate` events about 1,000 objects (4
//!   distinct messages each, 5 ms apart) through the event correlator: per
//!   object the spam filter passes the burst of 25 plus one per 5 minutes (4
//!   creates, the rest count patches) and drops the rest; time per event.
//!
//! Pass a workload name to run just that one in-process.

use std::alloc::System;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kcm_controller::clock::FakeClock;
use kcm_controller::event_correlator::{CorrelatorOptions, EventCorrelator};
use kcm_controller::pod_view::{PodConditionView, PodView};
use kcm_controller::ranking::{RankingOptions, get_pods_to_delete};
use kcm_util::proc_stats::peak_rss_kib;
use serde_json::{Value, json};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const PODS: usize = 10_000;
const TYPICAL: &str = include_str!("../tests/data/pod_typical.json");

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(workload) = args.get(1) {
        println!("{}", run(workload));
        return;
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("cannot locate own executable: {e}");
            std::process::exit(1);
        }
    };
    let mut results = Vec::new();
    for w in ["pod-view", "pod-full", "ranking", "correlator"] {
        let out = Command::new(&exe).arg(w).output();
        let line = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            Ok(o) => format!(
                "{{\"workload\":\"{w}\",\"error\":{:?}}}",
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => format!("{{\"workload\":\"{w}\",\"error\":{:?}}}", e.to_string()),
        };
        println!("{line}");
        results.push(serde_json::from_str::<Value>(&line).unwrap_or(Value::Null));
    }
    let view = results[0]["bytes_per_pod"].as_f64().unwrap_or(0.0);
    let full = results[1]["bytes_per_pod"].as_f64().unwrap_or(0.0);
    if view > 0.0 {
        println!(
            "{}",
            json!({"bench": "controller", "workload": "pod-ratio",
                   "full_over_view_bytes": (full / view * 100.0).round() / 100.0})
        );
    }
}

fn pod_jsons() -> Vec<String> {
    (0..PODS)
        .map(|i| {
            TYPICAL
                .replace("web-7c5ddbdf54-x2x7k", &format!("web-7c5ddbdf54-{i:05}"))
                .replace(
                    "0d8f3a5e-9b8c-4f57-a1f8-2f4b1e6a7c11",
                    &format!("0d8f3a5e-9b8c-4f57-a1f8-{i:012}"),
                )
        })
        .collect()
}

fn load<T: serde::de::DeserializeOwned>(workload: &str, peer: &str) -> Value {
    let jsons = pod_jsons();
    let json_bytes: usize = jsons.iter().map(String::len).sum::<usize>() / PODS;
    let region = Region::new(GLOBAL);
    let start = Instant::now();
    let mut cache: Vec<Arc<T>> = Vec::with_capacity(PODS);
    for j in &jsons {
        match serde_json::from_str::<T>(j) {
            Ok(p) => cache.push(Arc::new(p)),
            Err(e) => return json!({"workload": workload, "error": e.to_string()}),
        }
    }
    let elapsed = start.elapsed();
    let s = region.change();
    let net = s.bytes_allocated as isize + s.bytes_reallocated - s.bytes_deallocated as isize;
    // Exclude the Vec of Arcs itself: count only what each pod retains.
    let per_pod = (net as f64 - (PODS * std::mem::size_of::<Arc<T>>()) as f64) / PODS as f64;
    let out = json!({
        "bench": "controller", "workload": workload, "peer": peer, "pods": PODS,
        "json_bytes_per_pod_pretty": json_bytes,
        "bytes_per_pod": per_pod.round(),
        "deserialize_ns_per_pod": (elapsed.as_nanos() as f64 / PODS as f64).round(),
        "peak_rss_kb": peak_rss_kib(),
    });
    drop(cache);
    out
}

fn ranking() -> Value {
    let now: Timestamp = "2024-05-15T00:00:00Z"
        .parse()
        .unwrap_or(Timestamp::UNIX_EPOCH);
    let pods: Vec<Arc<PodView>> = (0..500)
        .map(|i| {
            let mut p = PodView::default();
            p.metadata.name = Some(format!("p{i}"));
            p.metadata.uid = Some(format!(
                "uid-{:08x}",
                (i as u64).wrapping_mul(2_654_435_761)
            ));
            let ago = |s: i64| Time(now.checked_sub(SignedDuration::from_secs(s)).unwrap_or(now));
            p.metadata.creation_timestamp = Some(ago(3600 + (i as i64 * 37) % 86_400));
            p.spec.node_name = Some(format!("node-{}", i % 50));
            p.status.phase = Some("Running".into());
            p.status.conditions.push(PodConditionView {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(ago(60 + (i as i64 * 13) % 7200)),
            });
            Arc::new(p)
        })
        .collect();
    let iterations = 400;
    let mut times = Vec::with_capacity(iterations);
    let mut chosen = 0;
    for _ in 0..iterations {
        let start = Instant::now();
        let v = get_pods_to_delete(&pods, &pods, 250, now, RankingOptions::default());
        times.push(start.elapsed());
        chosen = v.len();
    }
    times.sort();
    json!({
        "bench": "controller", "workload": "ranking", "pods": 500, "delete": chosen,
        "median_us_per_call": times[iterations / 2].as_micros(),
        "p99_us_per_call": times[iterations * 99 / 100].as_micros(),
        "peak_rss_kb": peak_rss_kib(),
    })
}

fn correlator() -> Value {
    let clock = FakeClock::new(
        "2024-05-15T00:00:00Z"
            .parse()
            .unwrap_or(Timestamp::UNIX_EPOCH),
    );
    let corr = EventCorrelator::new(CorrelatorOptions::default(), Arc::new(clock.clone()));
    let events = 200_000;
    let (mut skipped, mut patched) = (0, 0);
    let start = Instant::now();
    let objects = 1000;
    for i in 0..events {
        clock.step(Duration::from_millis(5));
        let obj = format!("rs-{}", i % objects);
        let e = Event {
            involved_object: ObjectReference {
                kind: Some("ReplicaSet".into()),
                api_version: Some("apps/v1".into()),
                namespace: Some("default".into()),
                name: Some(obj.clone()),
                uid: Some(format!("uid-{obj}")),
                ..Default::default()
            },
            reason: Some("SuccessfulCreate".into()),
            message: Some(format!("Created pod: {obj}-{}", (i / objects) % 4)),
            type_: Some("Normal".into()),
            count: Some(1),
            source: Some(EventSource {
                component: Some("replicaset-controller".into()),
                host: None,
            }),
            ..Default::default()
        };
        let r = corr.correlate(e);
        if r.skip {
            skipped += 1;
        } else if r.patch.is_some() {
            patched += 1;
        }
    }
    let elapsed = start.elapsed();
    json!({
        "bench": "controller", "workload": "correlator", "events": events, "objects": objects,
        "skipped": skipped, "patched": patched,
        "ns_per_event": (elapsed.as_nanos() as f64 / events as f64).round(),
        "peak_rss_kb": peak_rss_kib(),
    })
}

fn run(workload: &str) -> Value {
    match workload {
        "pod-view" => load::<PodView>("pod-view", ""),
        "pod-full" => load::<Pod>(
            "pod-full",
            "k8s-openapi Pod (kube-runtime reflector cache type)",
        ),
        "ranking" => ranking(),
        "correlator" => correlator(),
        other => json!({"workload": other, "error": "unknown workload"}),
    }
}
