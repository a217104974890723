//! A shard that changes while reflectors run: what a sharded controller lists and watches when
//! its ownership moves between replicas (`docs/sharding.md`, "Handover protocol"), the generations it goes
//! through, and each reflector's side of it (its follower).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tokio::sync::{Notify, watch};

use crate::reflector_store::ReflectorStore;
use crate::shard::scope::{ShardScope, ShardSelection};

/// One generation of a [`DynamicShard`].
#[derive(Clone, Debug)]
pub struct ShardGeneration {
    /// What it selects.
    pub selection: ShardSelection,
    /// Starts at 1; every [`DynamicShard::set`], [`DynamicShard::relist`] and
    /// [`DynamicShard::change`] adds one.
    pub generation: u64,
    /// How this generation differs from the one before, when the setter said so
    /// ([`DynamicShard::change`]); `None`: everything is listed afresh.
    pub change: Option<ShardChange>,
}

/// How a shard differs from the generation before it, so that a follower need not list the
/// whole shard again: the part to list alone (what joined, or what must be read afresh), and
/// the part to drop without listing (what left).
///
/// A follower whose store reflects the previous generation keeps watching the rest while the
/// part is listed (a consistent read, issued after the change), then applies the part to its
/// store ([`ReflectorStore::replace_part`]) and watches the new shard from where the two
/// meet. Objects of the rest never pause. A follower that cannot (its store cannot replace a
/// part, it missed a generation, resourceVersions that are not integers, an expired watch)
/// lists the whole shard afresh, as [`DynamicShard::set`] makes it.
///
/// [`ReflectorStore::replace_part`]: crate::ReflectorStore::replace_part
#[derive(Clone, Debug, Default)]
pub struct ShardChange {
    pub(crate) list: Option<ShardScope>,
    pub(crate) drop: Option<ShardScope>,
}

impl ShardChange {
    /// No part listed, none dropped.
    pub fn new() -> Self {
        ShardChange::default()
    }

    /// Lists the objects of `part` alone, with a consistent read issued after the change (its
    /// selector is sent instead of the shard's).
    #[must_use]
    pub fn listing(mut self, part: ShardScope) -> Self {
        self.list = Some(part);
        self
    }

    /// Drops the objects of `part` from the store (as deletes) without listing anything; only
    /// its predicate is used.
    #[must_use]
    pub fn dropping(mut self, part: ShardScope) -> Self {
        self.drop = Some(part);
        self
    }

    /// The part listed alone.
    pub fn listed_part(&self) -> Option<&ShardScope> {
        self.list.as_ref()
    }

    /// The part dropped.
    pub fn dropped_part(&self) -> Option<&ShardScope> {
        self.drop.as_ref()
    }
}

