//! Slow-start batching of API calls (upstream `slowStartBatch`, used by the
//! ReplicaSet controller to create pods): run 1, then 2, 4, 8, … calls
//! concurrently, and stop after the first batch in which any call fails, so a
//! quota denial costs a handful of doomed calls instead of hundreds.

use std::future::Future;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

/// Initial batch size used by the workload controllers (upstream `SlowStartInitialBatchSize`).
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;

/// The batch sizes [`slow_start_batch`] uses for `count` calls: `initial`,
/// doubling, the last truncated to what remains (10 → `[1, 2, 4, 3]`).
pub fn slow_start_batch_sizes(count: usize, initial_batch_size: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut remaining = count;
    let mut batch = remaining.min(initial_batch_size);
    while batch > 0 {
        sizes.push(batch);
        remaining -= batch;
        batch = batch.saturating_mul(2).min(remaining);
    }
    sizes
}

/// Calls `f` `count` times in exponentially growing concurrent batches, stopping
/// after the first batch with a failure. Returns the number of successful calls
/// and, if a batch failed, the first error that batch reported; calls in later
/// batches are never made.
///
/// ```
/// # tokio_test_block_on(async {
/// use kcm_controller::slow_start::slow_start_batch;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let calls = AtomicUsize::new(0);
/// let (ok, err) = slow_start_batch(10, 1, || async {
///     let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
///     if n > 5 { Err(format!("call {n} refused")) } else { Ok(()) }
/// }).await;
/// assert_eq!(ok, 5);               // batches 1 + 2 succeed, the batch of 4 has 2 failures
/// assert!(err.is_some());
/// assert_eq!(calls.load(Ordering::SeqCst), 7);
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
pub async fn slow_start_batch<F, Fut, E>(
    count: usize,
    initial_batch_size: usize,
    f: F,
) -> (usize, Option<E>)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let mut successes = 0;
    for batch in slow_start_batch_sizes(count, initial_batch_size) {
        let mut calls: FuturesUnordered<Fut> = (0..batch).map(|_| f()).collect();
        let mut first_err = None;
        let mut failures = 0;
        while let Some(res) = calls.next().await {
            if let Err(e) = res {
                failures += 1;
                first_err.get_or_insert(e);
            }
        }
        successes += batch - failures;
        if first_err.is_some() {
            return (successes, first_err);
        }
    }
    (successes, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Spec derived vector D6.
    #[test]
    fn batch_sizes() {
        let cases: &[(usize, usize, &[usize])] = &[
            (0, 1, &[]),
            (1, 1, &[1]),
            (3, 1, &[1, 2]),
            (10, 1, &[1, 2, 4, 3]),
            (500, 1, &[1, 2, 4, 8, 16, 32, 64, 128, 245]),
            (25, 10, &[10, 15]),
            (5, 0, &[]),
        ];
        for (count, initial, want) in cases {
            assert_eq!(
                slow_start_batch_sizes(*count, *initial),
                *want,
                "count {count} initial {initial}"
            );
        }
    }

    /// Upstream `TestSlowStartBatch` (replica_set_test.go).
    #[tokio::test]
    async fn test_slow_start_batch() {
        // (limit, want successes, want error, want calls)
        let cases = [(0, 0, true, 1), (10, 10, false, 10), (5, 5, true, 7)];
        for (limit, want_ok, want_err, want_calls) in cases {
            let calls = AtomicUsize::new(0);
            let (ok, err) = slow_start_batch(10, 1, || async {
                let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                if n > limit {
                    Err(format!("limit {limit} reached"))
                } else {
                    Ok(())
                }
            })
            .await;
            assert_eq!(ok, want_ok, "limit {limit}");
            assert_eq!(err.is_some(), want_err, "limit {limit}");
            assert_eq!(calls.load(Ordering::SeqCst), want_calls, "limit {limit}");
        }
    }

    proptest::proptest! {
        /// Sizes sum to `count`, start at `min(count, initial)` and at most double.
        #[test]
        fn batch_sizes_cover_count(count in 0usize..5000, initial in 1usize..20) {
            let sizes = slow_start_batch_sizes(count, initial);
            proptest::prop_assert_eq!(sizes.iter().sum::<usize>(), count);
            if let Some(first) = sizes.first() {
                proptest::prop_assert_eq!(*first, count.min(initial));
            }
            for w in sizes.windows(2) {
                proptest::prop_assert!(w[1] <= 2 * w[0] && w[1] > 0);
            }
        }
    }

    #[tokio::test]
    async fn calls_in_a_batch_run_concurrently() {
        // A batch of 2 only completes if both calls are in flight together.
        let barrier = tokio::sync::Barrier::new(2);
        let calls = AtomicUsize::new(0);
        let (ok, err) = slow_start_batch(3, 1, || async {
            if calls.fetch_add(1, Ordering::SeqCst) >= 1 {
                barrier.wait().await;
            }
            Ok::<(), String>(())
        })
        .await;
        assert_eq!((ok, err), (3, None));
    }
}
