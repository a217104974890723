//! Benchmark workloads for `cargo xtask bench workqueue`.
//!
//! Run without arguments, this re-runs itself once per workload (so each peak
//! RSS figure belongs to one workload) and prints one JSON line per workload:
//!
//! * `churn` — 10,000 keys `ns-<i%100>/pod-<i>`, 2 producers adding round-robin
//!   until 2,000,000 adds, 2 workers doing get + done; shaped as client-go's
//!   side runs it: the producers are threads that never yield (the kernel
//!   preempts them, as Go's scheduler preempts goroutines) and the keys are
//!   `Arc<str>` handed over by reference (`add_ref`: the queue clones a key only
//!   to keep it, as passing a Go string copies a pointer and touches no count);
//! * `churn-by-value` — the same with `add(key.clone())`: every add increments
//!   and decrements the key's reference count;
//! * `churn-tasks` — the same with producers as tokio tasks that yield every
//!   256 adds and `String` keys (each clone allocates), then the same on a
//!   naive queue with the same dirty/processing semantics built on
//!   `tokio::sync::Mutex<VecDeque>` + `HashSet`s + `Notify` (`churn-peer`),
//!   followed by a `churn-ratio` line;
//! * `delay` — 200,000 distinct keys `add_after` a uniform delay in [0, 50 ms],
//!   paced at 100 keys a millisecond (2 s in all, a rate both this queue and
//!   client-go's keep up with), 2 workers; lateness (get time − due time)
//!   percentiles: how punctually a delayed key comes out;
//! * `ratelimit` — 10,000 keys, each requeued with `add_rate_limited` 20 times
//!   then forgotten, exponential limiter only (base 1 µs, cap 100 ms).
//!
//! Each line also carries `cpu_ms` (process CPU time, less sensitive than wall
//! time to other load on the machine) and the 1-minute load average.
//!
//! All runs use a 2-thread tokio runtime. Pass a workload name (`churn`,
//! `churn-by-value`, `churn-tasks`, `churn-peer`, `delay`, `ratelimit`) to run just that
//! one in-process.

use std::collections::{HashSet, VecDeque};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kcm_util::proc_stats::{loadavg_1m, peak_rss_kib, process_cpu_ms};
use kcm_workqueue::{
    DelayingQueue, ItemExponentialFailureRateLimiter, Queue, QueueItem, RateLimitingQueue,
};
use serde_json::{Value, json};

const CHURN_KEYS: usize = 10_000;
const CHURN_ADDS: usize = 2_000_000;
const DELAY_KEYS_DEFAULT: usize = 200_000;
/// Keys the delay workload adds per millisecond (the Go peer paces the same way).
const DELAY_KEYS_PER_MS: usize = 100;
const RATELIMIT_KEYS: usize = 10_000;
const RATELIMIT_REQUEUES: usize = 20;
const PEER: &str = "naive queue: tokio::sync::Mutex<{VecDeque, dirty HashSet, processing HashSet}> + Notify, same semantics";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some(workload) => {
            let line = run(workload);
            println!("{line}");
        }
        None => run_all(),
    }
}

fn run_all() {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => {
            eprintln!("cannot find own executable: {err}");
            std::process::exit(1);
        }
    };
    let child = |workload: &str| -> Value {
        let out = Command::new(&exe).arg(workload).output();
        let out = match out {
            Ok(out) if out.status.success() => out,
            other => {
                eprintln!("workload {workload} failed: {other:?}");
                std::process::exit(1);
            }
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().last().unwrap_or_default().to_string();
        println!("{line}");
        serde_json::from_str(&line).unwrap_or(Value::Null)
    };
    child("churn");
    child("churn-by-value");
    let ours = child("churn-tasks");
    let peer = child("churn-peer");
    let num = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    println!(
        "{}",
        json!({
            "workload": "churn-ratio",
            "peer": PEER,
            "wall_speedup_vs_peer": round2(num(&peer, "wall_ms") / num(&ours, "wall_ms")),
            "adds_per_s_ratio": round2(num(&ours, "adds_per_s") / num(&peer, "adds_per_s")),
            "cpu_ratio_peer_over_ours": round2(num(&peer, "cpu_ms") / num(&ours, "cpu_ms")),
            "peak_rss_ratio": round2(num(&ours, "peak_rss_kb") / num(&peer, "peak_rss_kb")),
        })
    );
    child("delay");
    child("ratelimit");
}

