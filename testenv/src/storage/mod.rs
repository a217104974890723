//! Generic JSON object storage with one global resourceVersion counter and a bounded
//! history of change events (the "watch window").
//!
//! Objects are kept per storage bucket in a `BTreeMap` keyed like etcd (`ns/name`, or
//! `name` for cluster-scoped kinds), so lists come out in upstream order. Every write
//! takes the next revision and appends exactly one event to the history; revisions in
//! the history are therefore consecutive, and a watch resuming from revision `N` finds
//! its position in O(1). Lists at an older revision (continue tokens, `resourceVersion=N`
//! with a limit) are answered by undoing the history events newer than `N`.
//!
//! - [`object`]: a stored object ([`Obj`]); [`event`]: a change and its watch lines.
//! - [`store`]: the [`Store`], its reads and watcher wake-ups; [`txn`]: writes;
//!   [`history`]: the watch window and compaction; [`page`]: paginated lists.
//!
//! Storage knows the registry's bucket ids and field labels, nothing of HTTP.

pub mod event;
pub mod history;
pub mod object;
pub mod page;
pub mod store;
pub mod txn;

pub use event::{EventType, StoredEvent, watch_line};
pub use history::TooOld;
pub use object::{Obj, ObjRef};
pub use page::Page;
pub use store::{Store, key_of};
pub use txn::Txn;

/// Objects for the storage unit tests.
#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    pub(super) fn pod(ns: &str, name: &str, v: i64) -> Value {
        json!({"metadata": {"name": name, "namespace": ns}, "v": v})
    }
}
