//! What a shard selects (KEP-5866, server-side sharded list and watch; gate
//! `ShardedListAndWatch`, alpha since Kubernetes v1.36): a [`ShardScope`] is a shard selector sent
//! with every list page and watch and the same selection as a test on the client; a
//! [`ShardSelection`] is a shard's whole selection (everything, a scope, or nothing).
//!
//! A server with the gate on filters and echoes the selector in the list's
//! `metadata.shardInfo.selector`; a server without it (the gate is off by default, and servers
//! before v1.36 do not know the parameter) ignores it silently and sends everything. The
//! reflector therefore filters on the client **always** ([`ScopeFilter`]): with the server's
//! help the client receives only its shard, without it the client still stores only its shard.
//! A list behind a load balancer may be answered by another kube-apiserver than the watch, so
//! one echo proves nothing about the next request.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_sharding::{ShardFilter, ShardKey, ShardRanges, ShardSelector, hash_field};

use crate::reflector_store::ReflectorStore;

/// The query parameter carrying the shard selector on list and watch requests.
pub(crate) const SHARD_SELECTOR_PARAM: &str = "shardSelector";

type Predicate = Arc<dyn Fn(&ObjectMeta) -> bool + Send + Sync>;

/// A selection of objects by shard key: the shard selector sent to the server
/// (`shardSelector`, e.g. `shardRange(object.metadata.namespace, '0x0000000000000000',
/// '0x8000000000000000')`) and the same test on the client. A member's shard is one
/// ([`ShardScope::namespaces`]); so is a part of a shard that moves ([`ShardChange`]).
///
/// ```
/// use kcm_reflector::ShardScope;
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// use kcm_sharding::{ShardRange, ShardRanges, hash_field};
///
/// let meta = |ns: &str| ObjectMeta { namespace: Some(ns.into()), ..Default::default() };
/// // The namespaces whose shard key is in the lower half of the hash space.
/// let lower = ShardScope::namespaces(&ShardRanges::from_ranges([ShardRange::new(0, 1 << 63).unwrap()]));
/// assert_eq!(
///     lower.selector(),
///     "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"
/// );
/// assert_eq!(lower.matches(&meta("team-a")), hash_field("team-a") < 1 << 63);
///
/// // Any selector with the same test written by hand (for a server that ignores selectors).
/// let team_a = ShardScope::new("only(team-a)", |m: &ObjectMeta| m.namespace.as_deref() == Some("team-a"));
/// assert!(team_a.matches(&meta("team-a")) && !team_a.matches(&meta("team-b")));
/// ```
///
/// [`ShardChange`]: crate::ShardChange
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
    /// A scope sent to the server as `selector` and tested on the client with `matches`; the
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

    /// Whether an object with this metadata is in the scope.
    pub fn matches(&self, meta: &ObjectMeta) -> bool {
        (self.matches)(meta)
    }

    /// The objects whose namespace hashes into `ranges` (kcm-sharding's shard key): their
    /// selector, and the same test on the client. The whole hash space and the empty set have no
    /// selector (the empty string: the lister-watcher's own selector is sent); their tests keep
    /// everything and nothing.
    pub fn namespaces(ranges: &ShardRanges) -> Self {
        match ShardFilter::new(ShardKey::Namespace, ranges) {
            ShardFilter::Ranges(selector) => Self::of_selector(selector),
            ShardFilter::Everything => ShardScope::new("", |_: &ObjectMeta| true),
            ShardFilter::Nothing => ShardScope::new("", |_: &ObjectMeta| false),
        }
    }

    /// A namespace selector's wire form and its test.
    fn of_selector(selector: ShardSelector) -> Self {
        ShardScope::new(selector.to_string(), move |meta: &ObjectMeta| {
            selector.matches_hash(hash_field(meta.namespace.as_deref().unwrap_or_default()))
        })
    }
}

/// What a shard selects.
#[derive(Clone, Debug)]
pub enum ShardSelection {
    /// Every object: no selector is sent.
    Everything,
    /// The objects of a shard scope: its selector is sent, and the client filters too.
    Scope(ShardScope),
    /// No object: nothing is listed or watched.
    Nothing,
}

