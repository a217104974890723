//! Metrics hook: the reflector reports errors and list/watch activity here. Errors are never
//! fatal; they are logged with context and counted.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// What failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A LIST (or one of its pages) failed.
    List,
    /// Opening a WATCH failed.
    WatchStart,
    /// An open WATCH ended with an error (including 410 Gone).
    Watch,
    /// A streaming list (watch-list) attempt failed and the reflector fell back to LIST.
    StreamingList,
}

/// Receives reflector activity. All methods default to no-ops.
pub trait ReflectorMetrics: Send + Sync + fmt::Debug {
    /// An error of the given kind happened (already logged).
    fn error(&self, _name: &str, _kind: ErrorKind) {}
    /// A full (re)list finished with `items` objects.
    fn listed(&self, _name: &str, _items: usize) {}
    /// A watch was opened.
    fn watch_started(&self, _name: &str) {}
    /// A watch event was received.
    fn watch_event(&self, _name: &str) {}
}

/// The default hook: does nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopMetrics;

impl ReflectorMetrics for NoopMetrics {}

/// A hook that counts everything in atomics (useful in tests and simple exporters).
#[derive(Debug, Default)]
pub struct CountingMetrics {
    /// Failed LISTs.
    pub list_errors: AtomicU64,
    /// Failed WATCH starts.
    pub watch_start_errors: AtomicU64,
    /// WATCHes ended by an error.
    pub watch_errors: AtomicU64,
    /// Streaming-list fallbacks.
    pub streaming_list_errors: AtomicU64,
    /// Completed full lists.
    pub lists: AtomicU64,
    /// Opened watches.
    pub watches: AtomicU64,
    /// Received watch events.
    pub events: AtomicU64,
}

impl CountingMetrics {
    /// Total number of errors of every kind.
    pub fn total_errors(&self) -> u64 {
        self.list_errors.load(Ordering::Relaxed)
            + self.watch_start_errors.load(Ordering::Relaxed)
            + self.watch_errors.load(Ordering::Relaxed)
            + self.streaming_list_errors.load(Ordering::Relaxed)
    }
}

impl ReflectorMetrics for CountingMetrics {
    fn error(&self, _name: &str, kind: ErrorKind) {
        let counter = match kind {
            ErrorKind::List => &self.list_errors,
            ErrorKind::WatchStart => &self.watch_start_errors,
            ErrorKind::Watch => &self.watch_errors,
            ErrorKind::StreamingList => &self.streaming_list_errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
    fn listed(&self, _name: &str, _items: usize) {
        self.lists.fetch_add(1, Ordering::Relaxed);
    }
    fn watch_started(&self, _name: &str) {
        self.watches.fetch_add(1, Ordering::Relaxed);
    }
    fn watch_event(&self, _name: &str) {
        self.events.fetch_add(1, Ordering::Relaxed);
    }
}
