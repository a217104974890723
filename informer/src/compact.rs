//! [`Compact<K>`]: a full object kept small in a cache, its metadata decoded and the rest of it
//! kept as JSON until someone reads it.

use std::fmt;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess};
use serde::{Deserialize, Serialize};

/// A `K` whose metadata is decoded and whose other fields are kept as compact JSON.
///
/// A k8s-openapi object is much larger in memory than on the wire: every optional sub-struct is
/// stored inline (a `Container` alone is 2.3 KB before any of its strings), and every label or
/// annotation map is a B-tree with room for eleven entries. A realistic Pod of 2.4 KB of JSON
/// takes about 18 KB as a `Pod`; client-go's `*v1.Pod` takes about 9 KB. `Compact<Pod>` keeps
/// the `ObjectMeta` (which keys, indexers, selectors and handlers read) decoded and the spec and
/// status as compact JSON, about 4.5 KB in all, and decodes the whole `Pod` on
/// [`Compact::decode`]. An object is decoded once as `K` when it arrives, and refused if `K`
/// refuses it, exactly as a cache of `K` would; only the compact form is kept.
///
/// Use it for caches of many objects read rarely (a full-object cache an operator keeps for
/// occasional lookups); a controller that reads a few fields on every sync is better served by
/// a projected type (see the crate docs), which is smaller still and never decodes twice.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use kcm_informer::Compact;
///
/// let json = r#"{"apiVersion":"v1","kind":"Pod",
///     "metadata":{"name":"web-0","namespace":"prod","labels":{"app":"web"}},
///     "spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}"#;
/// let cached: Compact<Pod> = serde_json::from_str(json).unwrap();
/// assert_eq!(cached.metadata().name.as_deref(), Some("web-0"));
/// let pod: Pod = cached.decode().unwrap();
/// assert_eq!(pod.spec.unwrap().containers[0].image.as_deref(), Some("nginx:1.27"));
/// ```
///
/// In an informer: `SharedIndexInformer<Compact<Pod>>` or `factory.informer::<Compact<Pod>>()`;
/// listers and handlers then hand out `Arc<Compact<Pod>>`.
pub struct Compact<K> {
    metadata: ObjectMeta,
    /// The object's fields other than `metadata`, `apiVersion` and `kind`, as one JSON object.
    rest: Box<[u8]>,
    kind: PhantomData<fn() -> K>,
}

impl<K> Compact<K> {
    /// The object's metadata (decoded).
    pub fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    /// The object's other fields as a JSON object (`{"spec":…,"status":…}`).
    pub fn raw_rest(&self) -> &[u8] {
        &self.rest
    }

    /// Bytes held besides the struct itself (for capacity planning).
    pub fn rest_len(&self) -> usize {
        self.rest.len()
    }
}

impl<K> Compact<K>
where
    K: DeserializeOwned + k8s_openapi::Metadata<Ty = ObjectMeta>,
{
    /// The whole object, decoded (each call decodes again: keep the result if it is read often).
    pub fn decode(&self) -> Result<K, serde_json::Error> {
        let mut object: K = serde_json::from_slice(&self.rest)?;
        *object.metadata_mut() = self.metadata.clone();
        Ok(object)
    }
}

impl<K> Compact<K>
where
    K: Serialize + DeserializeOwned + k8s_openapi::Metadata<Ty = ObjectMeta>,
{
    /// Compacts a decoded object.
    pub fn new(object: &K) -> Result<Self, serde_json::Error> {
        let bytes = serde_json::to_vec(object)?;
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        let compact = Self::deserialize(&mut de)?;
        de.end()?;
        Ok(compact)
    }
}

impl<K> Clone for Compact<K> {
    fn clone(&self) -> Self {
        Compact {
            metadata: self.metadata.clone(),
            rest: self.rest.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> PartialEq for Compact<K> {
    fn eq(&self, other: &Self) -> bool {
        self.metadata == other.metadata && self.rest == other.rest
    }
}

impl<K> fmt::Debug for Compact<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compact")
            .field("metadata", &self.metadata)
            .field("rest", &String::from_utf8_lossy(&self.rest))
            .finish()
    }
}

impl<K: k8s_openapi::Resource> k8s_openapi::Resource for Compact<K> {
    const API_VERSION: &'static str = K::API_VERSION;
    const GROUP: &'static str = K::GROUP;
    const KIND: &'static str = K::KIND;
    const VERSION: &'static str = K::VERSION;
    const URL_PATH_SEGMENT: &'static str = K::URL_PATH_SEGMENT;
    type Scope = K::Scope;
}

impl<K: k8s_openapi::Resource> k8s_openapi::Metadata for Compact<K> {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Compact<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let compact = deserializer.deserialize_map(CompactVisitor(PhantomData))?;
        // Refuse what `K` refuses, as a cache of `K` would (a list with a malformed object
        // fails whole and is retried): decode once here, keep only the compact form.
        serde_json::from_slice::<K>(&compact.rest).map_err(de::Error::custom)?;
        Ok(compact)
    }
}

