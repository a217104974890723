//! How long controller syncs take, reported to a process-wide observer.
//!
//! Every sync run by [`worker`](crate::worker) is timed and handed to the observer installed
//! with [`set_sync_observer`], together with the name of the queue it came from (the
//! controller's queue name, e.g. `deployment`) and whether it succeeded. Nothing is recorded
//! until an observer is installed. A binary installs one to export the durations as metrics;
//! libraries and tests usually install none.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use kcm_controller::sync_metrics::{SyncObserver, SyncOutcome, set_sync_observer};
//!
//! #[derive(Debug)]
//! struct Print;
//! impl SyncObserver for Print {
//!     fn observe(&self, queue: &str, elapsed: Duration, outcome: SyncOutcome) {
//!         println!("{queue}: {elapsed:?} {}", outcome.as_str());
//!     }
//! }
//! assert!(set_sync_observer(Arc::new(Print)));
//! assert!(!set_sync_observer(Arc::new(Print))); // only the first call takes effect
//! ```

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How a sync ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncOutcome {
    /// The sync returned `Ok`.
    Success,
    /// The sync returned an error (the key is requeued or dropped by the retry policy).
    Error,
    /// The sync stopped at the leader's write fence: a write was refused, not sent (the key
    /// is requeued without counting a failure).
    Fenced,
    /// The sync panicked (the key is requeued with backoff).
    Panic,
}

impl SyncOutcome {
    /// The label value: `success`, `error`, `fenced` or `panic`.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncOutcome::Success => "success",
            SyncOutcome::Error => "error",
            SyncOutcome::Fenced => "fenced",
            SyncOutcome::Panic => "panic",
        }
    }
}

/// Receives the duration of every finished sync.
pub trait SyncObserver: Send + Sync + fmt::Debug {
    /// Called once per sync, on the worker task, right after the sync returned. Must not block.
    fn observe(&self, queue: &str, elapsed: Duration, outcome: SyncOutcome);
}

static OBSERVER: OnceLock<Arc<dyn SyncObserver>> = OnceLock::new();

/// Installs the process-wide observer. Only the first call has an effect; it returns `true`
/// if this call installed `observer`.
pub fn set_sync_observer(observer: Arc<dyn SyncObserver>) -> bool {
    OBSERVER.set(observer).is_ok()
}

pub(crate) fn observe(queue: &str, elapsed: Duration, outcome: SyncOutcome) {
    if let Some(observer) = OBSERVER.get() {
        observer.observe(queue, elapsed, outcome);
    }
}
