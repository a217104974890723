//! Listing and watching one share of a sharded resource (KEP-5866, server-side sharded list and
//! watch; gate `ShardedListAndWatch`, alpha since Kubernetes v1.36).
//!
//! A [`ShardScope`] is the share: the `shardSelector` the lister-watcher sends with every list
//! page and watch (e.g. `shardRange(object.metadata.namespace, '0x0000000000000000',
//! '0x8000000000000000')`), and the same selection as a predicate over an object's metadata.
//! A server with the gate on filters and echoes the selector in the list's
//! `metadata.shardInfo.selector`; a server without it (the gate is off by default, and servers
//! before v1.36 do not know the parameter) ignores it silently and sends everything. The
//! reflector therefore filters on the client **always** ([`ShardFilter`]): with the server's
//! help the client receives only its share, without it the client still stores only its share.
//! A list behind a load balancer may be answered by another kube-apiserver than the watch, so
//! one echo proves nothing about the next request.
//!
//! Building the selector and the predicate from a hash ring is `kcm-sharding`'s business; this
//! module takes them as they are.
//!
//! ```
//! use kcm_reflector::shard::ShardScope;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! // A share of exactly the namespace "team-a" (a real share comes from a ring).
//! let scope = ShardScope::new(
//!     "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')",
//!     |meta: &ObjectMeta| meta.namespace.as_deref() == Some("team-a"),
//! );
//! let meta = |ns: &str| ObjectMeta { namespace: Some(ns.into()), ..Default::default() };
//! assert!(scope.matches(&meta("team-a")));
//! assert!(!scope.matches(&meta("team-b")));
//! ```

use std::fmt;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::reflector_store::ReflectorStore;

/// The query parameter carrying the shard selector on list and watch requests.
pub const SHARD_SELECTOR_PARAM: &str = "shardSelector";

type Predicate = Arc<dyn Fn(&ObjectMeta) -> bool + Send + Sync>;

/// One share of a resource: the selector sent to the server and the same test on the client.
#[derive(Clone)]
pub struct ShardScope {
    selector: String,
    matches: Predicate,
}

impl fmt::Debug for ShardScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardScope")
            .field("selector", &self.selector)
            .finish_non_exhaustive()
    }
}

impl ShardScope {
    /// A share sent to the server as `selector` and tested on the client with `matches`; the
    /// two must select the same objects.
    pub fn new(
        selector: impl Into<String>,
        matches: impl Fn(&ObjectMeta) -> bool + Send + Sync + 'static,
    ) -> Self {
        ShardScope {
            selector: selector.into(),
            matches: Arc::new(matches),
        }
    }

    /// The `shardSelector` value.
    pub fn selector(&self) -> &str {
        &self.selector
    }

    /// Whether an object with this metadata is in the share.
    pub fn matches(&self, meta: &ObjectMeta) -> bool {
        (self.matches)(meta)
    }
}

/// Whether the server applied the shard selector of the last list, as its echo says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerFiltering {
    /// `metadata.shardInfo.selector` was present: the server sent only the share.
    Applied,
    /// No `shardInfo`: the server ignored the selector (gate off, or a server before v1.36)
    /// and sent everything; the client filters.
    NotApplied,
}

/// The selector a list response says the server applied (`metadata.shardInfo.selector`), read
/// from the response body without decoding its items; `None` when absent or not JSON.
///
/// ```
/// use kcm_reflector::shard::shard_info_selector;
///
/// let body = br#"{"kind":"PodList","metadata":{"resourceVersion":"7",
///     "shardInfo":{"selector":"shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"}},
///     "items":[]}"#;
/// assert!(shard_info_selector(body).unwrap().starts_with("shardRange("));
/// assert_eq!(shard_info_selector(br#"{"metadata":{},"items":[]}"#), None);
/// ```
pub fn shard_info_selector(list_body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct List {
        #[serde(default)]
        metadata: Meta,
    }
    #[derive(serde::Deserialize, Default)]
    struct Meta {
        #[serde(default, rename = "shardInfo")]
        shard_info: Option<Info>,
    }
    #[derive(serde::Deserialize)]
    struct Info {
        #[serde(default)]
        selector: String,
    }
    let list: List = serde_json::from_slice(list_body).ok()?;
    list.metadata
        .shard_info
        .map(|i| i.selector)
        .filter(|s| !s.is_empty())
}

