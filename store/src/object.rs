//! The [`Object`] trait: what the store needs to know about a stored value.

use std::collections::BTreeMap;

use crate::key::ObjectKey;

/// A storable object: anything with a name, an optional namespace and optional labels.
///
/// With the `k8s` feature, every `kube::Resource` implements this trait automatically: every
/// k8s-openapi resource, and every custom resource of kube's `#[derive(CustomResource)]`.
///
/// ```
/// use std::collections::BTreeMap;
/// use kcm_store::{Object, ObjectKey};
///
/// struct Thing { ns: String, name: String, labels: BTreeMap<String, String> }
/// impl Object for Thing {
///     fn name(&self) -> &str { &self.name }
///     fn namespace(&self) -> Option<&str> { Some(&self.ns) }
///     fn labels(&self) -> Option<&BTreeMap<String, String>> { Some(&self.labels) }
/// }
/// let t = Thing { ns: "a".into(), name: "b".into(), labels: BTreeMap::new() };
/// assert_eq!(t.key(), ObjectKey::new("a", "b"));
/// ```
pub trait Object: Send + Sync + 'static {
    /// The object's name (`metadata.name`).
    fn name(&self) -> &str;
    /// The object's namespace (`metadata.namespace`); `None` or `Some("")` = cluster-scoped.
    fn namespace(&self) -> Option<&str>;
    /// The object's labels (`metadata.labels`).
    fn labels(&self) -> Option<&BTreeMap<String, String>>;
    /// The store key (client-go `MetaNamespaceKeyFunc`): `namespace/name`.
    ///
    /// [`Store`](crate::Store) files and finds objects by [`namespace`](Self::namespace) and
    /// [`name`](Self::name) directly (without building this key), so an override must return
    /// the same key.
    fn key(&self) -> ObjectKey {
        ObjectKey::new(self.namespace().unwrap_or_default(), self.name())
    }
}