/// A shard that can change while reflectors follow it. Clones are handles to the same one.
///
/// A [`DynamicShard`] is set by whoever decides the ownership (the handover's I/O shell) and
/// followed by any number of reflectors ([`ReflectorConfig::dynamic_shard`]). Every
/// [`set`](DynamicShard::set) or [`relist`](DynamicShard::relist) starts a new *generation*: each
/// following reflector ends its watch at once and lists afresh with a consistent read
/// (`resourceVersion` unset), sending the new selector. Objects that left the shard vanish from
/// its store as deletes (tombstones), objects that joined arrive as adds.
/// [`listed`](DynamicShard::listed) waits until every follower has completed a list of at least
/// a given generation, i.e. a list *issued after* that generation began.
///
/// [`change`](DynamicShard::change) starts a generation that says what moved
/// ([`ShardChange`]): a follower then lists only the part that joined (or must be read afresh),
/// drops the part that left without a request, and keeps watching the rest throughout, so the
/// objects that stay in the shard never pause; it lists the whole shard when it cannot.
///
/// [`ShardSelection::Nothing`] lists nothing at all (an empty shard has no selector: the server
/// rejects an empty one): the store is emptied and the follower counts as listed.
///
/// [`ReflectorConfig::dynamic_shard`]: crate::ReflectorConfig::dynamic_shard
/// [`ShardSelection::Nothing`]: crate::ShardSelection::Nothing
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// use kcm_reflector::{DynamicShard, ShardScope, ShardChange, ShardSelection};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let shard = DynamicShard::new(ShardSelection::Nothing);
/// assert_eq!(shard.current().generation, 1);
/// let generation = shard.set(ShardSelection::Everything);
/// assert_eq!(generation, 2);
/// // No reflector follows it yet, so nothing is waited for.
/// shard.listed(generation).await;
///
/// // Shrink to one namespace: nothing is listed, the other leaves the cache as deletes.
/// let only = |ns: &'static str| {
///     ShardScope::new(format!("only({ns})"), move |m: &ObjectMeta| m.namespace.as_deref() == Some(ns))
/// };
/// let generation = shard.change(
///     Some(ShardSelection::Scope(only("team-a"))),
///     ShardChange::new().dropping(ShardScope::new("", |m: &ObjectMeta| m.namespace.as_deref() != Some("team-a"))),
/// );
/// assert_eq!(generation, 3);
/// // Read team-a afresh (a consistent list of that part alone), keeping the selection.
/// let generation = shard.change(None, ShardChange::new().listing(only("team-a")));
/// assert!(shard.current().change.is_some_and(|c| c.listed_part().is_some()));
/// shard.listed(generation).await;
/// # }
/// ```
#[derive(Clone)]
pub struct DynamicShard {
    inner: Arc<Inner>,
}

struct Inner {
    tx: watch::Sender<ShardGeneration>,
    followers: Mutex<Vec<Weak<AtomicU64>>>,
    progress: Notify,
}

impl fmt::Debug for DynamicShard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicShard")
            .field("shard", &*self.inner.tx.borrow())
            .field("followers", &self.followers())
            .finish()
    }
}

impl DynamicShard {
    /// A shard starting with `selection` at generation 1.
    pub fn new(selection: ShardSelection) -> Self {
        let (tx, _) = watch::channel(ShardGeneration {
            selection,
            generation: 1,
            change: None,
        });
        DynamicShard {
            inner: Arc::new(Inner {
                tx,
                followers: Mutex::new(Vec::new()),
                progress: Notify::new(),
            }),
        }
    }

    /// The current generation.
    pub fn current(&self) -> ShardGeneration {
        self.inner.tx.borrow().clone()
    }

    /// Switches every follower to `selection`; returns the new generation.
    pub fn set(&self, selection: ShardSelection) -> u64 {
        self.next(Some(selection), None)
    }

    /// Makes every follower list afresh (a consistent read issued from now on) with the same
    /// selection; returns the new generation.
    pub fn relist(&self) -> u64 {
        self.next(None, None)
    }

    /// Switches every follower to `selection`, which differs from the current one by `change`
    /// (the caller vouches for that): a follower lists only the change's part and drops the
    /// dropped part, watching the rest throughout. `selection` `None` keeps the current one
    /// (a part listed afresh). Returns the new generation; [`listed`](Self::listed) waits for
    /// the part's list.
    pub fn change(&self, selection: Option<ShardSelection>, change: ShardChange) -> u64 {
        self.next(selection, Some(change))
    }

    fn next(&self, selection: Option<ShardSelection>, change: Option<ShardChange>) -> u64 {
        let mut generation = 0;
        self.inner.tx.send_modify(|shard| {
            if let Some(selection) = selection {
                shard.selection = selection;
            }
            shard.change = change;
            shard.generation += 1;
            generation = shard.generation;
        });
        generation
    }

    /// How many reflectors follow the shard now.
    pub fn followers(&self) -> usize {
        self.inner
            .followers
            .lock()
            .iter()
            .filter(|f| f.strong_count() > 0)
            .count()
    }

    /// Waits until every follower has completed a list of `generation` or a later one. A
    /// follower that stops (its reflector ended) is no longer waited for.
    pub async fn listed(&self, generation: u64) {
        loop {
            let notified = self.inner.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.all_listed(generation) {
                return;
            }
            notified.await;
        }
    }

