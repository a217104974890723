//! The reflector: the outer list-and-watch loop (client-go `Reflector.Run` / `ListAndWatch`).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::Stream;
use parking_lot::RwLock;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::config::{InitialListStrategy, ReflectorConfig};
use crate::delta::{Delta, DeltaProducer};
use crate::error::ReflectorError;
use crate::lister_watcher::{ApiListerWatcher, ListerWatcher, WatchStream};
use crate::metrics::ErrorKind;
use crate::reflector_store::ReflectorStore;
use crate::shard::ShardFilter;
use crate::share::{DynamicShare, MarkListed, Share, ShareFilter, ShareFollower};
use crate::share_replay::{Replay, ReplayFilter};
use crate::share_step::Step;

/// The bound every watched type satisfies: k8s-openapi resource types, and hand-written projected
/// types implementing `k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta>` plus
/// `Deserialize` (kube's blanket impl makes them `kube::Resource`).
pub trait Watchable:
    kube::Resource<DynamicType = ()> + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static
{
}

impl<K> Watchable for K where
    K: kube::Resource<DynamicType = ()>
        + DeserializeOwned
        + Clone
        + fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// The object's `metadata.resourceVersion` ("" when unset).
pub(crate) fn resource_version<K: kube::Resource>(obj: &K) -> &str {
    obj.meta().resource_version.as_deref().unwrap_or_default()
}

/// A thread-safe view of the reflector's last synced resourceVersion (client-go
/// `LastSyncResourceVersion`). Cloning shares the value.
#[derive(Clone, Debug, Default)]
pub struct LastSyncResourceVersion(Arc<RwLock<String>>);

impl LastSyncResourceVersion {
    /// The current value ("" before the first successful list).
    pub fn get(&self) -> String {
        self.0.read().clone()
    }

    pub(crate) fn set(&self, rv: &str) {
        let mut guard = self.0.write();
        if guard.as_str() != rv {
            rv.clone_into(&mut guard);
        }
    }
}

/// Mutable state of the list/watch algorithm, shared by `list.rs`, `watch.rs` and
/// `streaming_list.rs`.
#[derive(Debug)]
pub(crate) struct ListWatchState {
    /// Last synced resourceVersion (also published through [`LastSyncResourceVersion`]).
    pub(crate) last_sync_rv: String,
    /// Set after a 410 Expired / "too large RV" answer to a list: the next list is a consistent
    /// read (RV "").
    pub(crate) last_sync_rv_unavailable: bool,
    /// Sticky: an RV="0" list came back paginated, so the watch cache is off for this resource.
    pub(crate) paginated_result: bool,
    pub(crate) backoff: Backoff,
    pub(crate) published: LastSyncResourceVersion,
}

impl ListWatchState {
    pub(crate) fn set_last_sync_rv(&mut self, rv: &str) {
        if self.last_sync_rv != rv {
            rv.clone_into(&mut self.last_sync_rv);
        }
        self.published.set(rv);
    }
}

/// Lists and watches one resource type and writes what it sees, in order, into a
/// [`ReflectorStore`] (or a stream of [`Delta`]s).
///
/// Behaviour follows client-go's reflector: paginated list (500 per page) first at RV "0" and then
/// at the last synced RV, a consistent list after 410/"too large RV", watch from the last RV with
/// bookmarks and a random timeout in `[5, 10)` minutes, immediate re-watch on a normal close,
/// relist after 410, re-watch (not relist) after connection refused / 429, exponential backoff with
/// jitter between attempts, and optionally a streaming list.
///
/// ```no_run
/// use futures::StreamExt;
/// use k8s_openapi::api::core::v1::Pod;
/// use kcm_reflector::{Delta, Reflector, ReflectorConfig};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn example() -> anyhow::Result<()> {
/// let client = kube::Client::try_default().await?;
/// let reflector = Reflector::<Pod>::new(client, Some("default"), ReflectorConfig::default().labels("app=web"));
/// let mut deltas = Box::pin(reflector.deltas(CancellationToken::new()));
/// while let Some(delta) = deltas.next().await {
///     match delta {
///         Delta::Deleted(d) if d.is_tombstone() => println!("vanished while not watching: {}", d.key()),
///         other => println!("{other:?}"),
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub struct Reflector<K, L = ApiListerWatcher<K>> {
    pub(crate) lw: L,
    pub(crate) config: ReflectorConfig,
    pub(crate) state: ListWatchState,
    _k: PhantomData<fn() -> K>,
}

impl<K, L> fmt::Debug for Reflector<K, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.config.name)
            .field("last_sync_rv", &self.state.last_sync_rv)
            .finish()
    }
}

impl<K: Watchable> Reflector<K, ApiListerWatcher<K>> {
    /// A reflector for `K` in `namespace` (`None` = all namespaces or cluster-scoped), with the
    /// selectors of `config`.
    pub fn new(client: kube::Client, namespace: Option<&str>, config: ReflectorConfig) -> Self {
        let lw = ApiListerWatcher::new(client, namespace)
            .label_selector(config.label_selector.clone())
            .field_selector(config.field_selector.clone())
            .shard_selector(config.shard.as_ref().map(|s| s.selector().to_owned()));
        Self::with_lister_watcher(lw, config)
    }
}

