//! A small reflector: list, then watch from the list's resourceVersion, keeping a cache and reporting
//! every change. It survives 410 Gone (relist), `ERROR` events, closed and failed connections
//! (re-watch from the last resourceVersion seen), as client-go's reflector does.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::{Api, Resource, ResourceExt};
use parking_lot::RwLock;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// A change seen by an informer.
#[derive(Debug, Clone)]
pub(crate) enum Change<K> {
    /// Added or modified (also sent for every object after a relist).
    Applied(Arc<K>),
    /// Deleted (also sent for objects missing from a relist).
    Deleted(Arc<K>),
}

/// The cache key of an object: `namespace/name` or `name`.
pub(crate) fn key_of<K: Resource>(obj: &K) -> String {
    match obj.meta().namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", obj.name_any()),
        _ => obj.name_any(),
    }
}

/// The shared cache of an informer.
#[derive(Debug)]
pub(crate) struct Cache<K> {
    items: RwLock<BTreeMap<String, Arc<K>>>,
    synced: watch::Sender<bool>,
}

impl<K> Cache<K> {
    /// Every cached object.
    pub(crate) fn list(&self) -> Vec<Arc<K>> {
        self.items.read().values().cloned().collect()
    }

    /// One object by key (`namespace/name` or `name`).
    pub(crate) fn get(&self, key: &str) -> Option<Arc<K>> {
        self.items.read().get(key).cloned()
    }

    /// Wait until the first list has been stored.
    pub(crate) async fn wait_synced(&self) {
        let mut rx = self.synced.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }
}

/// Start an informer on `api`; changes go to `tx`. It stops when `token` is cancelled.
pub(crate) fn spawn_informer<K>(
    api: Api<K>,
    tx: mpsc::UnboundedSender<Change<K>>,
    token: CancellationToken,
) -> (Arc<Cache<K>>, tokio::task::JoinHandle<()>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (synced, _) = watch::channel(false);
    let cache = Arc::new(Cache {
        items: RwLock::new(BTreeMap::new()),
        synced,
    });
    let task = tokio::spawn(run(api, cache.clone(), tx, token));
    (cache, task)
}

const MIN_BACKOFF: Duration = Duration::from_millis(20);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

async fn sleep_or_cancel(d: Duration, token: &CancellationToken) -> bool {
    tokio::select! {
        _ = token.cancelled() => false,
        _ = tokio::time::sleep(d) => true,
    }
}

async fn run<K>(
    api: Api<K>,
    cache: Arc<Cache<K>>,
    tx: mpsc::UnboundedSender<Change<K>>,
    token: CancellationToken,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let mut backoff = MIN_BACKOFF;
    let kind = std::any::type_name::<K>();
    'relist: loop {
        let lp = ListParams::default();
        let listed = tokio::select! {
            _ = token.cancelled() => return,
            r = api.list(&lp) => r,
        };
        let list = match listed {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!(%kind, error = %e, "sim informer: list failed");
                if !sleep_or_cancel(backoff, &token).await {
                    return;
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        let mut rv = list.metadata.resource_version.clone().unwrap_or_default();
        let fresh: BTreeMap<String, Arc<K>> = list
            .items
            .into_iter()
            .map(|o| (key_of(&o), Arc::new(o)))
            .collect();
        let old = std::mem::replace(&mut *cache.items.write(), fresh.clone());
        for (k, o) in &old {
            if !fresh.contains_key(k) {
                let _ = tx.send(Change::Deleted(o.clone()));
            }
        }
        for (k, o) in &fresh {
            let unchanged = old
                .get(k)
                .is_some_and(|p| p.meta().resource_version == o.meta().resource_version);
            if !unchanged {
                let _ = tx.send(Change::Applied(o.clone()));
            }
        }
        cache.synced.send_replace(true);
        let mut failures = 0u32;
        loop {
            let wp = WatchParams::default().timeout(60);
            let started = tokio::select! {
                _ = token.cancelled() => return,
                r = api.watch(&wp, &rv) => r,
            };
            let stream = match started {
                Ok(s) => s,
                Err(kube::Error::Api(s)) if s.code == 410 => continue 'relist,
                Err(e) => {
                    tracing::debug!(%kind, error = %e, "sim informer: watch failed");
                    failures += 1;
                    if !sleep_or_cancel(backoff, &token).await {
                        return;
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    if failures >= 3 {
                        continue 'relist;
                    }
                    continue;
                }
            };
            let mut stream = std::pin::pin!(stream);
            loop {
                let item = tokio::select! {
                    _ = token.cancelled() => return,
                    i = stream.next() => i,
                };
                match item {
                    None => break,
                    Some(Ok(WatchEvent::Added(o) | WatchEvent::Modified(o))) => {
                        backoff = MIN_BACKOFF;
                        failures = 0;
                        if let Some(v) = o.meta().resource_version.clone() {
                            rv = v;
                        }
                        let o = Arc::new(o);
                        cache.items.write().insert(key_of(&*o), o.clone());
                        let _ = tx.send(Change::Applied(o));
                    }
                    Some(Ok(WatchEvent::Deleted(o))) => {
                        backoff = MIN_BACKOFF;
                        failures = 0;
                        if let Some(v) = o.meta().resource_version.clone() {
                            rv = v;
                        }
                        let o = Arc::new(o);
                        cache.items.write().remove(&key_of(&*o));
                        let _ = tx.send(Change::Deleted(o));
                    }
                    Some(Ok(WatchEvent::Bookmark(b))) => rv = b.metadata.resource_version,
                    Some(Ok(WatchEvent::Error(s))) => {
                        tracing::debug!(%kind, code = s.code, "sim informer: watch error event");
                        if s.code != 410 && !sleep_or_cancel(backoff, &token).await {
                            return;
                        }
                        continue 'relist;
                    }
                    Some(Err(e)) => {
                        tracing::debug!(%kind, error = %e, "sim informer: watch stream broken");
                        if !sleep_or_cancel(backoff, &token).await {
                            return;
                        }
                        break;
                    }
                }
            }
        }
    }
}