    fn all_listed(&self, generation: u64) -> bool {
        let mut followers = self.inner.followers.lock();
        followers.retain(|f| f.strong_count() > 0);
        followers
            .iter()
            .filter_map(Weak::upgrade)
            .all(|listed| listed.load(Ordering::Acquire) >= generation)
    }

    /// Registers a follower (a reflector about to run).
    pub(crate) fn follow(&self) -> ShardFollower {
        let listed = Arc::new(AtomicU64::new(0));
        self.inner.followers.lock().push(Arc::downgrade(&listed));
        ShardFollower {
            rx: self.inner.tx.subscribe(),
            applied: 0,
            applied_selection: None,
            listed,
            shard: self.clone(),
        }
    }
}

/// A reflector's side of a [`DynamicShard`].
pub(crate) struct ShardFollower {
    pub(crate) rx: watch::Receiver<ShardGeneration>,
    /// The generation the reflector last started listing.
    pub(crate) applied: u64,
    /// That generation's selection.
    pub(crate) applied_selection: Option<ShardSelection>,
    listed: Arc<AtomicU64>,
    shard: DynamicShard,
}

impl ShardFollower {
    /// The newest generation whose list (or change) completed: the store reflects it.
    pub(crate) fn listed_generation(&self) -> u64 {
        self.listed.load(Ordering::Acquire)
    }

    /// Records that a list of `generation` completed.
    pub(crate) fn mark_listed(&self, generation: u64) {
        self.listed.fetch_max(generation, Ordering::AcqRel);
        self.shard.inner.progress.notify_waiters();
    }
}

/// A [`ReflectorStore`] that marks its follower listed when a list (a replace) arrives.
pub(crate) struct MarkListed<'a, S> {
    pub(crate) inner: &'a mut S,
    pub(crate) follower: &'a ShardFollower,
    pub(crate) generation: u64,
}

impl<K, S: ReflectorStore<K>> ReflectorStore<K> for MarkListed<'_, S> {
    fn add(&mut self, obj: K) {
        self.inner.add(obj);
    }

    fn update(&mut self, obj: K) {
        self.inner.update(obj);
    }

    fn delete(&mut self, obj: K) {
        self.inner.delete(obj);
    }

    fn replace(&mut self, objects: Vec<K>, resource_version: String) {
        self.inner.replace(objects, resource_version);
        self.follower.mark_listed(self.generation);
    }

    fn bookmark(&mut self, resource_version: &str) {
        self.inner.bookmark(resource_version);
    }

    fn replace_part(
        &mut self,
        part: &(dyn Fn(&K) -> bool + Sync),
        objects: Vec<K>,
        resource_version: &str,
    ) -> bool {
        self.inner.replace_part(part, objects, resource_version)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn listed_waits_for_every_live_follower() {
        let shard = DynamicShard::new(ShardSelection::Everything);
        let a = shard.follow();
        let b = shard.follow();
        assert_eq!(shard.followers(), 2);
        let generation = shard.relist();
        let wait = tokio::spawn({
            let shard = shard.clone();
            async move { shard.listed(generation).await }
        });
        a.mark_listed(generation);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!wait.is_finished(), "b has not listed yet");
        // An older generation does not count.
        b.mark_listed(generation - 1);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!wait.is_finished());
        // A follower that stops is no longer waited for.
        drop(b);
        a.mark_listed(generation);
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("listed")
            .expect("task");
        assert_eq!(shard.followers(), 1);
    }

    #[test]
    fn generations_count_every_change() {
        let shard = DynamicShard::new(ShardSelection::Nothing);
        let follower = shard.follow();
        assert_eq!(shard.set(ShardSelection::Everything), 2);
        assert_eq!(shard.relist(), 3);
        let current = follower.rx.borrow().clone();
        assert_eq!(current.generation, 3);
        assert!(matches!(current.selection, ShardSelection::Everything));
    }
}
