//! Deltas with client-go's meaning, tombstones, and the in-order (RealFIFO-like) conversion of the
//! reflector's output into deltas.
//!
//! A relist is turned into deletions first — one [`DeletedFinalStateUnknown`] tombstone carrying the
//! last known state for every known object missing from the new list — and then one
//! [`Delta::Replaced`] per listed object, followed by [`Delta::ListComplete`]. Objects never vanish
//! silently.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use crate::key::object_key;
use crate::reflector_store::ReflectorStore;

/// A deletion inferred from a relist: the object was deleted while the watch was down, so its
/// final state is unknown; `obj` is the last state this client saw (client-go
/// `DeletedFinalStateUnknown`).
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The object's key (`namespace/name` or `name`).
    pub key: String,
    /// The last known state of the object.
    pub obj: Arc<K>,
}

impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            obj: Arc::clone(&self.obj),
        }
    }
}

/// What a delete notification carries: the object as the server last sent it, or a tombstone
/// when the deletion was inferred from a relist.
#[derive(Debug)]
pub enum DeletedObject<K> {
    /// Observed deletion (watch DELETED event) with the object's final state.
    Object(Arc<K>),
    /// Inferred deletion (relist) with the last known state.
    Unknown(DeletedFinalStateUnknown<K>),
}

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Object(o) => Self::Object(Arc::clone(o)),
            Self::Unknown(t) => Self::Unknown(t.clone()),
        }
    }
}

impl<K> DeletedObject<K> {
    /// The deleted object (final state, or last known state for a tombstone).
    pub fn object(&self) -> &Arc<K> {
        match self {
            Self::Object(o) => o,
            Self::Unknown(t) => &t.obj,
        }
    }

    /// True for a tombstone (deletion inferred from a relist).
    pub fn is_tombstone(&self) -> bool {
        matches!(self, Self::Unknown(_))
    }
}

impl<K: kube::Resource> DeletedObject<K> {
    /// The key of the deleted object (client-go `DeletionHandlingMetaNamespaceKeyFunc`).
    pub fn key(&self) -> String {
        match self {
            Self::Object(o) => object_key(o.as_ref()),
            Self::Unknown(t) => t.key.clone(),
        }
    }
}

/// One change, in the order the reflector observed it.
pub enum Delta<K> {
    /// Watch ADDED.
    Added(Arc<K>),
    /// Watch MODIFIED.
    Updated(Arc<K>),
    /// Watch DELETED, or a tombstone produced by a relist.
    Deleted(DeletedObject<K>),
    /// An object present in a (re)list.
    Replaced(Arc<K>),
    /// A re-delivery of a cached object (resync).
    Sync(Arc<K>),
    /// End of the deltas of one (re)list: the state is complete as of `resource_version`.
    ListComplete {
        /// The list's resourceVersion.
        resource_version: String,
    },
}

impl<K> fmt::Debug for Delta<K>
where
    K: kube::Resource,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Added(o) => write!(f, "Added({})", object_key(o.as_ref())),
            Self::Updated(o) => write!(f, "Updated({})", object_key(o.as_ref())),
            Self::Deleted(d) if d.is_tombstone() => write!(f, "Deleted(tombstone {})", d.key()),
            Self::Deleted(d) => write!(f, "Deleted({})", d.key()),
            Self::Replaced(o) => write!(f, "Replaced({})", object_key(o.as_ref())),
            Self::Sync(o) => write!(f, "Sync({})", object_key(o.as_ref())),
            Self::ListComplete { resource_version } => {
                write!(f, "ListComplete({resource_version})")
            }
        }
    }
}

/// Moves every object of a (re)list into an `Arc` (through `wrap`, e.g. a transform), in order,
/// releasing the list's buffer as it empties so that the list and the cached objects are never
/// both fully resident.
pub fn into_arcs<K>(mut objects: Vec<K>, mut wrap: impl FnMut(K) -> Arc<K>) -> Vec<Arc<K>> {
    objects.reverse();
    let mut out = Vec::with_capacity(objects.len());
    while let Some(obj) = objects.pop() {
        out.push(wrap(obj));
        if objects.capacity() > 1024 && objects.len() < objects.capacity() / 2 {
            objects.shrink_to_fit();
        }
    }
    out
}

