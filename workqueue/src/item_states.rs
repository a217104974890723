//! The work queue's per-item flags (client-go `util/workqueue/queue.go`, the `dirty` and
//! `processing` sets), readable without the queue's lock.
//!
//! Every item the queue tracks has an [`ItemState`] in a lock-free hash map (`papaya`). The
//! flags change only under the queue's mutex, so the state machine is client-go's; what the
//! map adds is that [`Pinned::is_dirty`] can be answered without that mutex. An add of an
//! item that is already dirty has nothing to do (the coming `get`, or the `done` of the
//! worker holding it, covers it), so that add never touches the queue's lock: producers
//! that re-add keys faster than workers take them stop queueing behind each other and
//! behind the workers.
//!
//! # Idle states
//!
//! client-go deletes a key from its sets at `done`. Here the state of an item that became
//! idle (neither dirty nor processing) is kept for a while, so a key added again soon finds
//! it: a lock-free map pays for each delete with a deferred free and a tombstone that
//! lengthens later probes. Sweeps remove the states idle since before the previous sweep; a
//! sweep runs after `max(1024, states left by the previous sweep)` dones, so an idle key is
//! forgotten after at most two such periods, and the map holds the items that were busy in
//! the last two periods.
//!
//! # Why the lock-free answer is exact
//!
//! * Reading `DIRTY` means that at that instant the item was queued, or processing and due
//!   back after `done`: a `get` will hand it out after this add, which is exactly what the
//!   add would have achieved under the lock (the add is linearised at the read). A swept
//!   state has no `DIRTY` flag and is never reused, so a reader still holding one falls
//!   back to the locked path.
//! * The data a producer changed before its add (say, the object in a store) must be seen
//!   by the worker whose `get` covers the add. The fast path issues a `SeqCst` fence before
//!   reading the flags and `get` one after clearing `DIRTY`: of the two fences, if `get`'s
//!   comes first the add reads "not dirty" and takes the lock; if the add's comes first the
//!   worker sees everything the producer wrote before it (the store-buffering pattern that
//!   a lock would otherwise have ordered).

use std::hash::Hash;

use tokio::time::Instant;

use papaya::Guard as _;

pub(crate) use super::primitives::SWEEP_PERIOD_MIN;
use super::primitives::{AtomicU8, Ordering, fence};

/// Queued, or re-added while processing (client-go `dirty`).
pub(crate) const DIRTY: u8 = 1;
/// Handed out by `get`, not yet `done` (client-go `processing`).
pub(crate) const PROCESSING: u8 = 2;
/// On an idle state (neither dirty nor processing): idle since after the last sweep. The
/// next sweep removes an idle state without this flag and clears it on the others.
pub(crate) const RECENT: u8 = 4;

/// The metric timestamps of an item, used only when the queue has metrics.
#[derive(Default)]
pub(crate) struct Times {
    /// First add since the last `get` (client-go metrics `addTimes`).
    pub(crate) added_at: Option<Instant>,
    /// When `get` handed the item out (client-go `processingStartTimes`).
    pub(crate) started_at: Option<Instant>,
}

/// The bookkeeping of one tracked item.
pub(crate) struct ItemState {
    /// `DIRTY | PROCESSING`; written only under the queue's mutex.
    flags: AtomicU8,
    /// Touched only under the queue's mutex (the inner lock is never contended).
    pub(crate) times: parking_lot::Mutex<Times>,
}

impl ItemState {
    pub(crate) fn flags(&self) -> u8 {
        self.flags.load(Ordering::Relaxed)
    }

    /// Sets the flags; the caller holds the queue's mutex.
    pub(crate) fn set_flags(&self, flags: u8) {
        self.flags.store(flags, Ordering::Relaxed);
    }

    /// Clears `DIRTY` as `get` hands the item out, then fences: see the module docs.
    pub(crate) fn start_processing(&self) {
        self.flags.store(PROCESSING, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }
}

/// The states of every tracked item.
pub(crate) struct ItemStates<T> {
    map: papaya::HashMap<T, ItemState, foldhash::fast::RandomState>,
}

impl<T: Eq + Hash> ItemStates<T> {
    pub(crate) fn new() -> Self {
        Self {
            map: papaya::HashMap::builder()
                .hasher(foldhash::fast::RandomState::default())
                // Writers are serialised by the queue's lock anyway, so the one that grows
                // the table copies it at once; an incremental copy would advance only with
                // later writes and leave readers searching two tables until then.
                .resize_mode(papaya::ResizeMode::Blocking)
                .build(),
        }
    }

    /// A view for one operation: states it returns stay readable until it is dropped.
    pub(crate) fn pin(&self) -> Pinned<'_, T> {
        Pinned {
            map: &self.map,
            guard: self.map.guard(),
        }
    }

    /// How long each item being processed has been at it (the unfinished-work gauges).
    pub(crate) fn processing_since(&self) -> Vec<Instant> {
        self.map
            .pin()
            .values()
            .filter_map(|state| state.times.lock().started_at)
            .collect()
    }
}

/// [`ItemStates`] pinned for one operation (an epoch guard: nothing it returned is freed
/// while it lives).
pub(crate) struct Pinned<'a, T> {
    map: &'a papaya::HashMap<T, ItemState, foldhash::fast::RandomState>,
    guard: papaya::LocalGuard<'a>,
}

impl<T: Eq + Hash> Pinned<'_, T> {
    /// Whether `item` is dirty right now, without the queue's lock (the add fast path).
    pub(crate) fn is_dirty(&self, item: &T) -> bool {
        fence(Ordering::SeqCst);
        self.map
            .get(item, &self.guard)
            .is_some_and(|state| state.flags.load(Ordering::Relaxed) & DIRTY != 0)
    }

    /// `item`'s state, if it is tracked.
    pub(crate) fn get(&self, item: &T) -> Option<&ItemState> {
        self.map.get(item, &self.guard)
    }

    /// Starts tracking `item` as dirty, unless it is tracked already: then returns its
    /// state. The caller holds the queue's mutex.
    pub(crate) fn insert_dirty(
        &self,
        item: T,
        times: impl FnOnce() -> Times,
    ) -> Option<&ItemState> {
        self.map
            .try_insert_with(
                item,
                || ItemState {
                    flags: AtomicU8::new(DIRTY),
                    times: parking_lot::Mutex::new(times()),
                },
                &self.guard,
            )
            .err()
    }

    /// Removes the states idle since before the previous sweep and clears `RECENT` on the
    /// other idle ones; returns how many were removed. The caller holds the queue's mutex.
    pub(crate) fn sweep(&self) -> usize {
        let mut removed = 0;
        self.map.retain(
            |_, state| {
                let flags = state.flags();
                if flags & (DIRTY | PROCESSING) != 0 {
                    return true;
                }
                if flags & RECENT != 0 {
                    state.set_flags(0);
                    return true;
                }
                removed += 1;
                false
            },
            &self.guard,
        );
        // Hand the removed states to the reclaimer now rather than when this thread has
        // retired a full batch (which a quiet queue might never do).
        self.guard.flush();
        removed
    }
}