/// A [`ReflectorStore`] that passes on only the objects of a share: adds, updates and deletes
/// of others are dropped, and a replace keeps only the share's objects.
#[derive(Debug)]
pub struct ShardFilter<'a, S> {
    inner: &'a mut S,
    scope: &'a ShardScope,
    dropped: u64,
}

impl<'a, S> ShardFilter<'a, S> {
    /// Filters what reaches `inner` by `scope`.
    pub fn new(inner: &'a mut S, scope: &'a ShardScope) -> Self {
        ShardFilter {
            inner,
            scope,
            dropped: 0,
        }
    }

    /// How many objects were dropped (not in the share).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl<K: kube::Resource, S: ReflectorStore<K>> ReflectorStore<K> for ShardFilter<'_, S> {
    fn add(&mut self, obj: K) {
        if self.scope.matches(obj.meta()) {
            self.inner.add(obj);
        } else {
            self.dropped += 1;
        }
    }

    fn update(&mut self, obj: K) {
        if self.scope.matches(obj.meta()) {
            self.inner.update(obj);
        } else {
            self.dropped += 1;
        }
    }

    fn delete(&mut self, obj: K) {
        if self.scope.matches(obj.meta()) {
            self.inner.delete(obj);
        } else {
            self.dropped += 1;
        }
    }

    fn replace(&mut self, objects: Vec<K>, resource_version: String) {
        let before = objects.len();
        let kept: Vec<K> = objects
            .into_iter()
            .filter(|o| self.scope.matches(o.meta()))
            .collect();
        self.dropped += (before - kept.len()) as u64;
        self.inner.replace(kept, resource_version);
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
        let before = objects.len();
        let kept: Vec<K> = objects
            .into_iter()
            .filter(|o| self.scope.matches(o.meta()))
            .collect();
        let dropped = (before - kept.len()) as u64;
        let done = self.inner.replace_part(part, kept, resource_version);
        if done {
            self.dropped += dropped;
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[derive(Default)]
    struct Recorder(Vec<String>);

    impl ReflectorStore<ConfigMap> for Recorder {
        fn add(&mut self, obj: ConfigMap) {
            self.0
                .push(format!("add {}", obj.metadata.name.unwrap_or_default()));
        }
        fn update(&mut self, obj: ConfigMap) {
            self.0
                .push(format!("update {}", obj.metadata.name.unwrap_or_default()));
        }
        fn delete(&mut self, obj: ConfigMap) {
            self.0
                .push(format!("delete {}", obj.metadata.name.unwrap_or_default()));
        }
        fn replace(&mut self, objects: Vec<ConfigMap>, rv: String) {
            let names: Vec<String> = objects
                .into_iter()
                .filter_map(|o| o.metadata.name)
                .collect();
            self.0.push(format!("replace {} at {rv}", names.join(",")));
        }
        fn bookmark(&mut self, rv: &str) {
            self.0.push(format!("bookmark {rv}"));
        }
    }

    fn cm(ns: &str, name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn only_the_share_reaches_the_store() {
        let scope = ShardScope::new("sel", |m: &ObjectMeta| m.namespace.as_deref() == Some("a"));
        let mut recorder = Recorder::default();
        let mut filter = ShardFilter::new(&mut recorder, &scope);
        filter.replace(vec![cm("a", "1"), cm("b", "2"), cm("a", "3")], "10".into());
        filter.add(cm("b", "4"));
        filter.add(cm("a", "5"));
        filter.update(cm("b", "2"));
        filter.update(cm("a", "1"));
        filter.delete(cm("b", "2"));
        filter.delete(cm("a", "3"));
        filter.bookmark("20");
        assert_eq!(filter.dropped(), 4);
        assert_eq!(
            recorder.0,
            [
                "replace 1,3 at 10",
                "add 5",
                "update 1",
                "delete 3",
                "bookmark 20"
            ]
        );
    }

    #[test]
    fn shard_info_is_read_without_the_items() {
        let body = br#"{"kind":"ConfigMapList","apiVersion":"v1",
            "metadata":{"resourceVersion":"5","shardInfo":{"selector":"x"}},
            "items":[{"metadata":{"name":"a"}},{"unexpected":[1,2,{"deep":true}]}]}"#;
        assert_eq!(shard_info_selector(body).as_deref(), Some("x"));
        for absent in [
            &br#"{"metadata":{"resourceVersion":"5"},"items":[]}"#[..],
            br#"{"items":[]}"#,
            br#"{"metadata":{"shardInfo":{}},"items":[]}"#,
            br#"not json"#,
        ] {
            assert_eq!(shard_info_selector(absent), None);
        }
    }
}
