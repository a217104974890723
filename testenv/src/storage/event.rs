//! The change history's events, and the watch lines they are sent as (serialized once, shared
//! by every watcher).

use std::sync::OnceLock;

use bytes::Bytes;
use serde_json::Value;

use super::object::{Obj, ObjRef};
use crate::registry::StorageId;

/// Change type of a stored event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Object created.
    Added,
    /// Object modified.
    Modified,
    /// Object deleted.
    Deleted,
}

impl EventType {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change in the history.
#[derive(Debug)]
pub struct StoredEvent {
    /// Revision of the change.
    pub rv: u64,
    /// Bucket.
    pub storage: StorageId,
    /// Storage key.
    pub key: String,
    /// Change type.
    pub kind: EventType,
    /// New state; for deletions the last state carrying the delete's revision.
    pub obj: ObjRef,
    /// Previous state (absent for creations).
    pub prev: Option<ObjRef>,
    natural: OnceLock<Bytes>,
    as_added: OnceLock<Bytes>,
    as_left: OnceLock<Bytes>,
}

/// A complete watch line `{"type":T,"object":JSON}\n`.
pub fn watch_line(t: &str, json: &[u8]) -> Bytes {
    let mut v = Vec::with_capacity(json.len() + 32);
    v.extend_from_slice(b"{\"type\":\"");
    v.extend_from_slice(t.as_bytes());
    v.extend_from_slice(b"\",\"object\":");
    v.extend_from_slice(json);
    v.extend_from_slice(b"}\n");
    Bytes::from(v)
}

impl StoredEvent {
    pub(super) fn new(
        rv: u64,
        storage: StorageId,
        key: &str,
        kind: EventType,
        obj: ObjRef,
        prev: Option<ObjRef>,
    ) -> StoredEvent {
        StoredEvent {
            rv,
            storage,
            key: key.to_string(),
            kind,
            obj,
            prev,
            natural: OnceLock::new(),
            as_added: OnceLock::new(),
            as_left: OnceLock::new(),
        }
    }

    /// The line for this event as it happened (serialized once, shared by all watchers).
    pub fn natural_line(&self) -> Bytes {
        self.natural
            .get_or_init(|| watch_line(self.kind.as_str(), &self.obj.json))
            .clone()
    }
    /// `ADDED` with the new object (an object entering a selector).
    pub fn added_line(&self) -> Bytes {
        self.as_added
            .get_or_init(|| watch_line("ADDED", &self.obj.json))
            .clone()
    }
    /// `DELETED` with the old object's content at this event's revision (leaving a selector).
    pub fn left_line(&self) -> Bytes {
        self.as_left
            .get_or_init(|| {
                let prev = self.prev.as_ref().map(|p| p.value()).unwrap_or(Value::Null);
                let o = Obj::at(self.storage, prev, self.rv);
                watch_line("DELETED", &o.json)
            })
            .clone()
    }
}
