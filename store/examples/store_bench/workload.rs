//! The store benchmark's workload: the Pods, the timers (wall clock and the process's on-CPU
//! time) and the fill, update and concurrent-get loops every store runs.

use std::collections::BTreeMap;
use std::time::Instant;

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_util::proc_stats::{live_threads_cpu_ns, rss_kib, thread_cpu_ns};

pub(crate) const N: usize = 100_000;
pub(crate) const NAMESPACES: usize = 100;
pub(crate) const NODES: usize = 1_000;
pub(crate) const SCAN_LOOKUPS: usize = 1_000;
pub(crate) const LISTS: usize = 100;
pub(crate) const BATCH: usize = 1_000;

/// `KCM_STORE_BENCH_QUICK=1` shrinks the lookup loops 100x (smoke test of the benchmark).
pub(crate) fn quick() -> bool {
    std::env::var_os("KCM_STORE_BENCH_QUICK").is_some()
}

/// Lookups per get workload.
pub(crate) fn gets() -> usize {
    if quick() { 10_000 } else { 1_000_000 }
}

/// Lookups per index workload.
pub(crate) fn index_lookups() -> usize {
    if quick() { 10_000 } else { 1_000_000 }
}
pub(crate) const NODE_INDEX: &str = "node";

pub(crate) fn ns_of(i: usize) -> String {
    format!("namespace-{:03}", i % NAMESPACES)
}

pub(crate) fn name_of(i: usize) -> String {
    format!("web-{:06}-7d9f8c6b5-x{:04}", i, i % 9973)
}

pub(crate) fn make_pod(i: usize, generation: usize) -> Pod {
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
pub(crate) fn shuffled(i: usize) -> usize {
    (i * 7919 + 13) % N
}

/// Wall-clock and process-CPU stopwatch.
pub(crate) struct Timer {
    wall: Instant,
    cpu_ns: u64,
}

/// Elapsed wall and CPU milliseconds.
#[derive(Clone, Copy, Default)]
pub(crate) struct Span {
    pub(crate) wall_ms: f64,
    pub(crate) cpu_ms: f64,
}

impl std::ops::AddAssign for Span {
    fn add_assign(&mut self, o: Span) {
        self.wall_ms += o.wall_ms;
        self.cpu_ms += o.cpu_ms;
    }
}

impl Timer {
    pub(crate) fn start() -> Self {
        Timer {
            cpu_ns: live_threads_cpu_ns(),
            wall: Instant::now(),
        }
    }

    pub(crate) fn span(&self) -> Span {
        Span {
            wall_ms: self.wall.elapsed().as_secs_f64() * 1e3,
            cpu_ms: live_threads_cpu_ns().saturating_sub(self.cpu_ns) as f64 / 1e6,
        }
    }
}

/// Wall milliseconds of a span, rounded.
pub(crate) fn w(s: Span) -> f64 {
    round2(s.wall_ms)
}

/// CPU milliseconds of a span, rounded.
pub(crate) fn c(s: Span) -> f64 {
    round2(s.cpu_ms)
}

pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// (wall ms, CPU ms), rounded, divided by `per`.
pub(crate) fn ms(span: Span, per: usize) -> (f64, f64) {
    (
        round2(span.wall_ms / per as f64),
        round2(span.cpu_ms / per as f64),
    )
}

/// (ops per wall second, ops per CPU second).
pub(crate) fn rate(ops: usize, span: Span) -> (f64, f64) {
    let r = |ms: f64| {
        if ms > 0.0 {
            (ops as f64 * 1e3 / ms).round()
        } else {
            0.0
        }
    };
    (r(span.wall_ms), r(span.cpu_ms))
}

pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4))
}

/// Streams N pods into `insert` in batches, timing only the insert calls.
/// Returns (insert time, resident bytes per stored object).
pub(crate) fn fill(mut insert: impl FnMut(Vec<Pod>) -> Span) -> (Span, u64) {
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
pub(crate) fn update_all(update: impl FnMut(Vec<Pod>) -> Span) -> Span {
    update_to(1, update)
}

/// Times N updates to `generation`.
pub(crate) fn update_to(generation: usize, mut update: impl FnMut(Vec<Pod>) -> Span) -> Span {
    let mut total = Span::default();
    for b in 0..N / BATCH {
        let pods: Vec<Pod> = (b * BATCH..(b + 1) * BATCH)
            .map(|i| make_pod(i, generation))
            .collect();
        total += update(pods);
    }
    total
}

/// `threads()` threads doing gets() lookups each: (aggregate ops per wall second, ops per
/// CPU second summed over the threads).
pub(crate) fn concurrent(get: impl Fn(usize) -> bool + Sync) -> (f64, f64) {
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
