//! The workers parked in [`Queue::get`](crate::Queue::get): an async condition variable
//! that lives inside the queue's own mutex (client-go `util/workqueue/queue.go`, its `cond`).
//!
//! client-go's queue is a mutex plus `sync.Cond`: `Add` signals only when it pushes an
//! item, and a `Signal` with nobody waiting costs almost nothing. The tokio equivalent,
//! `Notify`, has its own lock and atomics, and a `notify_one` with nobody waiting leaves
//! a permit that the next waiter consumes only to find the queue empty and wait again.
//! Keeping the waiters under the queue's mutex instead makes a wake-up exact: `add` wakes
//! one parked worker only if there is one (a plain length check under a lock it already
//! holds), each pushed item claims at most one worker, and a worker that was woken but
//! cancelled passes its claim on, so no wake-up is lost and none is wasted.

use std::collections::VecDeque;
use std::task::Waker;

enum Slot {
    Vacant,
    /// Waiting for an item; woken with this waker.
    Parked(Waker),
    /// Woken (an item was pushed, or shutdown); not yet polled again.
    Notified,
}

/// Parked workers, in arrival order. Always used under the queue's mutex.
pub(crate) struct ParkedWorkers {
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Ids of the `Parked` slots, oldest first.
    parked: VecDeque<usize>,
}

impl ParkedWorkers {
    pub(crate) fn new() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            parked: VecDeque::new(),
        }
    }

    /// Parks the caller (`id` is its slot, allocated on first use), or refreshes its waker.
    pub(crate) fn park(&mut self, id: &mut Option<usize>, waker: &Waker) {
        let slot_id = match *id {
            Some(slot_id) => slot_id,
            None => {
                let slot_id = match self.free.pop() {
                    Some(slot_id) => slot_id,
                    None => {
                        self.slots.push(Slot::Vacant);
                        self.slots.len() - 1
                    }
                };
                *id = Some(slot_id);
                slot_id
            }
        };
        match &mut self.slots[slot_id] {
            Slot::Parked(current) => {
                if !current.will_wake(waker) {
                    current.clone_from(waker);
                }
            }
            slot => {
                *slot = Slot::Parked(waker.clone());
                self.parked.push_back(slot_id);
            }
        }
    }

    /// Frees the caller's slot; returns whether it had been notified (a wake-up the
    /// caller did not use, which the caller should pass on with [`notify_one`](Self::notify_one)).
    pub(crate) fn release(&mut self, id: usize) -> bool {
        let Some(slot) = self.slots.get_mut(id) else {
            return false;
        };
        let notified = match std::mem::replace(slot, Slot::Vacant) {
            Slot::Parked(_) => {
                if let Some(pos) = self.parked.iter().position(|&p| p == id) {
                    self.parked.remove(pos);
                }
                false
            }
            Slot::Notified => true,
            Slot::Vacant => false,
        };
        self.free.push(id);
        notified
    }

    /// Claims the longest-parked worker; the caller wakes the returned waker after
    /// releasing the queue's lock.
    pub(crate) fn notify_one(&mut self) -> Option<Waker> {
        let id = self.parked.pop_front()?;
        match std::mem::replace(&mut self.slots[id], Slot::Notified) {
            Slot::Parked(waker) => Some(waker),
            other => {
                // Unreachable: `parked` lists only parked slots. Keep the slot as it was.
                self.slots[id] = other;
                None
            }
        }
    }

    /// Claims every parked worker (shutdown).
    pub(crate) fn notify_all(&mut self) -> Vec<Waker> {
        let mut wakers = Vec::with_capacity(self.parked.len());
        while let Some(waker) = self.notify_one() {
            wakers.push(waker);
        }
        wakers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Counter(AtomicUsize);
    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Counter>, Waker) {
        let c = Arc::new(Counter(AtomicUsize::new(0)));
        (c.clone(), Waker::from(c))
    }

    #[test]
    fn notify_one_wakes_in_arrival_order_and_only_parked_workers() {
        let mut w = ParkedWorkers::new();
        assert!(w.notify_one().is_none(), "nobody parked: no wake-up");
        let (c1, w1) = waker();
        let (c2, w2) = waker();
        let (mut id1, mut id2) = (None, None);
        w.park(&mut id1, &w1);
        w.park(&mut id2, &w2);
        w.notify_one().expect("first parked").wake();
        assert_eq!(c1.0.load(Ordering::SeqCst), 1);
        assert_eq!(c2.0.load(Ordering::SeqCst), 0);
        // The notified worker releases its slot: it reports the wake-up it got.
        assert!(w.release(id1.expect("slot")));
        // The second one is cancelled while parked: nothing to pass on, and no longer parked.
        assert!(!w.release(id2.expect("slot")));
        assert!(w.notify_one().is_none());
    }

    #[test]
    fn notified_worker_parks_again_and_notify_all_wakes_everyone() {
        let mut w = ParkedWorkers::new();
        let (c1, w1) = waker();
        let (c2, w2) = waker();
        let (mut id1, mut id2) = (None, None);
        w.park(&mut id1, &w1);
        w.notify_one().expect("parked").wake();
        // Woken but found nothing: parks again with the same slot.
        w.park(&mut id1, &w1);
        w.park(&mut id2, &w2);
        let all = w.notify_all();
        assert_eq!(all.len(), 2);
        all.into_iter().for_each(Waker::wake);
        assert_eq!(c1.0.load(Ordering::SeqCst), 2);
        assert_eq!(c2.0.load(Ordering::SeqCst), 1);
        assert!(w.notify_all().is_empty());
    }
}
