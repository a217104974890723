//! Generic JSON object storage with one global resourceVersion counter and a bounded
//! history of change events (the "watch window").
//!
//! Objects are kept per storage bucket in a `BTreeMap` keyed like etcd (`ns/name`, or
//! `name` for cluster-scoped kinds), so lists come out in upstream order. Every write
//! takes the next revision and appends exactly one event to the history; revisions in
//! the history are therefore consecutive, and a watch resuming from revision `N` finds
//! its position in O(1). Lists at an older revision (continue tokens, `resourceVersion=N`
//! with a limit) are answered by undoing the history events newer than `N`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use parking_lot::RwLock;
use serde_json::Value;
use tokio::sync::watch;

use crate::registry::{STORAGE_COUNT, StorageId};

/// A stored object: the serialized bytes (produced once per write and shared by every
/// reader) plus the few values selectors need. The full JSON value is parsed on demand,
/// which keeps a stored pod near its serialized size instead of a `serde_json::Value` tree.
#[derive(Debug)]
pub struct Obj {
    /// `serde_json` serialization of the object (with `metadata.resourceVersion` set).
    pub json: Bytes,
    /// The revision that wrote it.
    pub rv: u64,
    /// `metadata.labels`.
    labels: Vec<(Box<str>, Box<str>)>,
    /// Values of the bucket's field labels (`metadata.name`, `spec.nodeName`, ...).
    fields: Vec<(&'static str, Box<str>)>,
}

/// Shared handle on a stored object.
pub type ObjRef = Arc<Obj>;

impl Obj {
    /// Build an object of bucket `id` at a revision: sets `metadata.resourceVersion`,
    /// serializes, and extracts labels and field-selector values.
    pub fn at(id: StorageId, mut value: Value, rv: u64) -> Obj {
        if let Some(m) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        let json = Bytes::from(serde_json::to_vec(&value).unwrap_or_default());
        let labels = value
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
            .map(|l| {
                l.iter()
                    .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or("").into()))
                    .collect()
            })
            .unwrap_or_default();
        let fields = ["metadata.name", "metadata.namespace"]
            .iter()
            .chain(crate::field_selector::extra_fields(id))
            .map(|f| {
                (
                    *f,
                    crate::field_selector::field_value(&value, f).into_boxed_str(),
                )
            })
            .collect();
        Obj {
            json,
            rv,
            labels,
            fields,
        }
    }

    /// The object as a JSON value (parsed from the stored bytes).
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// A label value.
    pub fn label(&self, k: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(lk, _)| &**lk == k)
            .map(|(_, v)| &**v)
    }

    /// The value of a field label of this bucket (`None` if the bucket does not support it).
    pub fn field(&self, f: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(fk, _)| *fk == f)
            .map(|(_, v)| &**v)
    }
}

/// Label selectors (`kcm_store::Selector`) match the extracted labels without parsing the JSON.
impl kcm_store::selector::Labels for Obj {
    fn get(&self, key: &str) -> Option<&str> {
        self.label(key)
    }
}

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

/// The storage key of an object.
pub fn key_of(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

#[derive(Debug)]
struct State {
    rv: u64,
    buckets: Vec<BTreeMap<String, ObjRef>>,
    history: VecDeque<Arc<StoredEvent>>,
    /// Every event with a revision above this one is in `history`.
    compacted: u64,
    window: usize,
    /// Continue tokens issued at a revision below this one are expired.
    continue_floor: u64,
}

/// A history position that is no longer available.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooOld {
    /// The oldest revision still available.
    pub oldest: u64,
}

/// One page of a list.
#[derive(Debug)]
pub struct Page {
    /// Matching items.
    pub items: Vec<ObjRef>,
    /// Revision the list was served at.
    pub rv: u64,
    /// Key of the last item when more keys follow.
    pub last_key: Option<String>,
    /// Number of keys after this page (only computed on request).
    pub remaining: Option<u64>,
}

