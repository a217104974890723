//! A small cache whose entries expire, for delegated authentication and authorization answers
//! (upstream caches TokenReview and SubjectAccessReview answers for 10 s by default).

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Most entries kept; when full, expired entries are dropped, then everything.
const MAX_ENTRIES: usize = 4096;

/// A map whose entries are forgotten after the TTL given when each was inserted.
#[derive(Debug)]
pub struct TtlCache<K, V> {
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: Eq + Hash, V: Clone> Default for TtlCache<K, V> {
    fn default() -> Self {
        TtlCache {
            entries: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    /// The value for `key`, if inserted less than its TTL ago.
    pub fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock();
        let (expires, value) = entries.get(key)?;
        (Instant::now() < *expires).then(|| value.clone())
    }

    /// Remembers `value` for `ttl` (a zero TTL remembers nothing).
    pub fn insert(&self, key: K, value: V, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut entries = self.entries.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, (expires, _)| *expires > now);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(key, (now + ttl, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_after_their_ttl() {
        let cache = TtlCache::default();
        cache.insert("a", 1, Duration::from_millis(30));
        cache.insert("b", 2, Duration::ZERO);
        assert_eq!(cache.get(&"a"), Some(1));
        assert_eq!(cache.get(&"b"), None);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(cache.get(&"a"), None);
    }
}
