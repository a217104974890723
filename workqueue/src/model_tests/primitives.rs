//! Shuttle's mutex, atomics and fences with the API of `crate::primitives`: `queue.rs` and
//! `item_states.rs`, compiled a second time under `model_tests`, find these as
//! `super::primitives`.

use std::sync::PoisonError;

pub(crate) use shuttle::sync::atomic::{AtomicU8, Ordering, fence};

/// Sweep idle states at every done, so that sweeps race the fast path too.
pub(crate) const SWEEP_PERIOD_MIN: usize = 1;

/// Shuttle's mutex; a poisoned lock is taken over, as `crate::primitives::Mutex` does.
pub(crate) struct Mutex<T>(shuttle::sync::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(shuttle::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> shuttle::sync::MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
