//! A follower's step from one generation of a [`DynamicShard`](super::dynamic::DynamicShard) to
//! the next without listing the whole shard again ([`ShardChange`]).
//!
//! 1. The dropped part leaves the store as deletes (tombstones), without a request.
//! 2. The listed part is read with a consistent list (its own selector), while the rest of
//!    the shard goes on being watched from where it was, so the objects that stay never pause.
//! 3. The part is applied to the store ([`ReflectorStore::replace_part`]), and one watch of the
//!    new shard starts where the two meet, skipping what either part has already seen
//!    ([`Replay`]).
//!
//! Anything unexpected (a store that cannot replace a part, resourceVersions that are not
//! integers, a watch that needs a relist, a list that fails) makes the follower list the whole
//! shard afresh instead, as a plain [`DynamicShard::set`](super::dynamic::DynamicShard::set) does.

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::list::{list_page_size, list_pages_of};
use crate::lister_watcher::ListerWatcher;
use crate::reflector_store::ReflectorStore;
use crate::shard::dynamic::{ShardChange, ShardGeneration};
use crate::shard::replay::{Replay, parse_rv};
use crate::shard::scope::{ScopeFilter, ShardScope, ShardSelection};
use crate::state::{ListWatch, Parts};
use crate::watch::watch_loop;
use crate::watchable::Watchable;

/// How a step ended.
pub(crate) enum Step {
    /// The store reflects the new generation; watch on with this replay (if a part was listed).
    Applied(Option<Replay>),
    /// The shard changed again, or the reflector was cancelled.
    Interrupted,
    /// List the whole shard afresh.
    Fallback(&'static str),
}

/// Steps from `old` to `new` by `change` (see the module's documentation).
pub(crate) async fn step_shard<K, L, S>(
    parts: &mut Parts<L>,
    store: &mut S,
    rx: &mut watch::Receiver<ShardGeneration>,
    (old, new): (&ShardSelection, &ShardSelection),
    change: &ShardChange,
    cancel: &CancellationToken,
) -> Step
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    if matches!(old, ShardSelection::Nothing) || matches!(new, ShardSelection::Nothing) {
        return Step::Fallback("the shard was or becomes empty");
    }
    if parts.state.last_sync_rv_unavailable || parse_rv(&parts.state.last_sync_rv).is_none() {
        return Step::Fallback("no integer resourceVersion to watch on from");
    }
    if let Some(dropped) = &change.drop {
        let part = |o: &K| dropped.matches(o.meta());
        let rv = parts.state.last_sync_rv.clone();
        if !store.replace_part(&part, Vec::new(), &rv) {
            return Step::Fallback("the store cannot replace a part");
        }
    }
    let Some(part) = change.list.clone() else {
        parts.lw.set_shard_selector(new.selector());
        return Step::Applied(None);
    };
    // The rest: the new shard without the part, watched with the old selector.
    let kept = {
        let new = new.clone();
        let part = part.clone();
        ShardScope::new(old.selector().unwrap_or_default(), move |meta| {
            new.matches(meta) && !part.matches(meta)
        })
    };
    let page_size = list_page_size(parts.config.page_size, parts.state.paginated_result, "");
    let name = parts.config.name.clone();
    let listed = {
        let Parts { lw, config, state } = parts;
        let lw: &L = lw;
        let mut rest_parts = ListWatch { lw, config, state };
        let mut rest = ScopeFilter::new(store, &kept);
        let list = list_pages_of(lw, "", page_size, Some(part.selector()));
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Step::Interrupted,
            _ = rx.changed() => return Step::Interrupted,
            listed = list => listed,
            _ = watch_loop(&mut rest_parts, &mut rest, None, cancel) => {
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
        parse_rv(&parts.state.last_sync_rv),
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
    parts.config.metrics.listed(&name, count);
    parts.lw.set_shard_selector(new.selector());
    let replay = Replay {
        part,
        part_rv,
        rest_rv,
    };
    parts.state.set_last_sync_rv(&replay.start().to_string());
    tracing::debug!(reflector = %name, items = count, part_rv, rest_rv, "listed the part of the shard alone");
    Step::Applied(Some(replay))
}
