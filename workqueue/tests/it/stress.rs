//! Stress test of `Queue` on real threads with a linearizability check of client-go's
//! guarantees: producers change a key's data (a version) and then add the key, workers get,
//! read the version, and mark done; a key is never held by two workers at once, and every
//! add is seen by a later get (the last version of every key is read by a worker), whether
//! the add took the lock or the lock-free fast path for a key already dirty.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use kcm_workqueue::Queue;

const PRODUCERS: usize = 4;
const ADDS_PER_PRODUCER: usize = 40_000;
const WORKERS: usize = 3;

struct Keys {
    /// Bumped by a producer before each add: the data the add announces.
    versions: Vec<AtomicU64>,
    /// Set while a worker holds the key.
    in_flight: Vec<AtomicBool>,
    /// The highest version a worker read after `get`.
    seen: Vec<AtomicU64>,
}

fn run(queue: Queue<usize>, runtime: &tokio::runtime::Runtime, keys_count: usize) {
    let keys = Arc::new(Keys {
        versions: (0..keys_count).map(|_| AtomicU64::new(0)).collect(),
        in_flight: (0..keys_count).map(|_| AtomicBool::new(false)).collect(),
        seen: (0..keys_count).map(|_| AtomicU64::new(0)).collect(),
    });
    let gets = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (queue, keys, gets) = (queue.clone(), keys.clone(), gets.clone());
            runtime.spawn(async move {
                while let Some(key) = queue.get().await {
                    assert!(
                        !keys.in_flight[key].swap(true, Ordering::SeqCst),
                        "key {key} handed to two workers at once"
                    );
                    let version = keys.versions[key].load(Ordering::SeqCst);
                    let before = keys.seen[key].fetch_max(version, Ordering::SeqCst);
                    assert!(before <= version, "key {key}: version went back");
                    // Some slow syncs, so that adds meet keys being processed.
                    if (gets.fetch_add(1, Ordering::Relaxed) + w) % 64 == 0 {
                        tokio::task::yield_now().await;
                    }
                    keys.in_flight[key].store(false, Ordering::SeqCst);
                    queue.done(&key);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (queue, keys) = (queue.clone(), keys.clone());
            std::thread::spawn(move || {
                for n in 0..ADDS_PER_PRODUCER {
                    let key = (n * 7 + p * 13 + n / 97) % keys_count;
                    keys.versions[key].fetch_add(1, Ordering::SeqCst);
                    queue.add(key);
                    // Now and then let the workers catch up, so keys also go through
                    // "not tracked" and are inserted again.
                    if n % 4096 == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                }
            })
        })
        .collect();
    for p in producers {
        p.join().expect("producer panicked");
    }
    runtime.block_on(queue.shutdown_with_drain());
    for w in workers {
        runtime.block_on(w).expect("worker panicked");
    }
    for key in 0..keys_count {
        let version = keys.versions[key].load(Ordering::SeqCst);
        let seen = keys.seen[key].load(Ordering::SeqCst);
        assert_eq!(seen, version, "key {key}: an add was lost");
    }
    let gets = gets.load(Ordering::SeqCst);
    assert!(
        gets >= keys_count.min(PRODUCERS * ADDS_PER_PRODUCER),
        "only {gets} gets"
    );
    assert!(gets <= PRODUCERS * ADDS_PER_PRODUCER);
}

#[test]
fn every_add_is_seen_by_a_later_get_under_contention() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    // Few keys: most adds meet a key already dirty or processing. Many keys: keys also go
    // idle, are swept and come back.
    for keys in [64, 64, 5000] {
        run(Queue::new(), &runtime, keys);
    }
}
