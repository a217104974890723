//! The object table behind [`Store`](crate::Store): objects in numbered slots, and a hash
//! index from `namespace/name` to slot.
//!
//! A point read is bound by memory latency, not by instructions: with 100,000 objects every
//! step of a lookup is a likely cache miss. A `HashMap<ObjectKey, Slot>` costs four of them
//! before the object (control bytes, the bucket, then the namespace and the name, each in
//! its own heap block). Here the index holds 4-byte slot numbers (small enough to stay in
//! cache), and each slot's key is stored inline — namespace and name bytes back to back in a
//! fixed 48-byte [`CompactKey`] — so a lookup touches the index, one key and the object.
//! Lookups take the namespace and name as `&str`, so no caller has to build an
//! [`ObjectKey`] (two allocations) just to look one up.

use std::hash::{BuildHasher, Hasher as _};
use std::sync::Arc;

use hashbrown::HashTable;

use crate::index::{Hasher, Slot};
use crate::key::ObjectKey;

/// Keys up to this many bytes (namespace + name) are stored inline.
const INLINE: usize = 46;

/// A key's namespace and name, stored back to back (48 bytes; inline up to 46 bytes).
#[derive(Clone)]
enum CompactKey {
    Inline {
        ns_len: u8,
        len: u8,
        bytes: [u8; INLINE],
    },
    Heap {
        ns_len: usize,
        bytes: Box<[u8]>,
    },
}

impl CompactKey {
    const EMPTY: CompactKey = CompactKey::Inline {
        ns_len: 0,
        len: 0,
        bytes: [0; INLINE],
    };

    fn new(ns: &str, name: &str) -> Self {
        let len = ns.len() + name.len();
        match (u8::try_from(ns.len()), u8::try_from(len)) {
            (Ok(ns_len), Ok(len_u8)) if len <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..ns.len()].copy_from_slice(ns.as_bytes());
                bytes[ns.len()..len].copy_from_slice(name.as_bytes());
                CompactKey::Inline {
                    ns_len,
                    len: len_u8,
                    bytes,
                }
            }
            _ => {
                let mut bytes = Vec::with_capacity(len);
                bytes.extend_from_slice(ns.as_bytes());
                bytes.extend_from_slice(name.as_bytes());
                CompactKey::Heap {
                    ns_len: ns.len(),
                    bytes: bytes.into_boxed_slice(),
                }
            }
        }
    }

    /// (namespace bytes, name bytes).
    fn parts(&self) -> (&[u8], &[u8]) {
        let (ns_len, bytes) = match self {
            CompactKey::Inline { ns_len, len, bytes } => {
                (*ns_len as usize, &bytes[..*len as usize])
            }
            CompactKey::Heap { ns_len, bytes } => (*ns_len, &bytes[..]),
        };
        bytes.split_at(ns_len.min(bytes.len()))
    }

    fn matches(&self, ns: &str, name: &str) -> bool {
        let (k_ns, k_name) = self.parts();
        k_ns == ns.as_bytes() && k_name == name.as_bytes()
    }

    fn to_key(&self) -> ObjectKey {
        // The bytes are the concatenation of two `&str`s split at the same place: valid UTF-8.
        let (ns, name) = self.parts();
        ObjectKey::new(String::from_utf8_lossy(ns), String::from_utf8_lossy(name))
    }
}

/// Objects by slot, found by namespace and name.
pub(crate) struct ObjectTable<T> {
    hasher: Hasher,
    /// Slots of the stored objects, hashed by key.
    index: HashTable<Slot>,
    /// The object in each slot (`None` for a free slot): dense, so listing is a linear scan.
    objs: Vec<Option<Arc<T>>>,
    /// The key of each slot (empty for a free slot).
    keys: Vec<CompactKey>,
    free: Vec<Slot>,
}

impl<T> ObjectTable<T> {
    pub(crate) fn new() -> Self {
        Self {
            hasher: Hasher::default(),
            index: HashTable::new(),
            objs: Vec::new(),
            keys: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Room for `n` more objects.
    pub(crate) fn reserve(&mut self, n: usize) {
        let (hasher, keys) = (&self.hasher, &self.keys);
        self.index
            .reserve(n, |&s| hash_parts(hasher, keys[s as usize].parts()));
        self.objs.reserve(n);
        self.keys.reserve(n);
    }

    /// Number of stored objects.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// The slot of `namespace/name`.
    pub(crate) fn find(&self, ns: &str, name: &str) -> Option<Slot> {
        let hash = hash_parts(&self.hasher, (ns.as_bytes(), name.as_bytes()));
        self.find_hashed(hash, ns, name)
    }

    fn find_hashed(&self, hash: u64, ns: &str, name: &str) -> Option<Slot> {
        let keys = &self.keys;
        self.index
            .find(hash, |&s| keys[s as usize].matches(ns, name))
            .copied()
    }

    /// The object in `slot`.
    pub(crate) fn obj(&self, slot: Slot) -> Option<&Arc<T>> {
        self.objs.get(slot as usize).and_then(Option::as_ref)
    }

    /// The object stored under `namespace/name`.
    pub(crate) fn get(&self, ns: &str, name: &str) -> Option<&Arc<T>> {
        self.find(ns, name).and_then(|s| self.obj(s))
    }

    /// Stores `obj` under `namespace/name`; returns its slot and the object it replaced.
    pub(crate) fn put(&mut self, ns: &str, name: &str, obj: Arc<T>) -> (Slot, Option<Arc<T>>) {
        let hash = hash_parts(&self.hasher, (ns.as_bytes(), name.as_bytes()));
        if let Some(slot) = self.find_hashed(hash, ns, name) {
            let old = self.objs[slot as usize].replace(obj);
            return (slot, old);
        }
        let key = CompactKey::new(ns, name);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.objs[slot as usize] = Some(obj);
                self.keys[slot as usize] = key;
                slot
            }
            None => {
                // A capacity limit like `Vec`'s: 2^32 objects would need >32 GiB of slots alone.
                let slot = Slot::try_from(self.objs.len()).expect("more than 2^32 objects");
                self.objs.push(Some(obj));
                self.keys.push(key);
                slot
            }
        };
        let (hasher, keys) = (&self.hasher, &self.keys);
        self.index.insert_unique(hash, slot, |&s| {
            hash_parts(hasher, keys[s as usize].parts())
        });
        (slot, None)
    }