/// Tombstones for a relist: every known key absent from `listed_keys`, with its last known state,
/// in `known` iteration order.
pub fn relist_tombstones<'a, K: 'a>(
    known: impl IntoIterator<Item = (&'a String, &'a Arc<K>)>,
    listed_keys: &HashSet<String>,
) -> Vec<DeletedFinalStateUnknown<K>> {
    known
        .into_iter()
        .filter(|(key, _)| !listed_keys.contains(*key))
        .map(|(key, obj)| DeletedFinalStateUnknown {
            key: key.clone(),
            obj: Arc::clone(obj),
        })
        .collect()
}

/// A [`ReflectorStore`] that turns the reflector's output into [`Delta`]s (client-go RealFIFO in
/// non-atomic mode, without coalescing) and hands each delta to `sink`.
///
/// It remembers the last known state of every object (one `Arc` per key) so a relist can produce
/// tombstones for objects that vanished.
pub struct DeltaProducer<K, F> {
    known: HashMap<String, Arc<K>>,
    sink: F,
}

impl<K, F> fmt::Debug for DeltaProducer<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaProducer")
            .field("known", &self.known.len())
            .finish()
    }
}

impl<K, F> DeltaProducer<K, F>
where
    K: kube::Resource,
    F: FnMut(Delta<K>),
{
    /// A producer with no known objects.
    pub fn new(sink: F) -> Self {
        Self {
            known: HashMap::new(),
            sink,
        }
    }

    /// Number of objects currently known.
    pub fn known_len(&self) -> usize {
        self.known.len()
    }

    /// The last known state of `key`.
    pub fn known(&self, key: &str) -> Option<&Arc<K>> {
        self.known.get(key)
    }

    fn upsert(&mut self, obj: K) -> Arc<K> {
        let obj = Arc::new(obj);
        self.known
            .insert(object_key(obj.as_ref()), Arc::clone(&obj));
        obj
    }
}

