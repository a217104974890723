//! A reflector following a [`DynamicShare`]: each generation of the share is one list-and-watch
//! attempt, ended early when the share changes; a change that says what moved ([`ShareChange`])
//! is stepped to without listing the whole share (`step.rs`), and the watch after the step skips
//! what either part has already seen (`replay.rs`).
//!
//! [`DynamicShare`]: super::dynamic::DynamicShare
//! [`ShareChange`]: super::dynamic::ShareChange

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::ReflectorError;
use crate::list_and_watch::list_and_watch;
use crate::lister_watcher::ListerWatcher;
use crate::reflector_store::ReflectorStore;
use crate::share::dynamic::{MarkListed, Share, ShareFollower};
use crate::share::replay::{Replay, ReplayFilter};
use crate::share::scope::{ScopeFilter, ShareFilter};
use crate::share::step::{Step, step_share};
use crate::state::Parts;
use crate::watch::watch_loop;
use crate::watchable::Watchable;

/// One list-and-watch attempt of the share's current generation, ended early when the share
/// changes. A new generation lists with a consistent read (`resourceVersion` unset), so
/// that the list is issued after the generation began and reflects every write completed
/// before it.
pub(crate) async fn follow_share<K, L, S>(
    parts: &mut Parts<L>,
    store: &mut S,
    follower: &mut ShareFollower,
    cancel: &CancellationToken,
) -> Result<(), ReflectorError>
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
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
            match step_share(parts, store, &mut rx, (old, &share.filter), change, cancel).await {
                Step::Applied(replay) => {
                    follower.mark_listed(generation);
                    let (res, met) =
                        watch_share(parts, store, follower, &share.filter, replay, cancel).await;
                    // The joint watch failed (e.g. 410: the rest's resourceVersion was
                    // compacted) before the parts met: list the whole share at once, as a
                    // change without a step does, not after a backoff.
                    if met || cancel.is_cancelled() || follower.rx.has_changed().unwrap_or(false) {
                        return res;
                    }
                    tracing::debug!(reflector = %parts.config.name, generation, result = ?res.err(),
                        "the watch after the step ended before the parts met; listing the whole share afresh");
                }
                Step::Interrupted => return Ok(()),
                Step::Fallback(why) => {
                    tracing::debug!(reflector = %parts.config.name, generation, reason = why, "listing the whole share afresh");
                }
            }
        }
        parts.state.last_sync_rv_unavailable = true;
    }
    match share.filter {
        ShareFilter::Nothing => {
            parts.lw.set_shard_selector(None);
            let mut marked = MarkListed {
                inner: store,
                follower,
                generation,
            };
            marked.replace(Vec::new(), String::new());
            tracing::debug!(reflector = %parts.config.name, generation, "share is empty: not listing");
            tokio::select! {
                () = cancel.cancelled() => {}
                _ = follower.rx.changed() => {}
            }
            Ok(())
        }
        ShareFilter::Everything => {
            parts.lw.set_shard_selector(None);
            let mut rx = follower.rx.clone();
            let mut marked = MarkListed {
                inner: store,
                follower,
                generation,
            };
            let mut list_watch = parts.list_watch();
            tokio::select! {
                res = list_and_watch(&mut list_watch, &mut marked, cancel) => res,
                _ = rx.changed() => Ok(()),
            }
        }
        ShareFilter::Scope(scope) => {
            parts
                .lw
                .set_shard_selector(Some(scope.selector().to_owned()));
            let mut rx = follower.rx.clone();
            let mut filtered = ScopeFilter::new(store, &scope);
            let mut marked = MarkListed {
                inner: &mut filtered,
                follower,
                generation,
            };
            let mut list_watch = parts.list_watch();
            tokio::select! {
                res = list_and_watch(&mut list_watch, &mut marked, cancel) => res,
                _ = rx.changed() => Ok(()),
            }
        }
    }
}

/// Watches the share `filter` after a step, without a list; returns when a relist is
/// needed (the next attempt lists the whole share) or the share changes, with whether the
/// watch got past where the two parts met.
async fn watch_share<K, L, S>(
    parts: &mut Parts<L>,
    store: &mut S,
    follower: &mut ShareFollower,
    filter: &ShareFilter,
    replay: Option<Replay>,
    cancel: &CancellationToken,
) -> (Result<(), ReflectorError>, bool)
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    let mut rx = follower.rx.clone();
    let (res, skipped, met) = match filter {
        ShareFilter::Scope(scope) => {
            let mut filtered = ScopeFilter::new(store, scope);
            watch_replayed(parts, &mut filtered, replay, &mut rx, cancel).await
        }
        ShareFilter::Everything | ShareFilter::Nothing => {
            watch_replayed(parts, store, replay, &mut rx, cancel).await
        }
    };
    tracing::debug!(reflector = %parts.config.name, skipped, met, "watch of the changed share ended");
    (res, met)
}

/// Watches into `store` through `replay` until a relist is needed or the share changes
/// (`rx`): the watch's result, the events skipped, and whether it got past both marks.
async fn watch_replayed<K, L, S>(
    parts: &mut Parts<L>,
    store: &mut S,
    replay: Option<Replay>,
    rx: &mut watch::Receiver<Share>,
    cancel: &CancellationToken,
) -> (Result<(), ReflectorError>, u64, bool)
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    let mut replayed = ReplayFilter::new(store, replay);
    let mut list_watch = parts.list_watch();
    let res = tokio::select! {
        res = watch_loop(&mut list_watch, &mut replayed, None, cancel) => res,
        _ = rx.changed() => Ok(()),
    };
    (res, replayed.skipped(), replayed.met())
}