impl ShardSelection {
    /// The shard of the namespaces whose shard key is in `ranges`: everything for the whole
    /// hash space (no selector sent), nothing for the empty set (nothing listed), a scope
    /// otherwise (kcm-sharding's [`ShardFilter`] on the reflector's side).
    pub fn namespaces(ranges: &ShardRanges) -> Self {
        match ShardFilter::new(ShardKey::Namespace, ranges) {
            ShardFilter::Everything => ShardSelection::Everything,
            ShardFilter::Nothing => ShardSelection::Nothing,
            ShardFilter::Ranges(selector) => {
                ShardSelection::Scope(ShardScope::of_selector(selector))
            }
        }
    }

    /// The selector this shard sends (`None`: none).
    pub(crate) fn selector(&self) -> Option<String> {
        match self {
            ShardSelection::Scope(scope) => Some(scope.selector().to_owned()),
            ShardSelection::Everything | ShardSelection::Nothing => None,
        }
    }

    /// Whether an object with this metadata is in the shard.
    pub(crate) fn matches(&self, meta: &ObjectMeta) -> bool {
        match self {
            ShardSelection::Everything => true,
            ShardSelection::Scope(scope) => scope.matches(meta),
            ShardSelection::Nothing => false,
        }
    }
}

/// The selector a list response says the server applied (`metadata.shardInfo.selector`), read
/// from the response body without decoding its items; `None` when absent or not JSON.
pub(crate) fn shard_info_selector(list_body: &[u8]) -> Option<String> {
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

/// A [`ReflectorStore`] that passes on only the objects of a scope: adds, updates and deletes
/// of others are dropped, and a replace keeps only the scope's objects.
#[derive(Debug)]
pub(crate) struct ScopeFilter<'a, S> {
    inner: &'a mut S,
    scope: &'a ShardScope,
    dropped: u64,
}

impl<'a, S> ScopeFilter<'a, S> {
    /// Filters what reaches `inner` by `scope`.
    pub(crate) fn new(inner: &'a mut S, scope: &'a ShardScope) -> Self {
        ScopeFilter {
            inner,
            scope,
            dropped: 0,
        }
    }

    /// How many objects were dropped (not in the scope).
    #[cfg(test)]
    fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl<K: kube::Resource, S: ReflectorStore<K>> ReflectorStore<K> for ScopeFilter<'_, S> {
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
    fn only_the_shard_reaches_the_store() {
        let scope = ShardScope::new("sel", |m: &ObjectMeta| m.namespace.as_deref() == Some("a"));
        let mut recorder = Recorder::default();
        let mut filter = ScopeFilter::new(&mut recorder, &scope);
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
    fn namespace_scopes_and_filters_follow_the_ring_ranges() {
        use kcm_sharding::ShardRange;
        let meta = |ns: &str| ObjectMeta {
            namespace: Some(ns.into()),
            ..Default::default()
        };
        let lower = ShardRanges::from_ranges([ShardRange::new(0, 1 << 63).unwrap()]);
        let wire =
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')";
        let scope = ShardScope::namespaces(&lower);
        assert_eq!(scope.selector(), wire);
        for ns in ["", "default", "kube-system", "team-a", "team-b"] {
            assert_eq!(scope.matches(&meta(ns)), hash_field(ns) < 1 << 63, "{ns:?}");
        }
        let ShardSelection::Scope(filtered) = ShardSelection::namespaces(&lower) else {
            panic!("half the space is a scope");
        };
        assert_eq!(filtered.selector(), wire);
        assert!(matches!(
            ShardSelection::namespaces(&ShardRanges::full()),
            ShardSelection::Everything
        ));
        assert!(matches!(
            ShardSelection::namespaces(&ShardRanges::new()),
            ShardSelection::Nothing
        ));
        // A part of the whole space or of nothing sends no selector of its own.
        let all = ShardScope::namespaces(&ShardRanges::full());
        let none = ShardScope::namespaces(&ShardRanges::new());
        assert_eq!((all.selector(), none.selector()), ("", ""));
        assert!(all.matches(&meta("x")) && !none.matches(&meta("x")));
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
