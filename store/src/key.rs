//! Object keys: the `namespace/name` identity of a stored object.
//!
//! Mirrors client-go's `MetaNamespaceKeyFunc` (string form) and `SplitMetaNamespaceKey`
//! (parsing), both in `tools/cache/store.go`.

use std::fmt;

/// Error returned by [`ObjectKey::parse`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The key had more than one `/` (upstream: `unexpected key format: "a/b/c"`).
    #[error("unexpected key format: {0:?}")]
    UnexpectedFormat(String),
}

/// The identity of a stored object: namespace and name.
///
/// The string form (via [`Display`](fmt::Display)) is `namespace/name`, or just `name` for
/// cluster-scoped objects (empty namespace), exactly like client-go's `MetaNamespaceKeyFunc`.
///
/// ```
/// use kcm_store::ObjectKey;
/// let k = ObjectKey::new("default", "web-0");
/// assert_eq!(k.to_string(), "default/web-0");
/// assert_eq!(ObjectKey::cluster("node-1").to_string(), "node-1");
/// assert_eq!(ObjectKey::parse("default/web-0").unwrap(), k);
/// assert!(ObjectKey::parse("a/b/c").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ObjectKey {
    /// Namespace; `""` for cluster-scoped objects.
    pub namespace: String,
    /// Object name.
    pub name: String,
}

impl ObjectKey {
    /// A key for a namespaced object (an empty `ns` makes it cluster-scoped).
    pub fn new(ns: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectKey {
            namespace: ns.into(),
            name: name.into(),
        }
    }

    /// A key for a cluster-scoped object.
    pub fn cluster(name: impl Into<String>) -> Self {
        ObjectKey {
            namespace: String::new(),
            name: name.into(),
        }
    }

    /// Parses a `namespace/name` or `name` key, like client-go's `SplitMetaNamespaceKey`:
    /// one part → cluster-scoped name, two parts → namespace and name (either may be empty,
    /// as upstream), more → [`KeyError::UnexpectedFormat`].
    pub fn parse(key: &str) -> Result<ObjectKey, KeyError> {
        let mut parts = key.split('/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(name), None, _) => Ok(ObjectKey::cluster(name)),
            (Some(ns), Some(name), None) => Ok(ObjectKey::new(ns, name)),
            _ => Err(KeyError::UnexpectedFormat(key.to_string())),
        }
    }

    /// True when the namespace is empty.
    pub fn is_cluster_scoped(&self) -> bool {
        self.namespace.is_empty()
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

impl std::str::FromStr for ObjectKey {
    type Err = KeyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ObjectKey::parse(s)
    }
}
