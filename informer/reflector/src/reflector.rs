//! The reflector: the outer list-and-watch loop (client-go `tools/cache/reflector.go`,
//! `Reflector.Run` / `ListAndWatch`). The list, the watch, the streaming list and the shard
//! follower are functions over the reflector's [`Parts`] in files of their own, which this
//! file calls.

use std::fmt;
use std::marker::PhantomData;

use futures::Stream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::ReflectorConfig;
use crate::delta::{Delta, DeltaProducer};
use crate::error::ReflectorError;
use crate::list_and_watch::list_and_watch;
use crate::lister_watcher::{ApiListerWatcher, ListerWatcher};
use crate::metrics::ErrorKind;
use crate::reflector_store::ReflectorStore;
use crate::shard::dynamic::DynamicShard;
use crate::shard::follow::follow_shard;
use crate::shard::scope::ScopeFilter;
use crate::state::{LastSyncResourceVersion, ListWatchState, Parts};
use crate::watchable::Watchable;

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
    parts: Parts<L>,
    _k: PhantomData<fn() -> K>,
}

impl<K, L> fmt::Debug for Reflector<K, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.parts.config.name)
            .field("last_sync_rv", &self.parts.state.last_sync_rv)
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
        Self {
            parts: Parts {
                lw,
                state: ListWatchState::new(&config),
                config,
            },
            _k: PhantomData,
        }
    }

    /// A shared handle on the last synced resourceVersion, readable while the reflector runs.
    pub fn last_sync_resource_version(&self) -> LastSyncResourceVersion {
        self.parts.state.published.clone()
    }

    /// The configuration.
    pub fn config(&self) -> &ReflectorConfig {
        &self.parts.config
    }

    /// Runs until `cancel` fires: list-and-watch attempts, separated by a backoff delay.
    pub async fn run<S: ReflectorStore<K>>(&mut self, store: &mut S, cancel: CancellationToken) {
        tracing::debug!(reflector = %self.parts.config.name, "starting reflector");
        let mut follower = self
            .parts
            .config
            .dynamic_shard
            .as_ref()
            .map(DynamicShard::follow);
        loop {
            if cancel.is_cancelled() {
                break;
            }
            let attempt = match (&mut follower, self.parts.config.shard.clone()) {
                (Some(follower), _) => {
                    follow_shard(&mut self.parts, store, follower, &cancel).await
                }
                // Only the shard reaches the store, whatever the server sent.
                (None, Some(scope)) => {
                    let mut filtered = ScopeFilter::new(store, &scope);
                    list_and_watch(&mut self.parts.list_watch(), &mut filtered, &cancel).await
                }
                (None, None) => list_and_watch(&mut self.parts.list_watch(), store, &cancel).await,
            };
            // The shard moved: list afresh at once.
            if follower
                .as_ref()
                .is_some_and(|f| f.rx.has_changed().unwrap_or(false))
            {
                if let Err(err) = &attempt {
                    tracing::debug!(reflector = %self.parts.config.name, error = %err, "list and watch ended by a shard change");
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
                self.parts
                    .config
                    .metrics
                    .error(&self.parts.config.name, kind);
                let name = &self.parts.config.name;
                match err.refused() {
                    Some(404) => {
                        tracing::warn!(reflector = %name, resource = %name, code = 404, error = %err,
                        "the API server does not serve {name} (404): is its CustomResourceDefinition installed, with this group and version? Retrying with backoff; caches of {name} stay unsynced until then")
                    }
                    Some(code) => {
                        tracing::warn!(reflector = %name, resource = %name, code, error = %err,
                        "the API server refuses to list or watch {name} ({code}): the client's RBAC must allow list and watch on it. Retrying with backoff; caches of {name} stay unsynced until then")
                    }
                    None => {
                        tracing::warn!(reflector = %name, error = %err, "list and watch failed")
                    }
                }
            }
            if cancel.is_cancelled() {
                break;
            }
            let delay = self.parts.state.backoff.next_delay();
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(delay) => {}
            }
        }
        tracing::debug!(reflector = %self.parts.config.name, "stopping reflector");
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
}
