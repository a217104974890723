//! Listers: read-only, selector-aware views of a [`Store`] (client-go generated listers,
//! `ListAll` / `ListAllByNamespace`).

use std::fmt;
use std::sync::Arc;

use crate::index::NAMESPACE_INDEX;
use crate::object::Object;
use crate::selector::Selector;
use crate::store::Store;

/// Lists and gets objects from a [`Store`], filtering by label [`Selector`].
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use kcm_store::{Lister, Object, Selector, Store};
///
/// struct Pod { ns: String, name: String, labels: BTreeMap<String, String> }
/// impl Object for Pod {
///     fn name(&self) -> &str { &self.name }
///     fn namespace(&self) -> Option<&str> { Some(&self.ns) }
///     fn labels(&self) -> Option<&BTreeMap<String, String>> { Some(&self.labels) }
/// }
/// let pod = |ns: &str, name: &str, app: &str| Arc::new(Pod {
///     ns: ns.into(), name: name.into(),
///     labels: BTreeMap::from([("app".to_string(), app.to_string())]),
/// });
///
/// let store = Store::new();
/// store.add(pod("default", "web-1", "web"));
/// store.add(pod("default", "db-1", "db"));
/// store.add(pod("prod", "web-2", "web"));
///
/// let lister = Lister::new(store);
/// let web = Selector::parse("app=web").unwrap();
/// assert_eq!(lister.list(&web).len(), 2);
/// assert_eq!(lister.namespaced("default").list(&web).len(), 1);
/// assert_eq!(lister.namespaced("default").list(&Selector::everything()).len(), 2);
/// assert!(lister.get("prod", "web-2").is_some());
/// assert!(lister.namespaced("prod").get("db-1").is_none());
/// ```
pub struct Lister<T> {
    store: Store<T>,
}

impl<T> Clone for Lister<T> {
    fn clone(&self) -> Self {
        Lister {
            store: self.store.clone(),
        }
    }
}

impl<T> fmt::Debug for Lister<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lister")
            .field("store", &self.store)
            .finish()
    }
}

impl<T: Object> Lister<T> {
    /// A lister over `store` (shares its contents).
    pub fn new(store: Store<T>) -> Self {
        Lister { store }
    }

    /// The underlying store.
    pub fn store(&self) -> &Store<T> {
        &self.store
    }

    /// Every object whose labels match `sel` (client-go `ListAll`).
    pub fn list(&self, sel: &Selector) -> Vec<Arc<T>> {
        if sel.is_everything() {
            return self.store.list();
        }
        let mut out = Vec::new();
        self.store.for_each(|o| {
            if sel.matches_opt(o.labels()) {
                out.push(o.clone());
            }
        });
        out
    }

    /// The object `namespace/name` (`name` alone when `namespace` is empty).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<T>> {
        self.store.get_by_name(namespace, name)
    }

    /// Runs `f` on the object `namespace/name`, lent rather than cloned (see
    /// [`Store::with`]); `None` if there is none.
    pub fn with<R>(&self, namespace: &str, name: &str, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.store.with_by_name(namespace, name, f)
    }

    /// A view of one namespace (`""` = all namespaces, as upstream `ListAllByNamespace`).
    pub fn namespaced(&self, ns: &str) -> NamespaceLister<T> {
        NamespaceLister {
            store: self.store.clone(),
            namespace: ns.to_string(),
        }
    }
}

/// A [`Lister`] restricted to one namespace.
pub struct NamespaceLister<T> {
    store: Store<T>,
    namespace: String,
}

impl<T> Clone for NamespaceLister<T> {
    fn clone(&self) -> Self {
        NamespaceLister {
            store: self.store.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

impl<T> fmt::Debug for NamespaceLister<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("namespace", &self.namespace)
            .field("store", &self.store)
            .finish()
    }
}

impl<T: Object> NamespaceLister<T> {
    /// The namespace this lister is restricted to.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Objects in the namespace whose labels match `sel` (client-go `ListAllByNamespace`):
    /// uses the [`NAMESPACE_INDEX`] index; without it, falls back to a filtered full scan.
    /// An empty namespace lists all namespaces.
    pub fn list(&self, sel: &Selector) -> Vec<Arc<T>> {
        if self.namespace.is_empty() {
            return Lister::new(self.store.clone()).list(sel);
        }
        let mut out = Vec::new();
        let mut push = |o: &Arc<T>| {
            if sel.matches_opt(o.labels()) {
                out.push(o.clone());
            }
        };
        if self
            .store
            .for_each_in_index(NAMESPACE_INDEX, &self.namespace, &mut push)
            .is_err()
        {
            let ns = self.namespace.as_str();
            self.store.for_each(|o| {
                if o.namespace().unwrap_or_default() == ns {
                    push(o);
                }
            });
        }
        out
    }

    /// The object `name` in this namespace.
    pub fn get(&self, name: &str) -> Option<Arc<T>> {
        self.store.get_by_name(&self.namespace, name)
    }

    /// Runs `f` on the object `name` of the namespace, lent rather than cloned (see
    /// [`Store::with`]); `None` if there is none.
    pub fn with<R>(&self, name: &str, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.store.with_by_name(&self.namespace, name, f)
    }
}
