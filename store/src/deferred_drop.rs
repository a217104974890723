//! Freeing replaced and removed objects off the writer's path, for the stores that ask
//! ([`Store::set_deferred_drop`](crate::Store::set_deferred_drop)).
//!
//! Freeing a Kubernetes object is freeing every string, map and vector in it: for a Pod,
//! dozens of allocations, about as much work as the update that replaced it. Go leaves that
//! to its garbage collector, on other threads; here such a store keeps a reference to each
//! object it replaces or removes in a [`Graveyard`] (under the write lock it already holds)
//! and hands the references over, [`BATCH`] at a time, to one background thread of the
//! process that drops them. The caller still gets the replaced object back (informers need
//! it for their update events); when it lets go of it, that is a reference-count decrement,
//! and the free happens on the background thread. The work is moved, not removed, and with
//! glibc's allocator it grows (a free from another thread than the allocating one costs
//! about twice as much): it counts in the process's CPU time, which the benchmarks report.

use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, OnceLock};

/// How many objects a store collects before handing them over (one channel message and one
/// allocation per batch; at most this many replaced objects per store wait for a batch).
pub(crate) const BATCH: usize = 256;

/// Something to drop on the background thread.
type Parcel = Box<dyn Send>;

/// The background thread's queue, started on first use; `None` if the thread could not be
/// started (then everything is dropped in place, as without this module).
fn dropper() -> Option<&'static Sender<Parcel>> {
    static DROPPER: OnceLock<Option<Sender<Parcel>>> = OnceLock::new();
    DROPPER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Parcel>();
            std::thread::Builder::new()
                .name("kcm-store-drop".into())
                .spawn(move || {
                    for parcel in rx {
                        drop(parcel);
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Drops `value` on the background thread (or here, if there is none).
pub(crate) fn drop_later<V: Send + 'static>(value: V) {
    let Some(dropper) = dropper() else {
        return;
    };
    let parcel: Parcel = Box::new(value);
    // If the thread is gone the parcel comes back in the error and is dropped here.
    let _ = dropper.send(parcel);
}

/// Waits until everything handed to [`drop_later`] so far has been dropped.
pub(crate) fn wait_dropped() {
    let (done, dropped) = mpsc::channel::<()>();
    // The background thread drops parcels in order: when it drops this sender, everything
    // sent before it is gone, and `recv` sees the channel close.
    drop_later(done);
    let _ = dropped.recv();
}

/// The replaced and removed objects of one store, waiting to be handed over.
///
/// A full batch is handed over at the start of the next write, not at once: the write that
/// filled it has returned some of its objects to its caller, who usually lets go of them
/// before writing again, so that the background thread's reference is the last one.
pub(crate) struct Graveyard<T> {
    filling: Vec<Arc<T>>,
    sealed: Vec<Vec<Arc<T>>>,
}

impl<T: Send + Sync + 'static> Graveyard<T> {
    pub(crate) fn new() -> Self {
        Self {
            filling: Vec::new(),
            sealed: Vec::new(),
        }
    }

    /// Starts a write: returns the batches filled by earlier writes, for the caller to pass
    /// to [`drop_later`] once it has released the store's lock.
    #[must_use]
    pub(crate) fn begin(&mut self) -> Vec<Vec<Arc<T>>> {
        std::mem::take(&mut self.sealed)
    }

    /// Keeps `obj` for a later batch.
    pub(crate) fn bury(&mut self, obj: Arc<T>) {
        if self.filling.capacity() == 0 {
            self.filling.reserve_exact(BATCH);
        }
        self.filling.push(obj);
        if self.filling.len() >= BATCH {
            self.sealed.push(std::mem::take(&mut self.filling));
        }
    }

    /// Every object waiting (for [`Store::drain_drops`](crate::Store::drain_drops)).
    pub(crate) fn take_all(&mut self) -> Vec<Vec<Arc<T>>> {
        let mut all = std::mem::take(&mut self.sealed);
        all.push(std::mem::take(&mut self.filling));
        all
    }
}