    /// Removes `namespace/name`; returns its former slot and object.
    pub(crate) fn remove(&mut self, ns: &str, name: &str) -> Option<(Slot, Arc<T>)> {
        let hash = hash_parts(&self.hasher, (ns.as_bytes(), name.as_bytes()));
        let keys = &self.keys;
        let entry = self
            .index
            .find_entry(hash, |&s| keys[s as usize].matches(ns, name))
            .ok()?;
        let (slot, _) = entry.remove();
        self.keys[slot as usize] = CompactKey::EMPTY;
        let obj = self.objs.get_mut(slot as usize).and_then(Option::take)?;
        self.free.push(slot);
        Some((slot, obj))
    }

    /// Every stored object with its slot, in slot order.
    pub(crate) fn objects(&self) -> impl Iterator<Item = (Slot, &Arc<T>)> {
        self.objs
            .iter()
            .enumerate()
            .filter_map(|(s, o)| o.as_ref().map(|o| (s as Slot, o)))
    }

    /// Every stored object, in slot order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Arc<T>> {
        self.objs.iter().flatten()
    }

    /// The keys of every stored object, in slot order.
    pub(crate) fn keys(&self) -> Vec<ObjectKey> {
        let mut out = Vec::with_capacity(self.len());
        out.extend(
            self.objs
                .iter()
                .zip(&self.keys)
                .filter(|(o, _)| o.is_some())
                .map(|(_, k)| k.to_key()),
        );
        out
    }

    /// Consumes the table, returning its objects in slot order.
    pub(crate) fn into_values(self) -> impl Iterator<Item = Arc<T>> {
        self.objs.into_iter().flatten()
    }
}

/// The hash of a key given as (namespace bytes, name bytes). The separator byte 0xff never
/// occurs in UTF-8, so distinct keys never feed the hasher the same bytes.
fn hash_parts(hasher: &Hasher, (ns, name): (&[u8], &[u8])) -> u64 {
    let mut h = hasher.build_hasher();
    h.write(ns);
    h.write_u8(0xff);
    h.write(name);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap_keys_round_trip() {
        let long = "n".repeat(300);
        for (ns, name) in [("", "node-1"), ("default", "web-0"), ("ns", long.as_str())] {
            let k = CompactKey::new(ns, name);
            assert!(k.matches(ns, name));
            assert!(!k.matches(name, ns) || ns == name);
            assert_eq!(k.to_key(), ObjectKey::new(ns, name));
        }
        assert!(matches!(
            CompactKey::new("ns", &long),
            CompactKey::Heap { .. }
        ));
        assert!(matches!(
            CompactKey::new("default", "web-0"),
            CompactKey::Inline { .. }
        ));
        // The boundary matters: "ab"/"c" is not "a"/"bc".
        assert!(!CompactKey::new("ab", "c").matches("a", "bc"));
    }

    #[test]
    fn put_find_remove_and_slot_reuse() {
        let mut t: ObjectTable<u32> = ObjectTable::new();
        let (a, old) = t.put("ns", "a", Arc::new(1));
        assert!(old.is_none());
        let (b, _) = t.put("ns", "b", Arc::new(2));
        let (a2, old) = t.put("ns", "a", Arc::new(3));
        assert_eq!((a2, old.as_deref()), (a, Some(&1)));
        assert_eq!(t.get("ns", "a").map(|o| **o), Some(3));
        assert_eq!(t.get("ns", "c"), None);
        assert_eq!(t.get("", "a"), None);
        let (slot, obj) = t.remove("ns", "a").expect("present");
        assert_eq!((slot, *obj), (a, 3));
        assert_eq!(t.remove("ns", "a"), None);
        assert_eq!(t.len(), 1);
        let (c, _) = t.put("other", "c", Arc::new(4));
        assert_eq!(c, a, "freed slot reused");
        let mut keys = t.keys();
        keys.sort();
        assert_eq!(
            keys,
            vec![ObjectKey::new("ns", "b"), ObjectKey::new("other", "c")]
        );
        assert_eq!(t.objects().map(|(s, _)| s).collect::<Vec<_>>(), vec![a, b]);
    }

    #[test]
    fn many_objects_survive_growth() {
        let mut t: ObjectTable<usize> = ObjectTable::new();
        let name = |i: usize| format!("pod-{i}-{}", "x".repeat(i % 60));
        for i in 0..5_000 {
            t.put(&format!("ns-{}", i % 7), &name(i), Arc::new(i));
        }
        for i in (0..5_000).step_by(3) {
            assert!(t.remove(&format!("ns-{}", i % 7), &name(i)).is_some());
        }
        for i in 0..5_000 {
            let got = t.get(&format!("ns-{}", i % 7), &name(i)).map(|o| **o);
            assert_eq!(got, (i % 3 != 0).then_some(i), "object {i}");
        }
    }
}