impl<K: Watchable, L: ListerWatcher<K>> Reflector<K, L> {
    /// A reflector over any [`ListerWatcher`] (selectors in `config` are then the lister-watcher's
    /// business).
    pub fn with_lister_watcher(lw: L, config: ReflectorConfig) -> Self {
        let backoff = Backoff::new(config.backoff.clone());
        Self {
            lw,
            config,
            state: ListWatchState {
                last_sync_rv: String::new(),
                last_sync_rv_unavailable: false,
                paginated_result: false,
                backoff,
                published: LastSyncResourceVersion::default(),
            },
            _k: PhantomData,
        }
    }

    /// A shared handle on the last synced resourceVersion, readable while the reflector runs.
    pub fn last_sync_resource_version(&self) -> LastSyncResourceVersion {
        self.state.published.clone()
    }

    /// The configuration.
    pub fn config(&self) -> &ReflectorConfig {
        &self.config
    }

    /// Runs until `cancel` fires: list-and-watch attempts, separated by a backoff delay.
    pub async fn run<S: ReflectorStore<K>>(&mut self, store: &mut S, cancel: CancellationToken) {
        tracing::debug!(reflector = %self.config.name, "starting reflector");
        let mut follower = self.config.dynamic_share.as_ref().map(DynamicShare::follow);
        loop {
            if cancel.is_cancelled() {
                break;
            }
            let attempt = match (&mut follower, self.config.shard.clone()) {
                (Some(follower), _) => self.follow_share(store, follower, &cancel).await,
                // Only the share reaches the store, whatever the server sent.
                (None, Some(scope)) => {
                    let mut filtered = ShardFilter::new(store, &scope);
                    self.list_and_watch(&mut filtered, &cancel).await
                }
                (None, None) => self.list_and_watch(store, &cancel).await,
            };
            // The share moved: list afresh at once.
            if follower
                .as_ref()
                .is_some_and(|f| f.rx.has_changed().unwrap_or(false))
            {
                if let Err(err) = &attempt {
                    tracing::debug!(reflector = %self.config.name, error = %err, "list and watch ended by a share change");
                }
                continue;
            }
            if let Err(err) = attempt {
                let kind = match &err {
                    ReflectorError::Watch { .. } => ErrorKind::WatchStart,
                    ReflectorError::StreamingList { .. }
                    | ReflectorError::StreamingListClosed { .. } => ErrorKind::StreamingList,
                    ReflectorError::List { .. } | ReflectorError::MissingName { .. } => {
                        ErrorKind::List
                    }
                };
                self.config.metrics.error(&self.config.name, kind);
                tracing::warn!(reflector = %self.config.name, error = %err, "list and watch failed");
            }
            if cancel.is_cancelled() {
                break;
            }
            let delay = self.state.backoff.next_delay();
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(delay) => {}
            }
        }
        tracing::debug!(reflector = %self.config.name, "stopping reflector");
    }

    /// Spawns the reflector and returns its output as an ordered stream of deltas. The stream ends
    /// when `cancel` fires; dropping the stream stops the reflector at its next delta.
    pub fn deltas(
        mut self,
        cancel: CancellationToken,
    ) -> impl Stream<Item = Delta<K>> + Send + 'static
    where
        L: 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        // Stops when `cancel` fires or when the consumer drops the stream.
        let stop = cancel.child_token();
        let stop_on_drop = stop.clone();
        tokio::spawn(async move {
            let mut producer = DeltaProducer::new(move |d| {
                if tx.send(d).is_err() {
                    stop_on_drop.cancel();
                }
            });
            self.run(&mut producer, stop).await;
        });
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|d| (d, rx)) })
    }

    /// One list-and-watch attempt of the share's current generation, ended early when the share
    /// changes. A new generation lists with a consistent read (`resourceVersion` unset), so
    /// that the list is issued after the generation began and reflects every write completed
    /// before it.
    async fn follow_share<S: ReflectorStore<K>>(
        &mut self,
        store: &mut S,
        follower: &mut ShareFollower,
        cancel: &CancellationToken,
    ) -> Result<(), ReflectorError> {
        let share = follower.rx.borrow_and_update().clone();
        let generation = share.generation;
        if generation != follower.applied {
            let previous = follower.applied;
            let old = follower.applied_filter.replace(share.filter.clone());
            follower.applied = generation;
            // A change from the generation the store reflects: list only its part.
            if let (Some(change), Some(old)) = (&share.change, &old)
                && previous + 1 == generation
                && follower.listed_generation() == previous
            {
                let mut rx = follower.rx.clone();
                match self
                    .step_share(store, &mut rx, (old, &share.filter), change, cancel)
                    .await
                {
                    Step::Applied(replay) => {
                        follower.mark_listed(generation);
                        let (res, met) = self
                            .watch_share(store, follower, &share.filter, replay, cancel)
                            .await;
                        // The joint watch failed (e.g. 410: the rest's resourceVersion was
                        // compacted) before the parts met: list the whole share at once, as a
                        // change without a step does, not after a backoff.
                        if met
                            || cancel.is_cancelled()
                            || follower.rx.has_changed().unwrap_or(false)
                        {
                            return res;
                        }
                        tracing::debug!(reflector = %self.config.name, generation, result = ?res.err(),
                            "the watch after the step ended before the parts met; listing the whole share afresh");
                    }
                    Step::Interrupted => return Ok(()),
                    Step::Fallback(why) => {
                        tracing::debug!(reflector = %self.config.name, generation, reason = why, "listing the whole share afresh");
                    }
                }
            }
            self.state.last_sync_rv_unavailable = true;
        }
        match share.filter {
            ShareFilter::Nothing => {
                self.lw.set_shard_selector(None);
                let mut marked = MarkListed {
                    inner: store,
                    follower,
                    generation,
                };
                marked.replace(Vec::new(), String::new());
                tracing::debug!(reflector = %self.config.name, generation, "share is empty: not listing");
                tokio::select! {
                    () = cancel.cancelled() => {}
                    _ = follower.rx.changed() => {}
                }
                Ok(())
            }
            ShareFilter::Everything => {
                self.lw.set_shard_selector(None);
                let mut rx = follower.rx.clone();
                let mut marked = MarkListed {
                    inner: store,
                    follower,
                    generation,
                };
                tokio::select! {
                    res = self.list_and_watch(&mut marked, cancel) => res,
                    _ = rx.changed() => Ok(()),
                }
            }
            ShareFilter::Scope(scope) => {
                self.lw
                    .set_shard_selector(Some(scope.selector().to_owned()));
                let mut rx = follower.rx.clone();
                let mut filtered = ShardFilter::new(store, &scope);
                let mut marked = MarkListed {
                    inner: &mut filtered,
                    follower,
                    generation,
                };
                tokio::select! {
                    res = self.list_and_watch(&mut marked, cancel) => res,
                    _ = rx.changed() => Ok(()),
                }
            }
        }
    }

    /// Watches the share `filter` after a step, without a list; returns when a relist is
    /// needed (the next attempt lists the whole share) or the share changes, with whether the
    /// watch got past where the two parts met.
    async fn watch_share<S: ReflectorStore<K>>(
        &mut self,
        store: &mut S,
        follower: &mut ShareFollower,
        filter: &ShareFilter,
        replay: Option<Replay>,
        cancel: &CancellationToken,
    ) -> (Result<(), ReflectorError>, bool) {
        let mut rx = follower.rx.clone();
        let (res, skipped, met) = match filter {
            ShareFilter::Scope(scope) => {
                let mut filtered = ShardFilter::new(store, scope);
                self.watch_replayed(&mut filtered, replay, &mut rx, cancel)
                    .await
            }
            ShareFilter::Everything | ShareFilter::Nothing => {
                self.watch_replayed(store, replay, &mut rx, cancel).await
            }
        };
        tracing::debug!(reflector = %self.config.name, skipped, met, "watch of the changed share ended");
        (res, met)
    }

    /// Watches into `store` through `replay` until a relist is needed or the share changes
    /// (`rx`): the watch's result, the events skipped, and whether it got past both marks.
    async fn watch_replayed<S: ReflectorStore<K>>(
        &mut self,
        store: &mut S,
        replay: Option<Replay>,
        rx: &mut watch::Receiver<Share>,
        cancel: &CancellationToken,
    ) -> (Result<(), ReflectorError>, u64, bool) {
        let mut replayed = ReplayFilter::new(store, replay);
        let res = tokio::select! {
            res = self.watch_loop(&mut replayed, None, cancel) => res,
            _ = rx.changed() => Ok(()),
        };
        (res, replayed.skipped(), replayed.met())
    }

    /// One list-and-watch attempt (client-go `ListAndWatch`). Returns when the watch must be
    /// replaced by a relist, or on cancellation.
    async fn list_and_watch<S: ReflectorStore<K>>(
        &mut self,
        store: &mut S,
        cancel: &CancellationToken,
    ) -> Result<(), ReflectorError> {
        let mut watch: Option<WatchStream<K>> = None;
        if self.config.initial_list == InitialListStrategy::StreamingList {
            match self.watch_list(store, cancel).await {
                Ok(Some(stream)) => watch = Some(stream),
                Ok(None) => return Ok(()),
                Err(err) => {
                    self.config
                        .metrics
                        .error(&self.config.name, ErrorKind::StreamingList);
                    tracing::info!(reflector = %self.config.name, error = %err,
                        "data couldn't be fetched in watch-list mode, falling back to a regular list");
                }
            }
        }
        if watch.is_none() {
            tokio::select! {
                () = cancel.cancelled() => return Ok(()),
                res = self.list(store) => res?,
            }
        }
        tracing::debug!(reflector = %self.config.name, rv = %self.state.last_sync_rv, "caches populated");
        self.watch_loop(store, watch, cancel).await
    }
}
