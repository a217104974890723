//! The delaying queue's timer heap (client-go `util/workqueue/delaying_queue.go`,
//! `waitForPriorityQueue` plus its `waitingForQueue` map).
//!
//! Each waiting item is stored once, in an [`ItemTable`] entry holding its ready time and
//! the sequence number of its current heap entry; heap entries are 32-byte
//! `(ready time, sequence, entry id)` triples, so pushing an item does not copy it and
//! checking whether a surfaced heap entry is still current needs no hashing. When an
//! item's time moves earlier its old heap entry is left behind (stale: its sequence number
//! no longer matches) and dropped when it surfaces.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::Hash;

use tokio::time::Instant;

use crate::item_table::{EntryId, ItemTable};

/// A heap entry, ordered by ready time then insertion order (the id never decides: the
/// sequence number is unique).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct HeapEntry {
    ready_at: Instant,
    seq: u64,
    id: EntryId,
}

/// The current ready time of a waiting item and the sequence number of its heap entry.
struct Due {
    ready_at: Instant,
    seq: u64,
}

/// Timer heap with one current entry per item.
pub(crate) struct TimerHeap<T> {
    heap: BinaryHeap<Reverse<HeapEntry>>,
    items: ItemTable<T, Due>,
    next_seq: u64,
}

impl<T> TimerHeap<T> {
    /// Number of waiting items.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

impl<T: Eq + Hash> TimerHeap<T> {
    pub(crate) fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            items: ItemTable::new(),
            next_seq: 0,
        }
    }

    /// Inserts or moves an entry earlier; a later time for a waiting item is ignored.
    pub(crate) fn insert(&mut self, item: T, ready_at: Instant) {
        let seq = self.next_seq;
        let hash = self.items.hash(&item);
        let id = match self.items.find(hash, &item) {
            Some(id) => {
                let Some(due) = self.items.entry_mut(id).map(|e| &mut e.value) else {
                    return;
                };
                if ready_at >= due.ready_at {
                    return;
                }
                *due = Due { ready_at, seq };
                id
            }
            None => self.items.insert(hash, item, Due { ready_at, seq }),
        };
        self.next_seq += 1;
        self.heap.push(Reverse(HeapEntry { ready_at, seq, id }));
    }

    /// Whether a heap entry is still its item's current one.
    fn is_current(&self, entry: &HeapEntry) -> bool {
        self.items
            .entry(entry.id)
            .is_some_and(|e| e.value.seq == entry.seq)
    }

    /// The earliest current ready time (drops stale entries on the way).
    pub(crate) fn next_ready(&mut self) -> Option<Instant> {
        while let Some(Reverse(top)) = self.heap.peek() {
            if self.is_current(top) {
                return Some(top.ready_at);
            }
            self.heap.pop();
        }
        None
    }

    /// Drops every pending entry.
    pub(crate) fn clear(&mut self) {
        self.heap.clear();
        self.items.clear();
    }

    /// Drops `item`'s pending entry (its heap entry becomes stale) and returns its ready
    /// time.
    #[cfg(test)]
    pub(crate) fn remove(&mut self, item: &T) -> Option<Instant> {
        let id = self.items.find(self.items.hash(item), item)?;
        self.items.remove(id).map(|e| e.value.ready_at)
    }

    /// Removes and returns the next item ready at `now`.
    pub(crate) fn pop_ready(&mut self, now: Instant) -> Option<T> {
        let at = self.next_ready()?;
        if at > now {
            return None;
        }
        let Reverse(entry) = self.heap.pop()?;
        self.items.remove(entry.id).map(|e| e.item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn earliest_time_wins_and_items_pop_in_time_order() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut w: TimerHeap<String> = TimerHeap::new();
        w.insert("a".into(), ms(30));
        w.insert("b".into(), ms(10));
        w.insert("a".into(), ms(20)); // earlier: moves a
        w.insert("b".into(), ms(40)); // later: ignored
        assert_eq!(w.len(), 2);
        assert_eq!(w.next_ready(), Some(ms(10)));
        assert_eq!(w.pop_ready(ms(5)), None);
        assert_eq!(w.pop_ready(ms(50)).as_deref(), Some("b"));
        assert_eq!(w.pop_ready(ms(50)).as_deref(), Some("a"));
        // a's stale 30 ms entry is skipped.
        assert_eq!(w.pop_ready(ms(50)), None);
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn same_time_pops_in_insertion_order_and_reused_ids_are_not_confused() {
        let t0 = Instant::now();
        let mut w: TimerHeap<u32> = TimerHeap::new();
        w.insert(1, t0);
        w.insert(2, t0);
        assert_eq!(w.remove(&1), Some(t0));
        // 3 may reuse 1's id; 1's old heap entry must not hand out 3 early.
        w.insert(3, t0 + Duration::from_secs(1));
        assert_eq!(w.pop_ready(t0), Some(2));
        assert_eq!(w.pop_ready(t0), None);
        assert_eq!(w.next_ready(), Some(t0 + Duration::from_secs(1)));
        w.clear();
        assert_eq!((w.len(), w.next_ready()), (0, None));
    }
}
