//! The synchronisation primitives of the queue's add/get/done protocol (its mutex, atomics and
//! fence), in one place so that the model test (`model_tests/`) can compile the same protocol
//! against shuttle's.

pub(crate) use std::sync::atomic::{AtomicU8, Ordering, fence};

/// The queue's mutex: std's (a futex, with a short spin before it sleeps). Measured under
/// the churn benchmark (2 producer threads and 2 workers on 2 cores), `parking_lot`'s mutex
/// cost more: its spin yields the CPU with `sched_yield`, and those yields were a large share
/// of the time when the lock was contended.
pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(std::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A sweep of idle item states runs after this many dones at least (and at least as many as
/// the states the previous sweep left), so its cost is spread over the dones (see
/// `item_states.rs`). Here so that the model test can sweep at every done.
pub(crate) const SWEEP_PERIOD_MIN: usize = 1024;
