//! A small least-recently-used map (the event correlator's caches are
//! `golang/groupcache/lru` caches of 4096 entries upstream).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// A map that evicts the least recently used entry once `capacity` is reached.
/// `get` and `insert` both count as a use. O(log n) per operation.
#[derive(Debug)]
pub(crate) struct Lru<K, V> {
    capacity: usize,
    tick: u64,
    entries: HashMap<K, (V, u64)>,
    order: BTreeMap<u64, K>,
}

impl<K: Hash + Eq + Clone, V> Lru<K, V> {
    /// An empty cache holding at most `capacity` entries (at least 1).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            tick: 0,
            entries: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    fn touch(&mut self, key: &K) {
        self.tick += 1;
        let tick = self.tick;
        if let Some((_, used)) = self.entries.get_mut(key) {
            self.order.remove(used);
            *used = tick;
            self.order.insert(tick, key.clone());
        }
    }

    /// The value for `key`, marking it most recently used.
    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.touch(key);
        self.entries.get_mut(key).map(|(v, _)| v)
    }

    /// Inserts or replaces `key`, evicting the least recently used entry if full.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        if let Some((v, _)) = self.entries.get_mut(&key) {
            *v = value;
            self.touch(&key);
            return;
        }
        if self.entries.len() >= self.capacity
            && let Some((_, oldest)) = self.order.pop_first()
        {
            self.entries.remove(&oldest);
        }
        self.tick += 1;
        self.order.insert(self.tick, key.clone());
        self.entries.insert(key, (value, self.tick));
    }

    /// Number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let mut c = Lru::new(2);
        c.insert("a", 1);
        c.insert("b", 2);
        assert_eq!(c.get_mut(&"a").copied(), Some(1)); // a is now newer than b
        c.insert("c", 3);
        assert_eq!(c.len(), 2);
        assert!(c.get_mut(&"b").is_none());
        assert_eq!(c.get_mut(&"a").copied(), Some(1));
        assert_eq!(c.get_mut(&"c").copied(), Some(3));
        c.insert("a", 10);
        c.insert("d", 4); // evicts c
        assert!(c.get_mut(&"c").is_none());
        assert_eq!(c.get_mut(&"a").copied(), Some(10));
    }
}
