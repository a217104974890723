//! A work queue with client-go `workqueue` semantics: an item is queued at most once, and never
//! handed to two workers at the same time (an item added while it is processed is queued again
//! when it is done).

use std::collections::{HashSet, VecDeque};
use std::hash::Hash;

use parking_lot::Mutex;
use tokio::sync::Notify;

#[derive(Debug)]
struct State<T> {
    items: VecDeque<T>,
    dirty: HashSet<T>,
    processing: HashSet<T>,
}

/// The queue.
#[derive(Debug)]
pub(crate) struct WorkQueue<T> {
    state: Mutex<State<T>>,
    ready: Notify,
}

impl<T: Clone + Eq + Hash> WorkQueue<T> {
    pub(crate) fn new() -> Self {
        WorkQueue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                dirty: HashSet::new(),
                processing: HashSet::new(),
            }),
            ready: Notify::new(),
        }
    }

    /// Queue an item (no-op when it is already waiting).
    pub(crate) fn add(&self, item: T) {
        let mut s = self.state.lock();
        if !s.dirty.insert(item.clone()) {
            return;
        }
        if s.processing.contains(&item) {
            return;
        }
        s.items.push_back(item);
        drop(s);
        self.ready.notify_one();
    }

    fn try_get(&self) -> Option<T> {
        let mut s = self.state.lock();
        let item = s.items.pop_front()?;
        s.dirty.remove(&item);
        s.processing.insert(item.clone());
        Some(item)
    }

    /// The next item; call [`WorkQueue::done`] after processing it.
    pub(crate) async fn get(&self) -> T {
        loop {
            if let Some(item) = self.try_get() {
                // More may be waiting for other workers.
                if !self.state.lock().items.is_empty() {
                    self.ready.notify_one();
                }
                return item;
            }
            self.ready.notified().await;
        }
    }

    /// Processing of `item` is over; it is queued again if it was added meanwhile.
    pub(crate) fn done(&self, item: &T) {
        let mut s = self.state.lock();
        s.processing.remove(item);
        if s.dirty.contains(item) {
            s.items.push_back(item.clone());
            drop(s);
            self.ready.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn dedup_and_no_concurrent_processing() {
        let q = WorkQueue::new();
        q.add(1);
        q.add(1);
        q.add(2);
        let a = q.get().await;
        assert_eq!(a, 1);
        // Added again while processing: not handed out until done.
        q.add(1);
        assert_eq!(q.get().await, 2);
        assert!(q.try_get().is_none());
        q.done(&1);
        assert_eq!(q.get().await, 1);
        q.done(&1);
        q.done(&2);
        assert!(q.try_get().is_none());
    }
}