/// Number of keys of the delay workload (`WQ_DELAY_KEYS` overrides, for diagnosis).
fn delay_keys() -> usize {
    std::env::var("WQ_DELAY_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DELAY_KEYS_DEFAULT)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn run(workload: &str) -> Value {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|err| {
            eprintln!("cannot build runtime: {err}");
            std::process::exit(1)
        });
    runtime.block_on(async {
        match workload {
            "churn" => churn_threads(true).await,
            "churn-by-value" => churn_threads(false).await,
            "churn-tasks" => churn_tasks().await,
            "churn-peer" => churn_peer().await,
            "delay" => delay().await,
            "ratelimit" => ratelimit().await,
            other => {
                eprintln!("unknown workload {other}");
                std::process::exit(2)
            }
        }
    })
}

fn key(i: usize) -> String {
    format!("ns-{}/pod-{}", i % 100, i)
}

fn churn_report(implementation: &str, wall: Duration, gets: usize) -> Value {
    let wall_ms = wall.as_secs_f64() * 1e3;
    json!({
        "workload": "churn",
        "impl": implementation,
        "keys": CHURN_KEYS,
        "adds": CHURN_ADDS,
        "producers": 2,
        "workers": 2,
        "wall_ms": round2(wall_ms),
        "loadavg_1m": loadavg_1m().unwrap_or(f64::NAN),
        "adds_per_s": (CHURN_ADDS as f64 / wall.as_secs_f64()).round(),
        "gets": gets,
        "cpu_ms": process_cpu_ms(),
        "peak_rss_kb": peak_rss_kib(),
    })
}

/// The churn's two workers: get and done until the queue shuts down; each returns its gets.
fn churn_workers<K: QueueItem>(q: &Queue<K>) -> Vec<tokio::task::JoinHandle<usize>> {
    (0..2)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move {
                let mut gets = 0usize;
                while let Some(k) = q.get().await {
                    gets += 1;
                    q.done(&k);
                }
                gets
            })
        })
        .collect()
}

/// Shuts `q` down once drained and sums the workers' gets.
async fn drain_churn<K: QueueItem>(
    q: &Queue<K>,
    workers: Vec<tokio::task::JoinHandle<usize>>,
) -> usize {
    q.shutdown_with_drain().await;
    let mut gets = 0;
    for w in workers {
        gets += w.await.unwrap_or(0);
    }
    gets
}

/// Churn as client-go's side runs it: producers that never yield (OS threads, preempted by the
/// kernel as goroutines are by Go's scheduler) adding `Arc<str>` keys, by reference
/// (`add_ref`) or by value (a clone per add), workers as tasks of the 2-thread runtime.
async fn churn_threads(by_ref: bool) -> Value {
    let keys: Arc<Vec<Arc<str>>> = Arc::new((0..CHURN_KEYS).map(|i| Arc::from(key(i))).collect());
    let q: Queue<Arc<str>> = Queue::new();
    let start = Instant::now();
    let workers = churn_workers(&q);
    let producers: Vec<_> = (0..2)
        .map(|p| {
            let (q, keys) = (q.clone(), keys.clone());
            std::thread::spawn(move || {
                for n in 0..CHURN_ADDS / 2 {
                    let key = &keys[(n * 2 + p) % CHURN_KEYS];
                    if by_ref {
                        q.add_ref(key);
                    } else {
                        q.add(key.clone());
                    }
                }
            })
        })
        .collect();
    for p in producers {
        let _ = p.join();
    }
    let gets = drain_churn(&q, workers).await;
    let name = if by_ref {
        "kcm-workqueue"
    } else {
        "kcm-workqueue-by-value"
    };
    churn_report(name, start.elapsed(), gets)
}