/// The store. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Store {
    state: RwLock<State>,
    notify: watch::Sender<u64>,
    per_storage: Vec<watch::Sender<u64>>,
    epoch: watch::Sender<u64>,
}

/// A write transaction: holds the write lock; every mutation takes a revision.
#[derive(Debug)]
pub struct Txn<'a> {
    st: &'a mut State,
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
        self.st.history.push_back(Arc::new(StoredEvent {
            rv: self.st.rv,
            storage: id,
            key: key.to_string(),
            kind,
            obj,
            prev,
            natural: OnceLock::new(),
            as_added: OnceLock::new(),
            as_left: OnceLock::new(),
        }));
        while self.st.history.len() > self.st.window {
            if let Some(e) = self.st.history.pop_front() {
                self.st.compacted = e.rv;
            }
        }
    }
}

impl Store {
    /// A new store whose first write gets revision `start_rv + 1`, keeping at most
    /// `window` events of history.
    pub fn new(start_rv: u64, window: usize) -> Store {
        Store {
            state: RwLock::new(State {
                rv: start_rv,
                buckets: (0..STORAGE_COUNT).map(|_| BTreeMap::new()).collect(),
                history: VecDeque::new(),
                compacted: start_rv,
                window: window.max(1),
                continue_floor: 0,
            }),
            notify: watch::channel(start_rv).0,
            per_storage: (0..STORAGE_COUNT)
                .map(|_| watch::channel(start_rv).0)
                .collect(),
            epoch: watch::channel(0).0,
        }
    }

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

    /// Current revision.
    pub fn rv(&self) -> u64 {
        self.state.read().rv
    }

    /// Current object.
    pub fn get(&self, id: StorageId, key: &str) -> Option<ObjRef> {
        self.state.read().buckets[id.index()].get(key).cloned()
    }

    /// Number of objects in a bucket.
    pub fn count(&self, id: StorageId) -> usize {
        self.state.read().buckets[id.index()].len()
    }

    /// All objects under `prefix` and the revision they were read at.
    pub fn snapshot(
        &self,
        id: StorageId,
        prefix: &str,
        filter: &dyn Fn(&Obj) -> bool,
    ) -> (Vec<ObjRef>, u64) {
        let g = self.state.read();
        let items = g.buckets[id.index()]
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter(|(_, v)| filter(v))
            .map(|(_, v)| v.clone())
            .collect();
        (items, g.rv)
    }

    /// Events of bucket `id` with a revision above `after`, and the current revision.
    pub fn events_since(
        &self,
        id: StorageId,
        after: u64,
    ) -> Result<(Vec<Arc<StoredEvent>>, u64), TooOld> {
        let g = self.state.read();
        if after < g.compacted {
            return Err(TooOld {
                oldest: g.compacted + 1,
            });
        }
        let skip = usize::try_from(after - g.compacted).unwrap_or(usize::MAX);
        let evs = g
            .history
            .iter()
            .skip(skip)
            .filter(|e| e.storage == id)
            .cloned()
            .collect();
        Ok((evs, g.rv))
    }

    /// The oldest revision a watch may resume from.
    pub fn compacted_rv(&self) -> u64 {
        self.state.read().compacted
    }

