//! A follower's step from one generation of a [`DynamicShare`](crate::share::DynamicShare) to
//! the next without listing the whole share again ([`ShareChange`]).
//!
//! 1. The dropped part leaves the store as deletes (tombstones), without a request.
//! 2. The listed part is read with a consistent list (its own selector), while the rest of
//!    the share goes on being watched from where it was, so the objects that stay never pause.
//! 3. The part is applied to the store ([`ReflectorStore::replace_part`]), and one watch of the
//!    new share starts where the two meet, skipping what either part has already seen
//!    ([`Replay`]).
//!
//! Anything unexpected (a store that cannot replace a part, resourceVersions that are not
//! integers, a watch that needs a relist, a list that fails) makes the follower list the whole
//! share afresh instead, as a plain [`DynamicShare::set`](crate::share::DynamicShare::set) does.

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::list::{list_page_size, list_pages_of};
use crate::lister_watcher::ListerWatcher;
use crate::reflector::{Reflector, Watchable};
use crate::reflector_store::ReflectorStore;
use crate::shard::{ShardFilter, ShardScope};
use crate::share::{Share, ShareChange, ShareFilter};
use crate::share_replay::{Replay, parse_rv};
use crate::watch::WatchParts;

/// How a step ended.
pub(crate) enum Step {
    /// The store reflects the new generation; watch on with this replay (if a part was listed).
    Applied(Option<Replay>),
    /// The share changed again, or the reflector was cancelled.
    Interrupted,
    /// List the whole share afresh.
    Fallback(&'static str),
}

/// Whether an object with this metadata is in `filter`.
fn in_filter(
    filter: &ShareFilter,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> bool {
    match filter {
        ShareFilter::Everything => true,
        ShareFilter::Scope(scope) => scope.matches(meta),
        ShareFilter::Nothing => false,
    }
}

/// The selector a filter sends.
pub(crate) fn selector_of(filter: &ShareFilter) -> Option<String> {
    match filter {
        ShareFilter::Scope(scope) => Some(scope.selector().to_owned()),
        ShareFilter::Everything | ShareFilter::Nothing => None,
    }
}

impl<K: Watchable, L: ListerWatcher<K>> Reflector<K, L> {
    /// Steps from `old` to `new` by `change` (see the module's documentation).
    pub(crate) async fn step_share<S: ReflectorStore<K>>(
        &mut self,
        store: &mut S,
        rx: &mut watch::Receiver<Share>,
        (old, new): (&ShareFilter, &ShareFilter),
        change: &ShareChange,
        cancel: &CancellationToken,
    ) -> Step {
        if matches!(old, ShareFilter::Nothing) || matches!(new, ShareFilter::Nothing) {
            return Step::Fallback("the share was or becomes empty");
        }
        if self.state.last_sync_rv_unavailable || parse_rv(&self.state.last_sync_rv).is_none() {
            return Step::Fallback("no integer resourceVersion to watch on from");
        }
        if let Some(dropped) = &change.drop {
            let part = |o: &K| dropped.matches(o.meta());
            let rv = self.state.last_sync_rv.clone();
            if !store.replace_part(&part, Vec::new(), &rv) {
                return Step::Fallback("the store cannot replace a part");
            }
        }
        let Some(part) = change.list.clone() else {
            self.lw.set_shard_selector(selector_of(new));
            return Step::Applied(None);
        };
        // The rest: the new share without the part, watched with the old selector.
        let kept = {
            let new = new.clone();
            let part = part.clone();
            ShardScope::new(selector_of(old).unwrap_or_default(), move |meta| {
                in_filter(&new, meta) && !part.matches(meta)
            })
        };
        let page_size = list_page_size(self.config.page_size, self.state.paginated_result, "");
        let name = self.config.name.clone();
        let listed = {
            let Reflector {
                lw, config, state, ..
            } = self;
            let lw: &L = lw;
            let mut parts = WatchParts { lw, config, state };
            let mut rest = ShardFilter::new(store, &kept);
            let list = list_pages_of(lw, "", page_size, Some(part.selector()));
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Step::Interrupted,
                _ = rx.changed() => return Step::Interrupted,
                listed = list => listed,
                _ = parts.watch_loop(&mut rest, None, cancel) => {
                    if cancel.is_cancelled() {
                        return Step::Interrupted;
                    }
                    return Step::Fallback("the watch of the rest ended");
                }
            }
        };
        let list = match listed {
            Ok(list) => list,
            Err(err) => {
                tracing::debug!(reflector = %name, error = %err, "listing the part failed");
                return Step::Fallback("listing the part failed");
            }
        };
        let (Some(part_rv), Some(rest_rv)) = (
            parse_rv(&list.resource_version),
            parse_rv(&self.state.last_sync_rv),
        ) else {
            return Step::Fallback("resourceVersions are not integers");
        };
        if list.items.iter().any(|o| o.meta().name.is_none()) {
            return Step::Fallback("a listed object has no name");
        }
        let items: Vec<K> = list
            .items
            .into_iter()
            .filter(|o| part.matches(o.meta()))
            .collect();
        let count = items.len();
        let in_part = |o: &K| part.matches(o.meta());
        if !store.replace_part(&in_part, items, &list.resource_version) {
            return Step::Fallback("the store cannot replace a part");
        }
        self.config.metrics.listed(&name, count);
        self.lw.set_shard_selector(selector_of(new));
        let replay = Replay {
            part,
            part_rv,
            rest_rv,
        };
        self.state.set_last_sync_rv(&replay.start().to_string());
        tracing::debug!(reflector = %name, items = count, part_rv, rest_rv, "listed the part of the share alone");
        Step::Applied(Some(replay))
    }
}
