//! [`Store`]: the buckets of objects behind one lock, the global revision, reads, and the
//! channels that wake watchers. Writes are in [`txn`](super::txn), the history in
//! [`history`](super::history), paginated lists in [`page`](super::page).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use parking_lot::RwLock;
use tokio::sync::watch;

use super::event::StoredEvent;
use super::object::{Obj, ObjRef};
use crate::registry::{STORAGE_COUNT, StorageId};

/// The storage key of an object.
pub fn key_of(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

/// Everything behind the store's lock.
#[derive(Debug)]
pub(super) struct State {
    /// The current revision.
    pub(super) rv: u64,
    /// Objects per storage bucket, by key.
    pub(super) buckets: Vec<BTreeMap<String, ObjRef>>,
    /// The last `window` events, in revision order (a compaction's revision has none).
    pub(super) history: VecDeque<Arc<StoredEvent>>,
    /// Every event with a revision above this one is in `history`.
    pub(super) compacted: u64,
    /// The oldest revision a new watch or an exact read may start from: moved up to the current
    /// revision by a compaction, while open watches keep reading the history (as kube-apiserver's
    /// watch cache serves its watchers through an etcd compaction).
    pub(super) resume_floor: u64,
    pub(super) window: usize,
    /// Continue tokens issued at a revision below this one are expired.
    pub(super) continue_floor: u64,
}

/// The store. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Store {
    pub(super) state: RwLock<State>,
    /// Revision changes of any bucket.
    pub(super) notify: watch::Sender<u64>,
    /// Revision changes per bucket (and compactions); custom resources' buckets are added as
    /// they are first used.
    pub(super) per_storage: RwLock<Vec<watch::Sender<u64>>>,
    /// "Close every watch" requests.
    pub(super) epoch: watch::Sender<u64>,
}

impl State {
    /// A bucket, if anything was ever stored in it.
    pub(super) fn bucket(&self, id: StorageId) -> Option<&BTreeMap<String, ObjRef>> {
        self.buckets.get(id.index())
    }

    /// A bucket to write to (custom resources' buckets are created on first use).
    pub(super) fn bucket_mut(&mut self, id: StorageId) -> &mut BTreeMap<String, ObjRef> {
        let i = id.index();
        while self.buckets.len() <= i {
            self.buckets.push(BTreeMap::new());
        }
        &mut self.buckets[i]
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
                resume_floor: start_rv,
                window: window.max(1),
                continue_floor: 0,
            }),
            notify: watch::channel(start_rv).0,
            per_storage: RwLock::new(
                (0..STORAGE_COUNT)
                    .map(|_| watch::channel(start_rv).0)
                    .collect(),
            ),
            epoch: watch::channel(0).0,
        }
    }

    /// Current revision.
    pub fn rv(&self) -> u64 {
        self.state.read().rv
    }

    /// Current object.
    pub fn get(&self, id: StorageId, key: &str) -> Option<ObjRef> {
        self.state.read().bucket(id)?.get(key).cloned()
    }

    /// Number of objects in a bucket.
    pub fn count(&self, id: StorageId) -> usize {
        self.state.read().bucket(id).map_or(0, BTreeMap::len)
    }

    /// All objects under `prefix` and the revision they were read at.
    pub fn snapshot(
        &self,
        id: StorageId,
        prefix: &str,
        filter: &dyn Fn(&Obj) -> bool,
    ) -> (Vec<ObjRef>, u64) {
        let g = self.state.read();
        let items = g
            .bucket(id)
            .into_iter()
            .flat_map(|b| {
                b.range(prefix.to_string()..)
                    .take_while(|(k, _)| k.starts_with(prefix))
            })
            .filter(|(_, v)| filter(v))
            .map(|(_, v)| v.clone())
            .collect();
        (items, g.rv)
    }

    /// Subscribe to revision changes of any bucket.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.notify.subscribe()
    }

    /// Subscribe to changes of one bucket (and compactions): watchers of other kinds are
    /// not woken by its writes.
    pub fn subscribe_storage(&self, id: StorageId) -> watch::Receiver<u64> {
        if let Some(tx) = self.per_storage.read().get(id.index()) {
            return tx.subscribe();
        }
        let mut all = self.per_storage.write();
        let rv = self.rv();
        while all.len() <= id.index() {
            all.push(watch::channel(rv).0);
        }
        all[id.index()].subscribe()
    }

    /// Wake the watchers of one bucket without a change (they look again at what they serve).
    pub fn wake(&self, id: StorageId) {
        let rv = self.rv();
        if let Some(tx) = self.per_storage.read().get(id.index()) {
            tx.send_replace(rv);
        }
    }

    /// Subscribe to "close every watch" requests.
    pub fn subscribe_epoch(&self) -> watch::Receiver<u64> {
        self.epoch.subscribe()
    }

    /// Close every open watch.
    pub fn drop_watches(&self) {
        self.epoch.send_modify(|e| *e += 1);
    }
}
