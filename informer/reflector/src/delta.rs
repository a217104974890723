//! Deltas with client-go's meaning, tombstones, and the in-order (RealFIFO-like) conversion of the
//! reflector's output into deltas.
//!
//! A relist is turned into deletions first — one [`DeletedFinalStateUnknown`] tombstone carrying the
//! last known state for every known object missing from the new list — and then one
//! [`Delta::Replaced`] per listed object, followed by [`Delta::ListComplete`]. Objects never vanish
//! silently.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;
use std::hash::RandomState;
use std::sync::Arc;

use hashbrown::{Equivalent, HashMap};
use kcm_store::ObjectKey;

use crate::reflector_store::ReflectorStore;

/// A deletion inferred from a relist: the object was deleted while the watch was down, so its
/// final state is unknown; `obj` is the last state this client saw (client-go
/// `DeletedFinalStateUnknown`).
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The object's key (displayed `namespace/name`, or `name` for a cluster-scoped object).
    pub key: ObjectKey,
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
    pub fn key(&self) -> ObjectKey {
        match self {
            Self::Object(o) => ObjectKey::from_meta(o.meta()),
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

/// An object's namespace and name, borrowed: hashes and compares like its [`ObjectKey`], so a
/// map keyed by `ObjectKey` finds a known object without building (allocating) its key.
#[derive(Hash)]
pub(crate) struct KeyRef<'a> {
    namespace: &'a str,
    name: &'a str,
}

impl<'a> KeyRef<'a> {
    pub(crate) fn of<K: kube::Resource>(obj: &'a K) -> Self {
        let meta = obj.meta();
        KeyRef {
            namespace: meta.namespace.as_deref().unwrap_or_default(),
            name: meta.name.as_deref().unwrap_or_default(),
        }
    }
}

impl Equivalent<ObjectKey> for KeyRef<'_> {
    fn equivalent(&self, key: &ObjectKey) -> bool {
        self.namespace == key.namespace && self.name == key.name
    }
}

/// A map by object key that [`KeyRef`] can look up.
pub(crate) type KeyMap<V> = HashMap<ObjectKey, V, RandomState>;

impl<K> fmt::Debug for Delta<K>
where
    K: kube::Resource,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Added(o) => write!(f, "Added({})", ObjectKey::from_meta(o.meta())),
            Self::Updated(o) => write!(f, "Updated({})", ObjectKey::from_meta(o.meta())),
            Self::Deleted(d) if d.is_tombstone() => write!(f, "Deleted(tombstone {})", d.key()),
            Self::Deleted(d) => write!(f, "Deleted({})", d.key()),
            Self::Replaced(o) => write!(f, "Replaced({})", ObjectKey::from_meta(o.meta())),
            Self::Sync(o) => write!(f, "Sync({})", ObjectKey::from_meta(o.meta())),
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

/// Tombstones for a relist: every known object whose key is absent from `listed_keys`, with its
/// last known state, ordered by the keys' string form (`namespace/name`), as client-go's
/// sorted key list yields them.
pub fn relist_tombstones<'a, K: 'a, Q: Borrow<ObjectKey>>(
    known: impl IntoIterator<Item = (Q, &'a Arc<K>)>,
    listed_keys: &HashSet<ObjectKey>,
) -> Vec<DeletedFinalStateUnknown<K>> {
    let mut tombstones: Vec<DeletedFinalStateUnknown<K>> = known
        .into_iter()
        .filter(|(key, _)| !listed_keys.contains(key.borrow()))
        .map(|(key, obj)| DeletedFinalStateUnknown {
            key: key.borrow().clone(),
            obj: Arc::clone(obj),
        })
        .collect();
    tombstones.sort_by(|a, b| cmp_as_strings(&a.key, &b.key));
    tombstones
}

/// Compares two keys as their `namespace/name` strings would compare, without building them.
fn cmp_as_strings(a: &ObjectKey, b: &ObjectKey) -> Ordering {
    fn bytes(k: &ObjectKey) -> impl Iterator<Item = u8> + '_ {
        let slash: &[u8] = if k.namespace.is_empty() { b"" } else { b"/" };
        k.namespace
            .bytes()
            .chain(slash.iter().copied())
            .chain(k.name.bytes())
    }
    bytes(a).cmp(bytes(b))
}

