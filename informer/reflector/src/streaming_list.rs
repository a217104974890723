//! Streaming list ("watch-list", KEP-3157; client-go `tools/cache/reflector.go`,
//! `Reflector.watchList`): one WATCH with `sendInitialEvents=true`
//! delivers the snapshot as ADDED events up to a bookmark annotated
//! `k8s.io/initial-events-end: "true"`; the snapshot replaces the store in one step and the same
//! stream continues as the live watch.

use kcm_store::ObjectKey;
use tokio_util::sync::CancellationToken;

use crate::delta::{KeyMap, KeyRef};

use crate::error::{
    ReflectorError, is_expired_or_too_large, is_too_many_requests, is_watch_error_retriable,
};
use crate::lister_watcher::{ListerWatcher, WatchStream};
use crate::metrics::ErrorKind;
use crate::reflector_store::ReflectorStore;
use crate::state::ListWatch;
use crate::watch::{VERY_SHORT_WATCH, WatchContext, WatchOutcome, handle_watch, watch_options};
use crate::watchable::Watchable;

/// The temporary store a streaming list fills before the atomic replace: objects in first-seen
/// order (a key deleted and seen again keeps its first position).
#[derive(Debug)]
pub(crate) struct SnapshotStore<K> {
    slots: KeyMap<usize>,
    order: Vec<Option<K>>,
}

impl<K> Default for SnapshotStore<K> {
    fn default() -> Self {
        Self {
            slots: KeyMap::default(),
            order: Vec::new(),
        }
    }
}

impl<K: kube::Resource> SnapshotStore<K> {
    fn upsert(&mut self, obj: K) {
        match self.slots.get(&KeyRef::of(&obj)) {
            Some(&slot) => self.order[slot] = Some(obj),
            None => {
                self.slots
                    .insert(ObjectKey::from_meta(obj.meta()), self.order.len());
                self.order.push(Some(obj));
            }
        }
    }

    /// The objects in first-seen order.
    pub(crate) fn into_items(self) -> Vec<K> {
        self.order.into_iter().flatten().collect()
    }
}

impl<K: kube::Resource + Send> ReflectorStore<K> for SnapshotStore<K> {
    fn add(&mut self, obj: K) {
        self.upsert(obj);
    }
    fn update(&mut self, obj: K) {
        self.upsert(obj);
    }
    fn delete(&mut self, obj: K) {
        if let Some(&slot) = self.slots.get(&KeyRef::of(&obj)) {
            self.order[slot] = None;
        }
    }
    fn replace(&mut self, objects: Vec<K>, _resource_version: String) {
        self.slots.clear();
        self.order.clear();
        for o in objects {
            self.upsert(o);
        }
    }
}

/// Runs a streaming list (client-go `Reflector.watchList`). `Ok(Some(stream))`: the store was
/// replaced and `stream` continues as the live watch. `Ok(None)`: cancelled. `Err`: the caller
/// falls back to a paginated list.
pub(crate) async fn watch_list<K, L, S>(
    parts: &mut ListWatch<'_, L>,
    store: &mut S,
    cancel: &CancellationToken,
) -> Result<Option<WatchStream<K>>, ReflectorError>
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    let name = parts.config.name.clone();
    let metrics = parts.config.metrics.clone();
    let fail = |source| ReflectorError::StreamingList {
        resource: name.clone(),
        source,
    };
    loop {
        if cancel.is_cancelled() {
            return Ok(None);
        }
        let mut opts = watch_options(parts, true);
        if parts.state.last_sync_rv_unavailable {
            opts.resource_version.clear();
        }
        let opened = tokio::select! {
            () = cancel.cancelled() => return Ok(None),
            opened = parts.lw.watch(&opts) => opened,
        };
        let mut stream = match opened {
            Ok(stream) => stream,
            Err(err) if is_watch_error_retriable(&err) => {
                metrics.error(&name, ErrorKind::WatchStart);
                if !parts.sleep_backoff(cancel).await {
                    return Ok(None);
                }
                continue;
            }
            Err(err) if is_expired_or_too_large(&err) => {
                parts.state.last_sync_rv_unavailable = true;
                continue;
            }
            Err(err) => return Err(fail(err)),
        };
        metrics.watch_started(&name);
        let mut snapshot = SnapshotStore::<K>::default();
        let mut bookmark_rv = String::new();
        let outcome = handle_watch(
            WatchContext {
                name: &name,
                metrics: metrics.as_ref(),
                cancel,
            },
            &mut stream,
            &mut snapshot,
            false,
            true,
            &mut |rv| rv.clone_into(&mut bookmark_rv),
        )
        .await;
        match outcome {
            WatchOutcome::Cancelled => return Ok(None),
            WatchOutcome::InitialEventsEnded => {
                parts.state.last_sync_rv_unavailable = false;
                let items = snapshot.into_items();
                metrics.listed(&name, items.len());
                tracing::debug!(reflector = %name, items = items.len(), rv = %bookmark_rv, "streaming list complete");
                store.replace(items, bookmark_rv.clone());
                parts.state.set_last_sync_rv(&bookmark_rv);
                return Ok(Some(stream));
            }
            WatchOutcome::Closed { events, elapsed }
                if events == 0 && elapsed < VERY_SHORT_WATCH =>
            {
                return Err(ReflectorError::StreamingListClosed {
                    resource: name.clone(),
                });
            }
            WatchOutcome::Closed { .. } => {
                // Closed before the end bookmark: open a new one.
                tracing::debug!(reflector = %name, "streaming list closed before the initial-events-end bookmark, retrying");
            }
            WatchOutcome::Failed(err) => {
                if is_too_many_requests(&err) {
                    if !parts.sleep_backoff(cancel).await {
                        return Ok(None);
                    }
                    continue;
                }
                if is_expired_or_too_large(&err) {
                    parts.state.last_sync_rv_unavailable = true;
                    continue;
                }
                return Err(fail(err));
            }
        }
    }
}
