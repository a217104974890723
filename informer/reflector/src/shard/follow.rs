//! A reflector following a [`DynamicShard`]: each generation of the shard is one list-and-watch
//! attempt, ended early when the shard changes; a change that says what moved ([`ShardChange`])
//! is stepped to without listing the whole shard (`step.rs`), and the watch after the step skips
//! what either part has already seen (`replay.rs`).
//!
//! [`DynamicShard`]: super::dynamic::DynamicShard
//! [`ShardChange`]: super::dynamic::ShardChange

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::ReflectorError;
use crate::list_and_watch::list_and_watch;
use crate::lister_watcher::ListerWatcher;
use crate::reflector_store::ReflectorStore;
use crate::shard::dynamic::{MarkListed, ShardFollower, ShardGeneration};
use crate::shard::replay::{Replay, ReplayFilter};
use crate::shard::scope::{ScopeFilter, ShardSelection};
use crate::shard::step::{Step, step_shard};
use crate::state::Parts;
use crate::watch::watch_loop;
use crate::watchable::Watchable;

/// One list-and-watch attempt of the shard's current generation, ended early when the shard
/// changes. A new generation lists with a consistent read (`resourceVersion` unset), so
/// that the list is issued after the generation began and reflects every write completed
/// before it.
pub(crate) async fn follow_shard<K, L, S>(
    parts: &mut Parts<L>,
    store: &mut S,
    follower: &mut ShardFollower,
    cancel: &CancellationToken,
) -> Result<(), ReflectorError>
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    let shard = follower.rx.borrow_and_update().clone();
    let generation = shard.generation;
    if generation != follower.applied {
        let previous = follower.applied;
        let old = follower.applied_selection.replace(shard.selection.clone());
        follower.applied = generation;
        // A change from the generation the store reflects: list only its part.
        if let (Some(change), Some(old)) = (&shard.change, &old)
            && previous + 1 == generation
            && follower.listed_generation() == previous
        {
            let mut rx = follower.rx.clone();
            match step_shard(
                parts,
                store,
                &mut rx,
                (old, &shard.selection),
                change,
                cancel,
            )
            .await
            {
                Step::Applied(replay) => {
                    follower.mark_listed(generation);
                    let (res, met) =
                        watch_shard(parts, store, follower, &shard.selection, replay, cancel).await;
                    // The joint watch failed (e.g. 410: the rest's resourceVersion was
                    // compacted) before the parts met: list the whole shard at once, as a
                    // change without a step does, not after a backoff.
                    if met || cancel.is_cancelled() || follower.rx.has_changed().unwrap_or(false) {
                        return res;
                    }
                    tracing::debug!(reflector = %parts.config.name, generation, result = ?res.err(),
                        "the watch after the step ended before the parts met; listing the whole shard afresh");
                }
                Step::Interrupted => return Ok(()),
                Step::Fallback(why) => {
                    tracing::debug!(reflector = %parts.config.name, generation, reason = why, "listing the whole shard afresh");
                }
            }
        }
        parts.state.last_sync_rv_unavailable = true;
    }
    match shard.selection {
        ShardSelection::Nothing => {
            parts.lw.set_shard_selector(None);
            let mut marked = MarkListed {
                inner: store,
                follower,
                generation,
            };
            marked.replace(Vec::new(), String::new());
            tracing::debug!(reflector = %parts.config.name, generation, "shard is empty: not listing");
            tokio::select! {
                () = cancel.cancelled() => {}
                _ = follower.rx.changed() => {}
            }
            Ok(())
        }
        ShardSelection::Everything => {
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
        ShardSelection::Scope(scope) => {
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

/// Watches the shard `selection` after a step, without a list; returns when a relist is
/// needed (the next attempt lists the whole shard) or the shard changes, with whether the
/// watch got past where the two parts met.
async fn watch_shard<K, L, S>(
    parts: &mut Parts<L>,
    store: &mut S,
    follower: &mut ShardFollower,
    selection: &ShardSelection,
    replay: Option<Replay>,
    cancel: &CancellationToken,
) -> (Result<(), ReflectorError>, bool)
where
    K: Watchable,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    let mut rx = follower.rx.clone();
    let (res, skipped, met) = match selection {
        ShardSelection::Scope(scope) => {
            let mut filtered = ScopeFilter::new(store, scope);
            watch_replayed(parts, &mut filtered, replay, &mut rx, cancel).await
        }
        ShardSelection::Everything | ShardSelection::Nothing => {
            watch_replayed(parts, store, replay, &mut rx, cancel).await
        }
    };
    tracing::debug!(reflector = %parts.config.name, skipped, met, "watch of the changed shard ended");
    (res, met)
}

/// Watches into `store` through `replay` until a relist is needed or the shard changes
/// (`rx`): the watch's result, the events skipped, and whether it got past both marks.
async fn watch_replayed<K, L, S>(
    parts: &mut Parts<L>,
    store: &mut S,
    replay: Option<Replay>,
    rx: &mut watch::Receiver<ShardGeneration>,
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