/// A [`ReflectorStore`] that turns the reflector's output into [`Delta`]s (client-go RealFIFO in
/// non-atomic mode, without coalescing) and hands each delta to `sink`.
///
/// It remembers the last known state of every object (one `Arc` per key) so a relist can produce
/// tombstones for objects that vanished.
pub struct DeltaProducer<K, F> {
    known: KeyMap<Arc<K>>,
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
            known: KeyMap::default(),
            sink,
        }
    }

    /// Number of objects currently known.
    pub fn known_len(&self) -> usize {
        self.known.len()
    }

    /// The last known state of `key`.
    pub fn known(&self, key: &ObjectKey) -> Option<&Arc<K>> {
        self.known.get(key)
    }

    fn upsert(&mut self, obj: K) -> Arc<K> {
        let obj = Arc::new(obj);
        match self.known.get_mut(&KeyRef::of(obj.as_ref())) {
            Some(known) => *known = Arc::clone(&obj),
            None => {
                self.known
                    .insert(ObjectKey::from_meta(obj.meta()), Arc::clone(&obj));
            }
        }
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
        self.known.remove(&KeyRef::of(&obj));
        (self.sink)(Delta::Deleted(DeletedObject::Object(Arc::new(obj))));
    }

    fn replace(&mut self, objects: Vec<K>, resource_version: String) {
        let objects: Vec<Arc<K>> = into_arcs(objects, Arc::new);
        let listed: KeyMap<Arc<K>> = objects
            .iter()
            .map(|o| (ObjectKey::from_meta(o.meta()), Arc::clone(o)))
            .collect();
        let known = std::mem::take(&mut self.known);
        let listed_keys: HashSet<ObjectKey> = listed.keys().cloned().collect();
        let tombstones = relist_tombstones(&known, &listed_keys);
        self.known = listed;
        for t in tombstones {
            (self.sink)(Delta::Deleted(DeletedObject::Unknown(t)));
        }
        for obj in objects {
            (self.sink)(Delta::Replaced(obj));
        }
        (self.sink)(Delta::ListComplete { resource_version });
    }

    /// A part listed afresh: tombstones for the part's known objects the list lacks, then each
    /// listed object as an add or an update (no `ListComplete`: the rest was not listed).
    fn replace_part(
        &mut self,
        part: &(dyn Fn(&K) -> bool + Sync),
        objects: Vec<K>,
        _resource_version: &str,
    ) -> bool {
        let listed_keys: HashSet<ObjectKey> = objects
            .iter()
            .map(|o| ObjectKey::from_meta(o.meta()))
            .collect();
        let tombstones = relist_tombstones(
            self.known.iter().filter(|(_, obj)| part(obj.as_ref())),
            &listed_keys,
        );
        for t in tombstones {
            self.known.remove(&t.key);
            (self.sink)(Delta::Deleted(DeletedObject::Unknown(t)));
        }
        for obj in objects {
            let known = self.known.contains_key(&KeyRef::of(&obj));
            let obj = self.upsert(obj);
            (self.sink)(if known {
                Delta::Updated(obj)
            } else {
                Delta::Added(obj)
            });
        }
        true
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
        let known = [(ObjectKey::cluster("a"), a), (ObjectKey::cluster("b"), b)];
        let listed: HashSet<ObjectKey> = [ObjectKey::cluster("b")].into();
        let t = relist_tombstones(known.iter().map(|(k, v)| (k, v)), &listed);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].key, ObjectKey::cluster("a"));
    }

    #[test]
    fn key_ref_finds_object_keys() {
        let mut map: KeyMap<u8> = KeyMap::default();
        map.insert(ObjectKey::new("ns", "a"), 1);
        map.insert(ObjectKey::cluster("a"), 2);
        let mut namespaced = cm("a", "1");
        namespaced.metadata.namespace = Some("ns".into());
        assert_eq!(map.get(&KeyRef::of(&namespaced)), Some(&1));
        assert_eq!(map.get(&KeyRef::of(&cm("a", "1"))), Some(&2));
        namespaced.metadata.namespace = Some(String::new());
        assert_eq!(
            map.get(&KeyRef::of(&namespaced)),
            Some(&2),
            "empty = cluster"
        );
        assert_eq!(map.get(&KeyRef::of(&cm("b", "1"))), None);
    }

    #[test]
    fn relist_tombstones_are_ordered_by_their_string_keys() {
        let o = Arc::new(cm("x", "1"));
        let known = [
            (ObjectKey::new("a", "b"), &o),
            (ObjectKey::new("a-x", "c"), &o),
            (ObjectKey::cluster("a"), &o),
        ];
        let t = relist_tombstones(known, &HashSet::new());
        let keys: Vec<String> = t.iter().map(|t| t.key.to_string()).collect();
        assert_eq!(keys, ["a", "a-x/c", "a/b"]);
    }
}
