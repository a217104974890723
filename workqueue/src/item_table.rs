//! A table of items with a value each, addressed by a stable 4-byte id: where the delaying
//! queue's timer heap stores and hashes its items.
//!
//! client-go's delaying queue keeps each waiting item in a map and again in each heap
//! entry. Here the item is kept once, in an [`Entry`] of this table with its due time as
//! the entry's value, and the heap refers to it by id; an operation hashes its item once
//! (foldhash). (The work queue itself keeps its items' flags in `item_states.rs`, where
//! they can be read without the queue's lock.)

use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

/// Index of an entry in the table's slot list.
pub(crate) type EntryId = u32;

/// One stored item and its value.
pub(crate) struct Entry<T, V> {
    pub(crate) item: T,
    hash: u64,
    pub(crate) value: V,
}

/// Entries addressed by id, found by item through a hash table of ids.
pub(crate) struct ItemTable<T, V> {
    hasher: foldhash::fast::RandomState,
    /// Ids of the live entries, hashed by their item.
    index: HashTable<EntryId>,
    slots: Vec<Option<Entry<T, V>>>,
    free: Vec<EntryId>,
}

impl<T, V> ItemTable<T, V> {
    /// Number of stored items.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }
}

impl<T: Eq + Hash, V> ItemTable<T, V> {
    pub(crate) fn new() -> Self {
        Self {
            hasher: foldhash::fast::RandomState::default(),
            index: HashTable::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Drops every entry.
    pub(crate) fn clear(&mut self) {
        self.index.clear();
        self.slots.clear();
        self.free.clear();
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

    /// Creates an entry for `item`, which must not have one yet.
    pub(crate) fn insert(&mut self, hash: u64, item: T, value: V) -> EntryId {
        let entry = Entry { item, hash, value };
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

    /// Removes the entry and returns it; its id may be reused afterwards.
    pub(crate) fn remove(&mut self, id: EntryId) -> Option<Entry<T, V>> {
        let entry = self.slots.get_mut(id as usize).and_then(Option::take)?;
        if let Ok(found) = self.index.find_entry(entry.hash, |&other| other == id) {
            found.remove();
        }
        self.free.push(id);
        Some(entry)
    }

    pub(crate) fn entry(&self, id: EntryId) -> Option<&Entry<T, V>> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }

    pub(crate) fn entry_mut(&mut self, id: EntryId) -> Option<&mut Entry<T, V>> {
        self.slots.get_mut(id as usize).and_then(Option::as_mut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_insert_remove_reuse() {
        let mut t: ItemTable<String, u8> = ItemTable::new();
        let a = "a".to_string();
        let h = t.hash(&a);
        assert_eq!(t.find(h, &a), None);
        let id = t.insert(h, a.clone(), 1);
        assert_eq!(t.find(h, &a), Some(id));
        let b = "b".to_string();
        let hb = t.hash(&b);
        let idb = t.insert(hb, b.clone(), 2);
        assert_ne!(id, idb);
        let removed = t.remove(id).expect("present");
        assert_eq!((removed.item.as_str(), removed.value), ("a", 1));
        assert_eq!(t.find(h, &a), None);
        assert!(t.entry(id).is_none());
        assert_eq!(t.find(hb, &b), Some(idb));
        // The freed slot is reused.
        let c = "c".to_string();
        let hc = t.hash(&c);
        assert_eq!(t.insert(hc, c.clone(), 3), id);
        assert_eq!(t.len(), 2);
        t.clear();
        assert_eq!(t.len(), 0);
        assert_eq!(t.find(hb, &b), None);
    }

    #[test]
    fn many_items_survive_growth() {
        let mut t: ItemTable<u64, ()> = ItemTable::new();
        for i in 0..10_000u64 {
            let h = t.hash(&i);
            t.insert(h, i, ());
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