/// Churn with every party a task of the 2-thread runtime and `String` keys (a clone allocates):
/// producers yield every 256 adds, or the workers would not run until they finish (tokio does not
/// preempt). The shape a tokio program has; compared with the naive peer below.
async fn churn_tasks() -> Value {
    let keys: Arc<Vec<String>> = Arc::new((0..CHURN_KEYS).map(key).collect());
    let q: Queue<String> = Queue::new();
    let start = Instant::now();
    let workers = churn_workers(&q);
    let producers: Vec<_> = (0..2)
        .map(|p| {
            let (q, keys) = (q.clone(), keys.clone());
            tokio::spawn(async move {
                for n in 0..CHURN_ADDS / 2 {
                    q.add(keys[(n * 2 + p) % CHURN_KEYS].clone());
                    if n % 256 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();
    for p in producers {
        let _ = p.await;
    }
    let gets = drain_churn(&q, workers).await;
    churn_report("kcm-workqueue-tasks", start.elapsed(), gets)
}

/// The naive peer: same semantics, async mutex, no care for wake-ups beyond Notify.
#[derive(Default)]
struct NaiveState {
    queue: VecDeque<String>,
    dirty: HashSet<String>,
    processing: HashSet<String>,
    shutting_down: bool,
}

#[derive(Default)]
struct NaiveQueue {
    state: tokio::sync::Mutex<NaiveState>,
    notify: tokio::sync::Notify,
}

impl NaiveQueue {
    async fn add(&self, item: String) {
        let mut s = self.state.lock().await;
        if s.shutting_down || s.dirty.contains(&item) {
            return;
        }
        s.dirty.insert(item.clone());
        if !s.processing.contains(&item) {
            s.queue.push_back(item);
            self.notify.notify_one();
        }
    }

    async fn get(&self) -> Option<String> {
        loop {
            let notified = self.notify.notified();
            {
                let mut s = self.state.lock().await;
                if let Some(item) = s.queue.pop_front() {
                    s.dirty.remove(&item);
                    s.processing.insert(item.clone());
                    return Some(item);
                }
                if s.shutting_down {
                    return None;
                }
            }
            notified.await;
        }
    }

    async fn done(&self, item: &String) {
        let mut s = self.state.lock().await;
        s.processing.remove(item);
        if s.dirty.contains(item) {
            s.queue.push_back(item.clone());
            self.notify.notify_one();
        }
    }

    async fn shutdown(&self) {
        self.state.lock().await.shutting_down = true;
        self.notify.notify_waiters();
    }
}

async fn churn_peer() -> Value {
    let keys: Arc<Vec<String>> = Arc::new((0..CHURN_KEYS).map(key).collect());
    let q = Arc::new(NaiveQueue::default());
    let start = Instant::now();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move {
                let mut gets = 0usize;
                while let Some(k) = q.get().await {
                    gets += 1;
                    q.done(&k).await;
                }
                gets
            })
        })
        .collect();
    let producers: Vec<_> = (0..2)
        .map(|p| {
            let (q, keys) = (q.clone(), keys.clone());
            tokio::spawn(async move {
                for n in 0..CHURN_ADDS / 2 {
                    q.add(keys[(n * 2 + p) % CHURN_KEYS].clone()).await;
                    if n % 256 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();
    for p in producers {
        let _ = p.await;
    }
    q.shutdown().await;
    let mut gets = 0;
    for w in workers {
        gets += w.await.unwrap_or(0);
    }
    churn_report("peer-naive", start.elapsed(), gets)
}

/// xorshift64*: a reproducible uniform source without extra dependencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx] as f64 / 1e3
}

async fn delay() -> Value {
    let n = delay_keys();
    let q: DelayingQueue<String> = DelayingQueue::new();
    let base = Instant::now();
    // Due time of key i, in ns since `base`.
    let due: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let gets = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (q, due, gets) = (q.clone(), due.clone(), gets.clone());
            tokio::spawn(async move {
                let mut lateness_ns = Vec::with_capacity(n / 2 + 1);
                while let Some(k) = q.get().await {
                    let now = base.elapsed().as_nanos() as u64;
                    let i: usize = k
                        .rsplit('-')
                        .next()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    lateness_ns.push(now.saturating_sub(due[i].load(Ordering::Relaxed)));
                    q.done(&k);
                    if gets.fetch_add(1, Ordering::Relaxed) + 1 == n {
                        q.shutdown();
                    }
                }
                lateness_ns
            })
        })
        .collect();
    let keys: Vec<String> = (0..n).map(key).collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let start = Instant::now();
    for (i, k) in keys.into_iter().enumerate() {
        if i % DELAY_KEYS_PER_MS == 0 {
            // Batch j goes in at `start + j ms` (absolute, so no drift accumulates); the due
            // time is taken when the key is added, so pacing jitter does not count as lateness.
            let at = start + Duration::from_millis((i / DELAY_KEYS_PER_MS) as u64);
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
        }
        let d = Duration::from_micros(rng.next() % 50_001);
        due[i].store((base.elapsed() + d).as_nanos() as u64, Ordering::Relaxed);
        q.add_after(k, d);
    }
    let mut all = Vec::with_capacity(n);
    for w in workers {
        all.extend(w.await.unwrap_or_default());
    }
    let wall = start.elapsed();
    all.sort_unstable();
    json!({
        "workload": "delay",
        "impl": "kcm-workqueue",
        "keys": n,
        "max_delay_ms": 50,
        "keys_per_ms": DELAY_KEYS_PER_MS,
        "workers": 2,
        "gets": all.len(),
        "wall_ms": round2(wall.as_secs_f64() * 1e3),
        "lateness_p50_us": round2(percentile(&all, 0.50)),
        "lateness_p99_us": round2(percentile(&all, 0.99)),
        "lateness_max_us": round2(percentile(&all, 1.0)),
        "cpu_ms": process_cpu_ms(),
        "loadavg_1m": loadavg_1m().unwrap_or(f64::NAN),
        "peak_rss_kb": peak_rss_kib(),
    })
}

async fn ratelimit() -> Value {
    let q: RateLimitingQueue<String> =
        RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_micros(1),
            Duration::from_millis(100),
        ));
    let forgotten = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (q, forgotten) = (q.clone(), forgotten.clone());
            tokio::spawn(async move {
                let mut gets = 0usize;
                while let Some(k) = q.get().await {
                    gets += 1;
                    if q.num_requeues(&k) < RATELIMIT_REQUEUES {
                        q.add_rate_limited(k.clone());
                        q.done(&k);
                    } else {
                        q.forget(&k);
                        q.done(&k);
                        if forgotten.fetch_add(1, Ordering::Relaxed) + 1 == RATELIMIT_KEYS {
                            q.shutdown();
                        }
                    }
                }
                gets
            })
        })
        .collect();
    for i in 0..RATELIMIT_KEYS {
        q.add(key(i));
    }
    let mut gets = 0;
    for w in workers {
        gets += w.await.unwrap_or(0);
    }
    let wall = start.elapsed();
    json!({
        "workload": "ratelimit",
        "impl": "kcm-workqueue",
        "keys": RATELIMIT_KEYS,
        "requeues_per_key": RATELIMIT_REQUEUES,
        "limiter": "ItemExponentialFailure(base 1us, cap 100ms)",
        "workers": 2,
        "wall_ms": round2(wall.as_secs_f64() * 1e3),
        "gets": gets,
        "cpu_ms": process_cpu_ms(),
        "loadavg_1m": loadavg_1m().unwrap_or(f64::NAN),
        "peak_rss_kb": peak_rss_kib(),
    })
}