struct CompactVisitor<K>(PhantomData<fn() -> K>);

impl<'de, K> de::Visitor<'de> for CompactVisitor<K> {
    type Value = Compact<K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Compact<K>, A::Error> {
        let mut metadata = None;
        let mut rest = Vec::with_capacity(1024);
        rest.push(b'{');
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "metadata" => metadata = Some(map.next_value::<ObjectMeta>()?),
                // They are K's: decode() need not see them (list items come without them).
                "apiVersion" | "kind" => {
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    if rest.len() > 1 {
                        rest.push(b',');
                    }
                    serde_json::to_writer(&mut rest, &key).map_err(de::Error::custom)?;
                    rest.push(b':');
                    map.next_value_seed(Transcode(&mut rest))?;
                }
            }
        }
        rest.push(b'}');
        Ok(Compact {
            metadata: metadata.unwrap_or_default(),
            rest: rest.into_boxed_slice(),
            kind: PhantomData,
        })
    }
}

/// Writes the value being deserialized as JSON into the buffer, whatever the deserializer
/// (serde_json's, or serde's buffered content for an internally tagged event).
struct Transcode<'a>(&'a mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for Transcode<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let mut out = serde_json::Serializer::new(&mut *self.0);
        serde_transcode::transcode(deserializer, &mut out).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    fn pod_json() -> serde_json::Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "prod", "resourceVersion": "7",
                         "labels": {"app": "web"}, "annotations": {"a": "\"quoted\" \u{e9}"}},
            "spec": {"containers": [{"name": "web", "image": "nginx",
                     "resources": {"limits": {"cpu": "500m"}}}], "nodeName": "n1"},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        })
    }

    #[test]
    fn decodes_to_the_same_object_as_a_direct_decode() {
        let text = pod_json().to_string();
        let direct: Pod = serde_json::from_str(&text).expect("pod");
        let compact: Compact<Pod> = serde_json::from_str(&text).expect("compact");
        assert_eq!(compact.metadata(), &direct.metadata);
        assert_eq!(compact.decode().expect("decode"), direct);
        assert_eq!(Compact::new(&direct).expect("compact"), compact);
        // apiVersion and kind are not kept twice.
        let rest = String::from_utf8_lossy(compact.raw_rest()).into_owned();
        assert!(
            rest.starts_with("{\"spec\":") && !rest.contains("apiVersion"),
            "{rest}"
        );
    }

    #[test]
    fn objects_without_sections_and_list_items_without_kind_decode() {
        let bare: Compact<Pod> =
            serde_json::from_str(r#"{"metadata":{"name":"x"}}"#).expect("bare");
        assert_eq!(bare.raw_rest(), b"{}");
        assert_eq!(
            bare.decode().expect("decode").metadata.name.as_deref(),
            Some("x")
        );
        let none: Compact<Pod> = serde_json::from_str("{}").expect("empty");
        assert_eq!(none.metadata(), &ObjectMeta::default());
    }

    #[test]
    fn decoding_through_a_buffered_event_works_too() {
        // kube's watch events are adjacently tagged: with "object" before "type", serde
        // buffers the object before decoding it.
        let line = json!({"object": pod_json(), "type": "MODIFIED"}).to_string();
        let event: kube::api::WatchEvent<Compact<Pod>> =
            serde_json::from_str(&line).expect("event");
        let kube::api::WatchEvent::Modified(compact) = event else {
            panic!("not MODIFIED");
        };
        assert_eq!(
            compact.decode().expect("decode"),
            serde_json::from_value::<Pod>(pod_json()).expect("pod")
        );
    }

    #[test]
    fn what_k_refuses_is_refused_at_once() {
        // As a cache of `Pod` would: the reflector then retries the list with backoff.
        let err =
            serde_json::from_str::<Compact<Pod>>(r#"{"metadata":{"name":"x"},"spec":"three"}"#)
                .expect_err("a spec that is a string");
        assert!(err.to_string().contains("invalid type: string"), "{err}");
        assert!(serde_json::from_str::<Compact<Pod>>(r#"{"metadata":{"name":3}}"#).is_err());
        assert!(serde_json::from_str::<Compact<Pod>>("[1]").is_err());
    }
}
