//! Waiting for caches to sync (client-go `tools/cache/shared_informer.go`, `WaitForCacheSync`
//! and `WaitForNamedCacheSync`, polling every 100 ms), with a timeout and cancellation.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Anything that can report whether its initial state has been delivered.
pub trait HasSynced: Send + Sync {
    /// True once synced.
    fn has_synced(&self) -> bool;
}

impl<F: Fn() -> bool + Send + Sync> HasSynced for F {
    fn has_synced(&self) -> bool {
        self()
    }
}

/// Polling interval of [`wait_for_cache_sync`] (upstream: 100 ms).
pub(crate) const SYNC_POLL_PERIOD: Duration = Duration::from_millis(100);

/// Waits until every check reports synced. Returns false on timeout or cancellation.
pub async fn wait_for_cache_sync(
    checks: &[&dyn HasSynced],
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> bool {
    let deadline = timeout.map(|t| Instant::now() + t);
    loop {
        if checks.iter().all(|c| c.has_synced()) {
            return true;
        }
        if cancel.is_cancelled() || deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        tokio::select! {
            () = cancel.cancelled() => return false,
            () = tokio::time::sleep(SYNC_POLL_PERIOD) => {}
        }
    }
}

/// Like [`wait_for_cache_sync`], with client-go's "Waiting for caches to sync for X" logs.
pub async fn wait_for_named_cache_sync(
    name: &str,
    checks: &[&dyn HasSynced],
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> bool {
    tracing::info!(controller = %name, "Waiting for caches to sync for {name}");
    let ok = wait_for_cache_sync(checks, timeout, cancel).await;
    if ok {
        tracing::info!(controller = %name, "Caches are synced for {name}");
    } else {
        tracing::error!(controller = %name, "unable to sync caches for {name}");
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[tokio::test(start_paused = true)]
    async fn returns_true_once_all_synced_and_false_on_timeout_or_cancel() {
        let flag = Arc::new(AtomicBool::new(false));
        let f = Arc::clone(&flag);
        let check = move || f.load(Ordering::SeqCst);
        let cancel = CancellationToken::new();
        assert!(!wait_for_cache_sync(&[&check], Some(Duration::from_secs(1)), &cancel).await);
        flag.store(true, Ordering::SeqCst);
        assert!(wait_for_cache_sync(&[&check, &|| true], None, &cancel).await);
        cancel.cancel();
        assert!(!wait_for_cache_sync(&[&|| false], None, &cancel).await);
    }
}
