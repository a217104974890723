//! Owners verified absent (upstream `uid_cache.go`'s `ReferenceCache`): a least-recently-used
//! set of coordinates, so that dependents of one deleted owner need one GET, not one each.

use std::collections::{BTreeMap, HashMap};

use super::graph::ObjectRef;

/// Upstream keeps 500 entries.
pub(crate) const CAPACITY: usize = 500;

/// The cache: coordinates by their last use.
#[derive(Debug)]
pub(crate) struct AbsentOwnerCache {
    capacity: usize,
    clock: u64,
    last_use: HashMap<ObjectRef, u64>,
    by_use: BTreeMap<u64, ObjectRef>,
}

impl AbsentOwnerCache {
    pub(crate) fn new(capacity: usize) -> Self {
        AbsentOwnerCache {
            capacity: capacity.max(1),
            clock: 0,
            last_use: HashMap::new(),
            by_use: BTreeMap::new(),
        }
    }

    fn touch(&mut self, r: ObjectRef) {
        self.clock += 1;
        if let Some(old) = self.last_use.insert(r.clone(), self.clock) {
            self.by_use.remove(&old);
        }
        self.by_use.insert(self.clock, r);
    }

    /// Record `r` as absent, evicting the least recently used entry when full.
    pub(crate) fn add(&mut self, r: ObjectRef) {
        self.touch(r);
        while self.last_use.len() > self.capacity {
            let Some((_, oldest)) = self.by_use.pop_first() else {
                break;
            };
            self.last_use.remove(&oldest);
        }
    }

    /// Whether `r` is recorded absent (a hit counts as a use).
    pub(crate) fn has(&mut self, r: &ObjectRef) -> bool {
        if !self.last_use.contains_key(r) {
            return false;
        }
        self.touch(r.clone());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(uid: &str) -> ObjectRef {
        ObjectRef {
            uid: uid.into(),
            ..ObjectRef::default()
        }
    }

    #[test]
    fn least_recently_used_is_evicted() {
        let mut c = AbsentOwnerCache::new(2);
        c.add(r("a"));
        c.add(r("b"));
        assert!(c.has(&r("a")), "a used: b is now the oldest");
        c.add(r("c"));
        assert!(c.has(&r("a")));
        assert!(!c.has(&r("b")));
        assert!(c.has(&r("c")));
        c.add(r("c"));
        assert_eq!(c.last_use.len(), 2);
        assert_eq!(c.by_use.len(), 2);
        let mut namespaced = r("a");
        namespaced.namespace = "ns".into();
        assert!(!c.has(&namespaced), "coordinates, not uids");
    }
}
