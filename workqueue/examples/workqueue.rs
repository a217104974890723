//! A rate-limiting work queue with two workers: duplicate adds collapse into one item, a failing
//! item is retried with per-item exponential backoff (10 ms, 20 ms, 40 ms) until it succeeds,
//! `add_after` delays an item, and `shutdown_with_drain` waits for the work in flight.
//!
//! `cargo run -p kcm-workqueue --example workqueue`

use std::time::{Duration, Instant};

use kcm_workqueue::{ItemExponentialFailureRateLimiter, RateLimitingQueue};

#[tokio::main]
async fn main() {
    let queue: RateLimitingQueue<String> = RateLimitingQueue::builder()
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(10),
            Duration::from_secs(1),
        ))
        .build();
    let start = Instant::now();

    for key in ["default/web", "default/api", "default/web"] {
        queue.add(key.to_string());
    }
    println!("3 adds, {} queued (duplicates collapse)", queue.len());
    queue.add_after("default/late".to_string(), Duration::from_millis(150));

    let workers: Vec<_> = (1..=2)
        .map(|id| {
            let queue = queue.clone();
            tokio::spawn(async move {
                while let Some(key) = queue.get().await {
                    let attempt = queue.num_requeues(&key) + 1;
                    let at = start.elapsed().as_millis();
                    // "default/api" fails on its first three attempts.
                    if key == "default/api" && attempt <= 3 {
                        println!("{at:>4} ms worker {id}: {key} attempt {attempt} failed, requeued with backoff");
                        queue.add_rate_limited(key.clone());
                    } else {
                        println!("{at:>4} ms worker {id}: {key} attempt {attempt} done");
                        queue.forget(&key);
                    }
                    queue.done(&key);
                }
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_millis(300)).await;
    queue.shutdown_with_drain().await;
    for w in workers {
        w.await.expect("worker");
    }
    println!("queue drained and shut down, {} left", queue.len());
}
