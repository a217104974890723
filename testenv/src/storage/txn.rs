//! Writes: [`Store::write`] runs a [`Txn`] under the lock; every mutation takes the next
//! revision and appends one event to the history; watchers are woken afterwards.

use std::sync::Arc;

use serde_json::Value;

use super::event::{EventType, StoredEvent};
use super::object::{Obj, ObjRef};
use super::store::{State, Store};
use crate::registry::StorageId;

/// A write transaction: holds the write lock; every mutation takes a revision.
#[derive(Debug)]
pub struct Txn<'a> {
    st: &'a mut State,
    /// Whether anything was written.
    changed: bool,
    /// Bit per storage bucket written in this transaction.
    touched: u32,
}

impl Txn<'_> {
    /// Current object.
    pub fn get(&self, id: StorageId, key: &str) -> Option<ObjRef> {
        self.st.buckets[id.index()].get(key).cloned()
    }

    /// Current revision.
    pub fn rv(&self) -> u64 {
        self.st.rv
    }

    /// All objects whose key starts with `prefix`.
    pub fn list_prefix(&self, id: StorageId, prefix: &str) -> Vec<ObjRef> {
        self.st.buckets[id.index()]
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Create or replace an object; emits ADDED or MODIFIED.
    pub fn put(&mut self, id: StorageId, key: &str, value: Value) -> ObjRef {
        let rv = self.st.rv + 1;
        let obj = Arc::new(Obj::at(id, value, rv));
        let prev = self.st.buckets[id.index()].insert(key.to_string(), obj.clone());
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.push(id, key, kind, obj.clone(), prev);
        obj
    }

    /// Remove an object; emits DELETED carrying the delete's revision.
    pub fn remove(&mut self, id: StorageId, key: &str) -> Option<ObjRef> {
        let prev = self.st.buckets[id.index()].remove(key)?;
        let tomb = Arc::new(Obj::at(id, prev.value(), self.st.rv + 1));
        self.push(id, key, EventType::Deleted, tomb.clone(), Some(prev));
        Some(tomb)
    }

    fn push(
        &mut self,
        id: StorageId,
        key: &str,
        kind: EventType,
        obj: ObjRef,
        prev: Option<ObjRef>,
    ) {
        self.st.rv += 1;
        self.changed = true;
        self.touched |= 1 << id.index();
        self.st.history.push_back(Arc::new(StoredEvent::new(
            self.st.rv, id, key, kind, obj, prev,
        )));
        self.st.trim_history();
    }
}

impl Store {
    /// Run a write transaction; watchers are woken afterwards if anything changed.
    pub fn write<R>(&self, f: impl FnOnce(&mut Txn<'_>) -> R) -> R {
        let (r, changed, rv) = {
            let mut g = self.state.write();
            let mut txn = Txn {
                st: &mut g,
                changed: false,
                touched: 0,
            };
            let r = f(&mut txn);
            let changed = txn.changed;
            let touched = txn.touched;
            (r, changed.then_some(touched), g.rv)
        };
        if let Some(touched) = changed {
            for (i, tx) in self.per_storage.iter().enumerate() {
                if touched & (1 << i) != 0 {
                    tx.send_replace(rv);
                }
            }
            self.notify.send_replace(rv);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::tests::pod;
    #[test]
    fn delete_event_carries_delete_revision() {
        let s = Store::new(10, 100);
        s.write(|t| t.put(StorageId::Pods, "a/x", pod("a", "x", 1)));
        let tomb = s
            .write(|t| t.remove(StorageId::Pods, "a/x"))
            .expect("existed");
        assert_eq!(tomb.rv, 12);
        assert_eq!(tomb.value()["metadata"]["resourceVersion"], "12");
        assert!(s.get(StorageId::Pods, "a/x").is_none());
    }
}