    /// A list page. `at` asks for the state at an older revision (served by undoing history);
    /// `start` is the first key to consider (inclusive).
    #[allow(clippy::too_many_arguments)]
    pub fn list_page(
        &self,
        id: StorageId,
        prefix: &str,
        start: Option<&str>,
        at: Option<u64>,
        filter: &dyn Fn(&Obj) -> bool,
        limit: Option<usize>,
        count_remaining: bool,
        is_continue: bool,
    ) -> Result<Page, TooOld> {
        let g = self.state.read();
        let rv = at.unwrap_or(g.rv).min(g.rv);
        if is_continue && rv < g.continue_floor {
            return Err(TooOld {
                oldest: g.compacted + 1,
            });
        }
        let mut overrides: BTreeMap<&str, Option<&ObjRef>> = BTreeMap::new();
        if rv < g.rv {
            if rv < g.compacted {
                return Err(TooOld {
                    oldest: g.compacted + 1,
                });
            }
            let skip = usize::try_from(rv - g.compacted).unwrap_or(usize::MAX);
            for e in g.history.iter().skip(skip) {
                if e.storage == id && e.key.starts_with(prefix) {
                    overrides.entry(e.key.as_str()).or_insert(e.prev.as_ref());
                }
            }
        }
        let from = match start {
            Some(s) if s > prefix => s.to_string(),
            _ => prefix.to_string(),
        };
        let bucket = &g.buckets[id.index()];
        let mut cur = bucket
            .range(from.clone()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v))
            .peekable();
        let mut ovr = overrides
            .range(from.as_str()..)
            .map(|(k, v)| (*k, *v))
            .peekable();
        let mut items = Vec::new();
        let mut last_key: Option<String> = None;
        let mut remaining: u64 = 0;
        let mut full = false;
        loop {
            let next: Option<(&str, Option<&ObjRef>)> = match (cur.peek(), ovr.peek()) {
                (None, None) => None,
                (Some(_), None) => cur.next().map(|(k, v)| (k, Some(v))),
                (None, Some(_)) => ovr.next(),
                (Some((ck, _)), Some((ok, _))) => {
                    if ck < ok {
                        cur.next().map(|(k, v)| (k, Some(v)))
                    } else if ck == ok {
                        cur.next();
                        ovr.next()
                    } else {
                        ovr.next()
                    }
                }
            };
            let Some((k, v)) = next else { break };
            let Some(v) = v else { continue };
            if full {
                remaining += 1;
                if !count_remaining {
                    break;
                }
                continue;
            }
            if filter(v) {
                items.push(v.clone());
                if limit.is_some_and(|l| items.len() >= l) {
                    full = true;
                    last_key = Some(k.to_string());
                }
            }
        }
        let more = remaining > 0;
        Ok(Page {
            items,
            rv,
            last_key: if more { last_key } else { None },
            remaining: if more && count_remaining {
                Some(remaining)
            } else {
                None
            },
        })
    }

    /// Subscribe to revision changes of any bucket.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.notify.subscribe()
    }

    /// Subscribe to changes of one bucket (and compactions): watchers of other kinds are
    /// not woken by its writes.
    pub fn subscribe_storage(&self, id: StorageId) -> watch::Receiver<u64> {
        self.per_storage[id.index()].subscribe()
    }

    /// Subscribe to "close every watch" requests.
    pub fn subscribe_epoch(&self) -> watch::Receiver<u64> {
        self.epoch.subscribe()
    }

    /// Drop all history: watches resuming from any earlier revision get 410, and every
    /// continue token issued so far expires.
    ///
    /// The revision counter moves on by one (a revision with no event of any served kind,
    /// as when etcd compacts while other data changes), so every open watch and every resume
    /// from an earlier revision gets `410 Expired` and relists; a relist followed by a watch
    /// from its revision works.
    pub fn compact(&self) {
        let rv = {
            let mut g = self.state.write();
            g.rv += 1;
            g.history.clear();
            g.compacted = g.rv;
            g.continue_floor = g.rv;
            g.rv
        };
        for tx in &self.per_storage {
            tx.send_replace(rv);
        }
        self.notify.send_replace(rv);
    }

    /// Expire every continue token issued so far.
    pub fn expire_continue_tokens(&self) {
        let mut g = self.state.write();
        g.continue_floor = g.rv + 1;
    }

    /// Change the history window.
    pub fn set_window(&self, window: usize) {
        let mut g = self.state.write();
        g.window = window.max(1);
        while g.history.len() > g.window {
            if let Some(e) = g.history.pop_front() {
                g.compacted = e.rv;
            }
        }
    }

    /// Close every open watch.
    pub fn drop_watches(&self) {
        self.epoch.send_modify(|e| *e += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(ns: &str, name: &str, v: i64) -> Value {
        json!({"metadata": {"name": name, "namespace": ns}, "v": v})
    }

    #[test]
    fn revisions_are_global_and_history_consecutive() {
        let s = Store::new(0, 100);
        s.write(|t| {
            t.put(StorageId::Pods, "a/x", pod("a", "x", 1));
            t.put(StorageId::Deployments, "a/d", pod("a", "d", 1));
            t.put(StorageId::Pods, "a/x", pod("a", "x", 2));
        });
        assert_eq!(s.rv(), 3);
        let (evs, rv) = s.events_since(StorageId::Pods, 0).expect("history");
        assert_eq!(rv, 3);
        assert_eq!(evs.iter().map(|e| e.rv).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(evs[1].kind, EventType::Modified);
        let (evs, _) = s.events_since(StorageId::Pods, 1).expect("history");
        assert_eq!(evs.len(), 1);
    }

    #[test]
    fn window_compacts_and_too_old() {
        let s = Store::new(0, 2);
        s.write(|t| {
            for i in 0..5 {
                t.put(
                    StorageId::Pods,
                    &format!("a/p{i}"),
                    pod("a", &format!("p{i}"), i),
                );
            }
        });
        assert_eq!(
            s.events_since(StorageId::Pods, 1).err(),
            Some(TooOld { oldest: 4 })
        );
        assert!(s.events_since(StorageId::Pods, 3).is_ok());
        s.compact();
        assert!(s.events_since(StorageId::Pods, 5).is_err());
        assert!(s.events_since(StorageId::Pods, 6).is_ok());
        s.write(|t| t.put(StorageId::Pods, "a/q", pod("a", "q", 0)));
        let (evs, rv) = s
            .events_since(StorageId::Pods, 6)
            .expect("after compaction");
        assert_eq!((evs.len(), evs[0].rv, rv), (1, 7, 7));
    }

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

    #[test]
    fn page_at_old_revision_undoes_history() {
        let s = Store::new(0, 100);
        s.write(|t| {
            for n in ["a", "b", "c", "d"] {
                t.put(StorageId::Pods, &format!("ns/{n}"), pod("ns", n, 0));
            }
        });
        let all = |_: &Obj| true;
        let p1 = s
            .list_page(
                StorageId::Pods,
                "ns/",
                None,
                None,
                &all,
                Some(2),
                true,
                false,
            )
            .expect("page");
        assert_eq!(p1.items.len(), 2);
        assert_eq!(p1.remaining, Some(2));
        let last = p1.last_key.clone().expect("more");
        // Changes after the first page must not show up in the next pages.
        s.write(|t| {
            t.put(StorageId::Pods, "ns/bb", pod("ns", "bb", 0));
            t.remove(StorageId::Pods, "ns/c");
            t.put(StorageId::Pods, "ns/d", pod("ns", "d", 9));
        });
        let start = format!("{last}\u{0}");
        let p2 = s
            .list_page(
                StorageId::Pods,
                "ns/",
                Some(&start),
                Some(p1.rv),
                &all,
                Some(2),
                true,
                true,
            )
            .expect("page");
        let names: Vec<_> = p2
            .items
            .iter()
            .map(|o| o.value()["metadata"]["name"].clone())
            .collect();
        assert_eq!(names, vec![json!("c"), json!("d")]);
        assert_eq!(p2.items[1].value()["v"], 0);
        assert!(p2.last_key.is_none());
        assert_eq!(p2.rv, p1.rv);
        s.expire_continue_tokens();
        assert!(
            s.list_page(
                StorageId::Pods,
                "ns/",
                Some(&start),
                Some(p1.rv),
                &all,
                Some(2),
                true,
                true
            )
            .is_err()
        );
    }
}
