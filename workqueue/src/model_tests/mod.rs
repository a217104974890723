//! Model checking of the queue's add/get/done protocol with shuttle.
//!
//! `queue.rs` and `item_states.rs` are compiled a second time here, against shuttle's mutex,
//! atomics and fences (`model_tests/primitives.rs`), so shuttle's scheduler can switch threads at
//! every lock, flag read and flag write, including inside `add`'s lock-free fast path. Each
//! test runs a small scenario under many random schedules and PCT schedules (which find
//! bugs of a given depth with a known probability) and checks client-go's guarantees:
//!
//! * a key is never handed to two workers at once;
//! * no add is lost: the data a producer wrote before its add is read by a worker after a
//!   later `get` (each producer bumps a per-key version, then adds; at the end every key's
//!   last version has been seen by a worker);
//! * shutdown with drain hands out every queued key and returns.
//!
//! Shuttle explores interleavings under sequential consistency; the fences that make the
//! fast path correct on weaker hardware are argued in `item_states.rs`. The iteration counts
//! keep the whole file to a few seconds in `cargo test`; `KCM_MODEL_ITERATIONS` raises them.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::PoisonError;

use shuttle::sync::atomic::{AtomicBool, AtomicU64, Ordering};

// Shuttle's mutex, atomics and fences, with the API of `crate::primitives`.
mod primitives;

// The same files as `crate::item_states` and `crate::queue`, on purpose (see above).
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../item_states.rs"]
mod item_states;

#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../queue.rs"]
mod queue;

use queue::Queue;

/// Iterations per scheduler, from `KCM_MODEL_ITERATIONS` or `default`.
fn iterations(default: usize) -> usize {
    std::env::var("KCM_MODEL_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What the workers observed.
#[derive(Default)]
struct Observed {
    /// Keys being processed right now.
    in_flight: HashSet<usize>,
    /// Per key, the highest version a worker read after `get`.
    seen: Vec<u64>,
    gets: usize,
}

/// One scenario: `producers` threads each bump the version of, then add, the keys in
/// `adds` (in order); `workers` threads get, read the version, yield, and mark done;
/// `re_add` makes each worker also re-add the key it holds once (an add during processing).
/// Then shutdown with drain. Checks the guarantees listed in the module docs.
fn scenario(keys: usize, producers: usize, adds: &'static [usize], workers: usize, re_add: bool) {
    let queue: Queue<usize> = Queue::new();
    let versions: Arc<Vec<AtomicU64>> = Arc::new((0..keys).map(|_| AtomicU64::new(0)).collect());
    let observed = Arc::new(shuttle::sync::Mutex::new(Observed {
        seen: vec![0; keys],
        ..Observed::default()
    }));
    let re_added = Arc::new(AtomicBool::new(!re_add));

    let worker_threads: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, versions, observed, re_added) = (
                queue.clone(),
                versions.clone(),
                observed.clone(),
                re_added.clone(),
            );
            shuttle::thread::spawn(move || {
                while let Some(key) = shuttle::future::block_on(queue.get()) {
                    {
                        let mut o = observed.lock().unwrap_or_else(PoisonError::into_inner);
                        assert!(o.in_flight.insert(key), "key {key} handed to two workers");
                        o.gets += 1;
                    }
                    if !re_added.swap(true, Ordering::SeqCst) {
                        versions[key].fetch_add(1, Ordering::SeqCst);
                        queue.add(key);
                    }
                    let version = versions[key].load(Ordering::SeqCst);
                    shuttle::thread::yield_now();
                    {
                        let mut o = observed.lock().unwrap_or_else(PoisonError::into_inner);
                        o.seen[key] = o.seen[key].max(version);
                        o.in_flight.remove(&key);
                    }
                    queue.done(&key);
                }
            })
        })
        .collect();

    let producer_threads: Vec<_> = (0..producers)
        .map(|p| {
            let (queue, versions) = (queue.clone(), versions.clone());
            shuttle::thread::spawn(move || {
                for (n, &key) in adds.iter().enumerate() {
                    // Producers interleave their keys differently.
                    let key = (key + p * n) % versions.len();
                    versions[key].fetch_add(1, Ordering::SeqCst);
                    queue.add(key);
                }
            })
        })
        .collect();

    for p in producer_threads {
        p.join().expect("producer");
    }
    shuttle::future::block_on(queue.shutdown_with_drain());
    for w in worker_threads {
        w.join().expect("worker");
    }
    assert!(queue.is_empty(), "drained queue still holds keys");
    let o = observed.lock().unwrap_or_else(PoisonError::into_inner);
    assert!(o.in_flight.is_empty());
    for (key, version) in versions.iter().enumerate() {
        let version = version.load(Ordering::SeqCst);
        assert_eq!(
            o.seen[key], version,
            "key {key}: version {version} was added but the workers last saw {}",
            o.seen[key]
        );
    }
    // Duplicates collapse, but never below one get per key that changed.
    let changed = versions
        .iter()
        .filter(|v| v.load(Ordering::SeqCst) > 0)
        .count();
    assert!(o.gets >= changed);
}

/// Runs `f` under the random scheduler and the PCT scheduler.
fn check(f: impl Fn() + Send + Sync + 'static, random: usize, pct: usize) {
    let f = Arc::new(f);
    let g = f.clone();
    shuttle::check_random(move || g(), iterations(random));
    shuttle::check_pct(move || f(), iterations(pct), 3);
}

#[test]
fn producers_re_adding_one_key_lose_nothing() {
    // Every add after the first hits the fast path or races a get/done on the same key.
    check(|| scenario(1, 2, &[0, 0, 0], 2, false), 1500, 1500);
}

#[test]
fn two_keys_two_producers_two_workers() {
    check(|| scenario(2, 2, &[0, 1, 0, 1], 2, false), 1000, 1000);
}

#[test]
fn add_while_processing_is_processed_again() {
    check(|| scenario(2, 1, &[0, 1, 0], 2, true), 1000, 1000);
}