impl<K, F> ReflectorStore<K> for DeltaProducer<K, F>
where
    K: kube::Resource + Send + Sync,
    F: FnMut(Delta<K>) + Send,
{
    fn add(&mut self, obj: K) {
        let obj = self.upsert(obj);
        (self.sink)(Delta::Added(obj));
    }

    fn update(&mut self, obj: K) {
        let obj = self.upsert(obj);
        (self.sink)(Delta::Updated(obj));
    }

    fn delete(&mut self, obj: K) {
        self.known.remove(&object_key(&obj));
        (self.sink)(Delta::Deleted(DeletedObject::Object(Arc::new(obj))));
    }

    fn replace(&mut self, objects: Vec<K>, resource_version: String) {
        let objects: Vec<(String, Arc<K>)> = into_arcs(objects, Arc::new)
            .into_iter()
            .map(|o| (object_key(o.as_ref()), o))
            .collect();
        let listed: HashSet<String> = objects.iter().map(|(k, _)| k.clone()).collect();
        let mut known_sorted: Vec<(&String, &Arc<K>)> = self.known.iter().collect();
        known_sorted.sort_by(|a, b| a.0.cmp(b.0));
        let tombstones = relist_tombstones(known_sorted, &listed);
        self.known = objects
            .iter()
            .map(|(k, o)| (k.clone(), Arc::clone(o)))
            .collect();
        for t in tombstones {
            (self.sink)(Delta::Deleted(DeletedObject::Unknown(t)));
        }
        for (_, obj) in objects {
            (self.sink)(Delta::Replaced(obj));
        }
        (self.sink)(Delta::ListComplete { resource_version });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    fn cm(name: &str, rv: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                resource_version: Some(rv.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    /// Renders deltas as "Type name@rv" strings.
    fn render(deltas: &[Delta<ConfigMap>]) -> Vec<String> {
        let rv = |o: &ConfigMap| o.metadata.resource_version.clone().unwrap_or_default();
        let name = |o: &ConfigMap| o.metadata.name.clone().unwrap_or_default();
        deltas
            .iter()
            .map(|d| match d {
                Delta::Added(o) => format!("Added {}@{}", name(o), rv(o)),
                Delta::Updated(o) => format!("Updated {}@{}", name(o), rv(o)),
                Delta::Deleted(DeletedObject::Object(o)) => {
                    format!("Deleted {}@{}", name(o), rv(o))
                }
                Delta::Deleted(DeletedObject::Unknown(t)) => {
                    format!(
                        "Deleted tombstone{{{}, {}@{}}}",
                        t.key,
                        name(&t.obj),
                        rv(&t.obj)
                    )
                }
                Delta::Replaced(o) => format!("Replaced {}@{}", name(o), rv(o)),
                Delta::Sync(o) => format!("Sync {}@{}", name(o), rv(o)),
                Delta::ListComplete { resource_version } => {
                    format!("ListComplete {resource_version}")
                }
            })
            .collect()
    }

    fn run(
        ops: impl FnOnce(&mut DeltaProducer<ConfigMap, Box<dyn FnMut(Delta<ConfigMap>) + Send + '_>>),
    ) -> Vec<String> {
        let mut out = Vec::new();
        {
            let sink: Box<dyn FnMut(Delta<ConfigMap>) + Send + '_> = Box::new(|d| out.push(d));
            let mut p = DeltaProducer::new(sink);
            ops(&mut p);
        }
        render(&out)
    }

    /// TestRealFIFO_ReplaceMakesDeletions: known {foo5, bar6, baz7}; Delete baz10; Replace([foo5])
    /// → [Deleted baz10], [Deleted tombstone{bar, bar6}], [Replaced foo5] (deletions first).
    #[test]
    fn real_fifo_replace_makes_deletions() {
        let got = run(|p| {
            p.replace(
                vec![cm("foo", "5"), cm("bar", "6"), cm("baz", "7")],
                "7".into(),
            );
            p.delete(cm("baz", "10"));
            p.replace(vec![cm("foo", "5")], "10".into());
        });
        let tail: Vec<&str> = got.iter().skip(4).map(String::as_str).collect();
        assert_eq!(
            tail,
            [
                "Deleted baz@10",
                "Deleted tombstone{bar, bar@6}",
                "Replaced foo@5",
                "ListComplete 10"
            ]
        );
    }

    /// TestRealFIFO_DeleteExistingNonPropagated: Add foo5 then Delete foo6 → two deltas, the last
    /// one Deleted (no coalescing).
    #[test]
    fn real_fifo_does_not_coalesce() {
        let got = run(|p| {
            p.add(cm("foo", "5"));
            p.delete(cm("foo", "6"));
        });
        assert_eq!(got, ["Added foo@5", "Deleted foo@6"]);
    }

    #[test]
    fn tombstone_carries_the_last_known_state_after_updates() {
        let got = run(|p| {
            p.replace(vec![cm("a", "1"), cm("b", "2")], "2".into());
            p.update(cm("a", "3"));
            p.add(cm("c", "4"));
            p.replace(vec![cm("b", "2"), cm("d", "9")], "9".into());
        });
        assert_eq!(
            got,
            [
                "Replaced a@1",
                "Replaced b@2",
                "ListComplete 2",
                "Updated a@3",
                "Added c@4",
                "Deleted tombstone{a, a@3}",
                "Deleted tombstone{c, c@4}",
                "Replaced b@2",
                "Replaced d@9",
                "ListComplete 9"
            ]
        );
    }

    #[test]
    fn observed_deletion_is_not_repeated_as_a_tombstone() {
        let got = run(|p| {
            p.replace(vec![cm("a", "1")], "1".into());
            p.delete(cm("a", "2"));
            p.replace(vec![], "3".into());
        });
        assert_eq!(
            got,
            [
                "Replaced a@1",
                "ListComplete 1",
                "Deleted a@2",
                "ListComplete 3"
            ]
        );
    }

    #[test]
    fn into_arcs_keeps_order_across_buffer_shrinks() {
        let v: Vec<u32> = (0..5000).collect();
        let arcs = into_arcs(v, Arc::new);
        let back: Vec<u32> = arcs.iter().map(|a| **a).collect();
        assert_eq!(back, (0..5000).collect::<Vec<u32>>());
    }

    #[test]
    fn relist_tombstones_skips_listed_keys() {
        let a = Arc::new(cm("a", "1"));
        let b = Arc::new(cm("b", "1"));
        let known = [("a".to_string(), a), ("b".to_string(), b)];
        let listed: HashSet<String> = ["b".to_string()].into();
        let t = relist_tombstones(known.iter().map(|(k, v)| (k, v)), &listed);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].key, "a");
    }
}
