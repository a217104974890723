//! The items a [`Queue`](crate::Queue) knows about, with their dirty/processing flags.
//!
//! client-go keeps three structures per queue — the FIFO, the `dirty` set and the
//! `processing` set — plus two metric maps (`addTimes`, `processingStartTimes`), so one
//! `Add` hashes the item up to four times and each of those maps stores its own copy of
//! the key. Here every item the queue tracks has exactly one [`Entry`] holding the item,
//! both flags and both metric timestamps; the FIFO holds 4-byte entry ids. An operation
//! hashes its item once (with foldhash), and the item is stored once: a `String` key is
//! never cloned on `add` or `done`, only when `get` hands it out.
//!
//! An entry exists while its item is dirty or processing (the union of client-go's two
//! sets) and is removed as soon as it is neither.

use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;
use tokio::time::Instant;

/// Index of an entry in the table's slot list.
pub(crate) type EntryId = u32;

/// One tracked item.
pub(crate) struct Entry<T> {
    pub(crate) item: T,
    hash: u64,
    /// Needs processing (client-go `dirty`): queued, or re-added while processing.
    pub(crate) dirty: bool,
    /// Handed out by `get`, not yet `done` (client-go `processing`).
    pub(crate) processing: bool,
    /// First add since the last `get` (client-go metrics `addTimes`), when metrics are on.
    pub(crate) added_at: Option<Instant>,
    /// When `get` handed the item out (client-go `processingStartTimes`), when metrics are on.
    pub(crate) started_at: Option<Instant>,
}

/// Entries addressed by id, found by item through a hash table of ids.
pub(crate) struct ItemTable<T> {
    hasher: foldhash::fast::RandomState,
    /// Ids of the live entries, hashed by their item.
    index: HashTable<EntryId>,
    slots: Vec<Option<Entry<T>>>,
    free: Vec<EntryId>,
}

impl<T: Eq + Hash> ItemTable<T> {
    pub(crate) fn new() -> Self {
        Self {
            hasher: foldhash::fast::RandomState::default(),
            index: HashTable::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// The hash of `item`, to pass to [`find`](Self::find) and [`insert`](Self::insert).
    pub(crate) fn hash(&self, item: &T) -> u64 {
        self.hasher.hash_one(item)
    }

    /// The id of `item`'s entry, if it has one.
    pub(crate) fn find(&self, hash: u64, item: &T) -> Option<EntryId> {
        let slots = &self.slots;
        self.index
            .find(hash, |&id| {
                slots[id as usize]
                    .as_ref()
                    .is_some_and(|e| e.hash == hash && e.item == *item)
            })
            .copied()
    }

    /// Creates an entry for `item`, which must not have one yet; neither flag is set.
    pub(crate) fn insert(&mut self, hash: u64, item: T) -> EntryId {
        let entry = Entry {
            item,
            hash,
            dirty: false,
            processing: false,
            added_at: None,
            started_at: None,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(entry);
                id
            }
            None => {
                // 2^32 distinct items in one queue would need >100 GiB of entries first.
                let id = EntryId::try_from(self.slots.len()).expect("more than 2^32 queued items");
                self.slots.push(Some(entry));
                id
            }
        };
        let slots = &self.slots;
        self.index.insert_unique(hash, id, |&other| {
            slots[other as usize].as_ref().map_or(0, |e| e.hash)
        });
        id
    }

    /// Drops the entry (its item is neither dirty nor processing any more).
    pub(crate) fn remove(&mut self, id: EntryId) {
        let Some(entry) = self.slots.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        if let Ok(found) = self.index.find_entry(entry.hash, |&other| other == id) {
            found.remove();
        }
        self.free.push(id);
    }

    #[cfg(test)]
    pub(crate) fn entry(&self, id: EntryId) -> Option<&Entry<T>> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }

    pub(crate) fn entry_mut(&mut self, id: EntryId) -> Option<&mut Entry<T>> {
        self.slots.get_mut(id as usize).and_then(Option::as_mut)
    }

    /// Every live entry (for the unfinished-work gauges).
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Entry<T>> {
        self.slots.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_insert_remove_reuse() {
        let mut t: ItemTable<String> = ItemTable::new();
        let a = "a".to_string();
        let h = t.hash(&a);
        assert_eq!(t.find(h, &a), None);
        let id = t.insert(h, a.clone());
        assert_eq!(t.find(h, &a), Some(id));
        let b = "b".to_string();
        let hb = t.hash(&b);
        let idb = t.insert(hb, b.clone());
        assert_ne!(id, idb);
        t.remove(id);
        assert_eq!(t.find(h, &a), None);
        assert!(t.entry(id).is_none());
        assert_eq!(t.find(hb, &b), Some(idb));
        // The freed slot is reused.
        let c = "c".to_string();
        let hc = t.hash(&c);
        assert_eq!(t.insert(hc, c.clone()), id);
        assert_eq!(t.entries().count(), 2);
    }

    #[test]
    fn many_items_survive_growth() {
        let mut t: ItemTable<u64> = ItemTable::new();
        for i in 0..10_000u64 {
            let h = t.hash(&i);
            t.insert(h, i);
        }
        for i in (0..10_000u64).step_by(2) {
            let id = t.find(t.hash(&i), &i).expect("present");
            t.remove(id);
        }
        for i in 0..10_000u64 {
            assert_eq!(t.find(t.hash(&i), &i).is_some(), i % 2 == 1, "item {i}");
        }
    }
}
