//! Property tests of the queue invariants: an item is never held by two
//! workers at once, and every item added is processed at least once after its
//! last add.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use proptest::prelude::*;

use crate::Queue;

const WORKERS: usize = 3;

#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    Get(usize),
    Done(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..6).prop_map(Op::Add),
        (0..WORKERS).prop_map(Op::Get),
        (0..WORKERS).prop_map(Op::Done),
    ]
}

/// Reference model of client-go's queue.
#[derive(Default)]
struct Model {
    queue: VecDeque<u8>,
    dirty: HashSet<u8>,
    processing: HashSet<u8>,
}

impl Model {
    fn add(&mut self, x: u8) {
        if !self.dirty.insert(x) {
            return;
        }
        if !self.processing.contains(&x) {
            self.queue.push_back(x);
        }
    }
    fn get(&mut self) -> Option<u8> {
        let x = self.queue.pop_front()?;
        self.dirty.remove(&x);
        self.processing.insert(x);
        Some(x)
    }
    fn done(&mut self, x: u8) {
        self.processing.remove(&x);
        if self.dirty.contains(&x) {
            self.queue.push_back(x);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Single-threaded interleavings against the model: same hand-out order,
    /// no double hand-out, nothing lost.
    #[test]
    fn queue_matches_model(ops in proptest::collection::vec(op(), 0..120)) {
        let q: Queue<u8> = Queue::new();
        let mut model = Model::default();
        let mut held: [Option<u8>; WORKERS] = [None; WORKERS];
        // Items added and not yet handed out since their last add.
        let mut owed: HashSet<u8> = HashSet::new();
        for op in ops {
            match op {
                Op::Add(x) => {
                    q.add(x);
                    model.add(x);
                    owed.insert(x);
                }
                Op::Get(w) if held[w].is_none() => {
                    let got = q.try_get();
                    prop_assert_eq!(got, model.get());
                    if let Some(x) = got {
                        prop_assert!(!held.contains(&Some(x)), "{} held twice", x);
                        held[w] = Some(x);
                        owed.remove(&x);
                    }
                }
                Op::Done(w) => {
                    if let Some(x) = held[w].take() {
                        q.done(&x);
                        model.done(x);
                    }
                }
                Op::Get(_) => {}
            }
            prop_assert_eq!(q.len(), model.queue.len());
        }
        for slot in held.iter_mut() {
            if let Some(x) = slot.take() {
                q.done(&x);
            }
        }
        while let Some(x) = q.try_get() {
            owed.remove(&x);
            q.done(&x);
        }
        prop_assert!(owed.is_empty(), "never processed after last add: {:?}", owed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Real concurrency: producers and workers on a multi-threaded runtime.
    #[test]
    fn concurrent_workers_never_share_an_item(
        adds in proptest::collection::vec(0u16..40, 1..400),
        workers in 1usize..6,
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(3)
            .build()
            .unwrap();
        let result: Result<(), String> = runtime.block_on(async move {
            let q: Queue<u16> = Queue::new();
            let clock = Arc::new(AtomicU64::new(1));
            let last_add: Arc<Mutex<HashMap<u16, u64>>> = Arc::default();
            let last_get: Arc<Mutex<HashMap<u16, u64>>> = Arc::default();
            let in_flight: Arc<Mutex<HashSet<u16>>> = Arc::default();
            let violations: Arc<Mutex<Vec<u16>>> = Arc::default();

            let worker_tasks: Vec<_> = (0..workers)
                .map(|_| {
                    let (q, clock, last_get) = (q.clone(), clock.clone(), last_get.clone());
                    let (in_flight, violations) = (in_flight.clone(), violations.clone());
                    tokio::spawn(async move {
                        while let Some(x) = q.get().await {
                            let t = clock.fetch_add(1, Ordering::SeqCst);
                            last_get.lock().insert(x, t);
                            if !in_flight.lock().insert(x) {
                                violations.lock().push(x);
                            }
                            tokio::task::yield_now().await;
                            in_flight.lock().remove(&x);
                            q.done(&x);
                        }
                    })
                })
                .collect();

            let halves: Vec<Vec<u16>> = adds.chunks(adds.len().div_ceil(2)).map(<[u16]>::to_vec).collect();
            let producers: Vec<_> = halves
                .into_iter()
                .map(|chunk| {
                    let (q, clock, last_add) = (q.clone(), clock.clone(), last_add.clone());
                    tokio::spawn(async move {
                        for (i, x) in chunk.into_iter().enumerate() {
                            let t = clock.fetch_add(1, Ordering::SeqCst);
                            last_add.lock().insert(x, t);
                            q.add(x);
                            if i % 8 == 0 {
                                tokio::task::yield_now().await;
                            }
                        }
                    })
                })
                .collect();
            for p in producers {
                p.await.map_err(|e| e.to_string())?;
            }
            q.shutdown_with_drain().await;
            for w in worker_tasks {
                w.await.map_err(|e| e.to_string())?;
            }
            let violations = violations.lock().clone();
            if !violations.is_empty() {
                return Err(format!("items held by two workers: {violations:?}"));
            }
            let last_get = last_get.lock();
            for (x, added) in last_add.lock().iter() {
                match last_get.get(x) {
                    Some(got) if got > added => {}
                    other => return Err(format!("{x} added at {added}, last get {other:?}")),
                }
            }
            Ok(())
        });
        prop_assert!(result.is_ok(), "{:?}", result);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Delaying queue on a paused clock, with upstream's rules: a zero delay
    /// adds at once; the positive delays of an item collapse into one pending
    /// entry at the earliest of them (independently of immediate adds). Every
    /// expected hand-out happens exactly once, at its time, in time order.
    #[test]
    fn delaying_queue_fires_each_item_once_at_earliest_delay(
        adds in proptest::collection::vec((0u8..8, 0u64..100), 1..40),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let result: Result<(), String> = runtime.block_on(async move {
            let q: crate::DelayingQueue<u8> = crate::DelayingQueue::new();
            let start = tokio::time::Instant::now();
            let mut immediate: HashSet<u8> = HashSet::new();
            let mut earliest: HashMap<u8, u64> = HashMap::new();
            for &(item, delay) in &adds {
                q.add_after(item, std::time::Duration::from_millis(delay));
                if delay == 0 {
                    immediate.insert(item);
                } else {
                    let e = earliest.entry(item).or_insert(delay);
                    *e = (*e).min(delay);
                }
            }
            let mut expected: Vec<(u64, u8)> = immediate.iter().map(|&i| (0, i)).collect();
            expected.extend(earliest.iter().map(|(&i, &at)| (at, i)));
            expected.sort_unstable();
            let mut fired: Vec<(u64, u8)> = Vec::new();
            while fired.len() < expected.len() {
                let Some(item) = q.get().await else {
                    return Err("queue shut down".into());
                };
                fired.push(((tokio::time::Instant::now() - start).as_millis() as u64, item));
                q.done(&item);
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            if !q.is_empty() || q.waiting_len() != 0 {
                return Err(format!("left over: len {} waiting {}", q.len(), q.waiting_len()));
            }
            if !fired.windows(2).all(|w| w[0].0 <= w[1].0) {
                return Err(format!("not in time order: {fired:?}"));
            }
            fired.sort_unstable();
            if fired != expected {
                return Err(format!("fired {fired:?}, expected {expected:?}"));
            }
            q.shutdown();
            Ok(())
        });
        prop_assert!(result.is_ok(), "{:?}", result);
    }
}

/// Rate-limiting queue under real concurrency (multi-threaded runtime, real
/// clock, tiny delays): every key converges, no key is held twice at once.
#[test]
fn rate_limiting_queue_concurrent_requeues() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(3)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        const KEYS: u32 = 200;
        const FAILURES: usize = 5;
        let q: crate::RateLimitingQueue<u32> =
            crate::RateLimitingQueue::new(crate::ItemExponentialFailureRateLimiter::new(
                std::time::Duration::from_micros(10),
                std::time::Duration::from_millis(1),
            ));
        let in_flight: Arc<Mutex<HashSet<u32>>> = Arc::default();
        let converged = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (q, in_flight, converged) = (q.clone(), in_flight.clone(), converged.clone());
                tokio::spawn(async move {
                    while let Some(k) = q.get().await {
                        assert!(in_flight.lock().insert(k), "{k} held twice");
                        tokio::task::yield_now().await;
                        in_flight.lock().remove(&k);
                        if q.num_requeues(&k) < FAILURES {
                            q.add_rate_limited(k);
                        } else {
                            q.forget(&k);
                            if converged.fetch_add(1, Ordering::SeqCst) + 1 == u64::from(KEYS) {
                                q.shutdown();
                            }
                        }
                        q.done(&k);
                    }
                })
            })
            .collect();
        for k in 0..KEYS {
            q.add(k);
        }
        for w in workers {
            w.await.unwrap();
        }
        assert_eq!(converged.load(Ordering::SeqCst), u64::from(KEYS));
    });
}
