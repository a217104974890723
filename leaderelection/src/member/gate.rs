//! The write side of a member's shard (`docs/sharding.md`, "Membership" and "Handover
//! protocol"): the namespaces its controllers may write now (the handover's *active* set), and
//! the writes in flight, so that a namespace leaving the shard can be *drained* before the
//! member acknowledges the new ring.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use kcm_sharding::{ShardRanges, hash_field};
use parking_lot::Mutex;
use tokio::sync::Notify;

/// A member's shard as its writes see it. Clones are handles to the same one.
///
/// A write passes the gate with [`ShardGate::begin_write`] right before it is sent (the
/// [`FenceLayer`](crate::FenceLayer) does it for every namespaced write): the check and the
/// registration of the write as in flight are one step, so once [`set_active`](ShardGate::set_active)
/// has removed a range, no new write of it starts, and [`drained`](ShardGate::drained) waits for
/// the ones already sent to be answered. A sync that is still running when its namespace leaves
/// the shard can no longer write; its refused writes fail with [`Fenced`](crate::Fenced).
///
/// ```
/// use kcm_leaderelection::ShardGate;
/// use kcm_sharding::{ShardRange, ShardRanges, hash_field};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let gate = ShardGate::new();
/// assert!(!gate.allows("team-a"), "a new member owns nothing");
/// gate.set_active(ShardRanges::full());
/// let write = gate.begin_write("team-a").expect("team-a is active");
/// // team-a leaves the shard: no new write starts, the one in flight is waited for.
/// let h = hash_field("team-a");
/// let lost = ShardRanges::from_ranges([ShardRange::new(h, u128::from(h) + 1).unwrap()]);
/// gate.set_active(ShardRanges::full().difference(&lost));
/// assert!(gate.begin_write("team-a").is_err());
/// assert!(!gate.is_drained(&lost));
/// drop(write); // answered
/// gate.drained(&lost).await;
/// # }
/// ```
#[derive(Clone, Default)]
pub struct ShardGate {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    answered: Notify,
}

#[derive(Default)]
struct State {
    active: ShardRanges,
    /// Writes sent and not answered, by the hash of their namespace.
    in_flight: HashMap<u64, usize>,
}

impl fmt::Debug for ShardGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("ShardGate")
            .field("active", &state.active.fraction())
            .field("in_flight", &state.in_flight.values().sum::<usize>())
            .finish()
    }
}

/// A write that passed the gate; dropping it (when the write is answered) ends it.
#[derive(Debug)]
pub struct InFlightWrite {
    gate: ShardGate,
    hash: u64,
}

impl Drop for InFlightWrite {
    fn drop(&mut self) {
        let mut state = self.gate.inner.state.lock();
        if let Some(n) = state.in_flight.get_mut(&self.hash) {
            *n -= 1;
            if *n == 0 {
                state.in_flight.remove(&self.hash);
            }
        }
        drop(state);
        self.gate.inner.answered.notify_waiters();
    }
}

/// A write refused: its namespace is not in the member's active shard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotInShard {
    /// The namespace written.
    pub namespace: String,
    /// Its shard key (64-bit FNV-1a).
    pub hash: u64,
}

impl ShardGate {
    /// A gate with an empty shard: every namespaced write is refused until
    /// [`set_active`](Self::set_active).
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the active shard.
    pub fn set_active(&self, ranges: ShardRanges) {
        self.inner.state.lock().active = ranges;
    }

    /// The active shard.
    pub fn active(&self) -> ShardRanges {
        self.inner.state.lock().active.clone()
    }

    /// Whether `namespace` is in the active shard.
    pub fn allows(&self, namespace: &str) -> bool {
        let hash = hash_field(namespace);
        self.inner.state.lock().active.contains(hash)
    }

    /// Checks `namespace` against the active shard and, if it is in, registers a write in
    /// flight until the returned guard is dropped.
    pub fn begin_write(&self, namespace: &str) -> Result<InFlightWrite, NotInShard> {
        let hash = hash_field(namespace);
        let mut state = self.inner.state.lock();
        if !state.active.contains(hash) {
            return Err(NotInShard {
                namespace: namespace.to_owned(),
                hash,
            });
        }
        *state.in_flight.entry(hash).or_insert(0) += 1;
        Ok(InFlightWrite {
            gate: self.clone(),
            hash,
        })
    }

