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
    /// Index of every storage bucket written in this transaction.
    touched: Vec<usize>,
}

impl Txn<'_> {
    /// Current object.
    pub fn get(&self, id: StorageId, key: &str) -> Option<ObjRef> {
        self.st.bucket(id)?.get(key).cloned()
    }

    /// Current revision.
    pub fn rv(&self) -> u64 {
        self.st.rv
    }

    /// All objects whose key starts with `prefix`.
    pub fn list_prefix(&self, id: StorageId, prefix: &str) -> Vec<ObjRef> {
        self.st
            .bucket(id)
            .into_iter()
            .flat_map(|b| {
                b.range(prefix.to_string()..)
                    .take_while(|(k, _)| k.starts_with(prefix))
            })
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Create or replace an object; emits ADDED or MODIFIED.
    pub fn put(&mut self, id: StorageId, key: &str, value: Value) -> ObjRef {
        let rv = self.st.rv + 1;
        let obj = Arc::new(Obj::at(id, value, rv));
        let prev = self.st.bucket_mut(id).insert(key.to_string(), obj.clone());
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
        let prev = self.st.bucket_mut(id).remove(key)?;
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
        if !self.touched.contains(&id.index()) {
            self.touched.push(id.index());
        }
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
                touched: Vec::new(),
            };
            let r = f(&mut txn);
            let changed = txn.changed;
            let touched = std::mem::take(&mut txn.touched);
            (r, changed.then_some(touched), g.rv)
        };
        if let Some(touched) = changed {
            let senders = self.per_storage.read();
            for i in touched {
                if let Some(tx) = senders.get(i) {
                    tx.send_replace(rv);
                }
            }
            drop(senders);
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
        s.write(|t| t.put(StorageId::PODS, "a/x", pod("a", "x", 1)));
        let tomb = s
            .write(|t| t.remove(StorageId::PODS, "a/x"))
            .expect("existed");
        assert_eq!(tomb.rv, 12);
        assert_eq!(tomb.value()["metadata"]["resourceVersion"], "12");
        assert!(s.get(StorageId::PODS, "a/x").is_none());
    }
}