    /// Writes in flight, all namespaces.
    pub fn in_flight(&self) -> usize {
        self.inner.state.lock().in_flight.values().sum()
    }

    /// Whether no write of `ranges` is in flight.
    pub fn is_drained(&self, ranges: &ShardRanges) -> bool {
        let state = self.inner.state.lock();
        !state.in_flight.keys().any(|h| ranges.contains(*h))
    }

    /// Waits until no write of `ranges` is in flight. Remove `ranges` from the active shard
    /// first, or new writes may keep it waiting.
    pub async fn drained(&self, ranges: &ShardRanges) {
        loop {
            let answered = self.inner.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            if self.is_drained(ranges) {
                return;
            }
            answered.await;
        }
    }
}

/// The namespace a request to the Kubernetes API writes in, from its path
/// (`/api/v1/namespaces/{ns}/…` or `/apis/{group}/{version}/namespaces/{ns}/…`); `None` for
/// cluster-scoped paths, including a namespace object itself (`/api/v1/namespaces/{ns}`).
pub(crate) fn namespace_of_path(path: &str) -> Option<&str> {
    let mut parts = path.trim_start_matches('/').split('/');
    let rest = match parts.next()? {
        "api" => {
            parts.next()?;
            parts
        }
        "apis" => {
            parts.next()?;
            parts.next()?;
            parts
        }
        _ => return None,
    };
    let mut rest = rest;
    if rest.next()? != "namespaces" {
        return None;
    }
    let namespace = rest.next().filter(|ns| !ns.is_empty())?;
    // `/namespaces/{ns}` alone is the Namespace object, cluster-scoped.
    rest.next()?;
    Some(namespace)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kcm_sharding::ShardRange;

    use super::*;

    fn only(ns: &str) -> ShardRanges {
        let h = hash_field(ns);
        ShardRanges::from_ranges([ShardRange::new(h, u128::from(h) + 1).expect("range")])
    }

    #[tokio::test]
    async fn drain_waits_for_the_writes_of_the_ranges_only() {
        let gate = ShardGate::new();
        gate.set_active(ShardRanges::full());
        let a = gate.begin_write("a").expect("in shard");
        let b = gate.begin_write("b").expect("in shard");
        let b2 = gate.begin_write("b").expect("in shard");
        assert_eq!(gate.in_flight(), 3);
        gate.set_active(ShardRanges::full().difference(&only("b")));
        assert_eq!(
            gate.begin_write("b").expect_err("left the shard"),
            NotInShard {
                namespace: "b".into(),
                hash: hash_field("b")
            }
        );
        assert!(!gate.is_drained(&only("a")));
        let wait = tokio::spawn({
            let gate = gate.clone();
            async move { gate.drained(&only("b")).await }
        });
        drop(b);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!wait.is_finished(), "one write of b is still in flight");
        drop(b2);
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("drained")
            .expect("task");
        assert!(!gate.is_drained(&only("a")), "a's write is not waited for");
        drop(a);
        assert_eq!(gate.in_flight(), 0);
    }

    #[test]
    fn paths_name_their_namespace() {
        for (path, want) in [
            ("/api/v1/namespaces/x/pods", Some("x")),
            ("/api/v1/namespaces/x/pods/p/eviction", Some("x")),
            ("/apis/apps/v1/namespaces/y/deployments/d/scale", Some("y")),
            ("/apis/events.k8s.io/v1/namespaces/z/events", Some("z")),
            ("/api/v1/namespaces/x", None),
            ("/api/v1/namespaces//pods", None),
            ("/api/v1/namespaces", None),
            ("/apis/rbac.authorization.k8s.io/v1/clusterroles/r", None),
            ("/healthz", None),
            ("", None),
        ] {
            assert_eq!(namespace_of_path(path), want, "{path}");
        }
    }
}
