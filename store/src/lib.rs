//! Thread-safe indexer store, object keys, indexers, listers and label selectors — client-go's
//! `tools/cache` `ThreadSafeStore`/`Indexer`, listers and apimachinery's `labels`, in Rust.
//!
//! This crate depends on neither kube nor k8s-openapi by default. With the `k8s` feature every
//! `kube::Resource` (k8s-openapi's resources, kube's `#[derive(CustomResource)]` types)
//! implements [`Object`], and [`Selector`] can be built from a
//! `metav1.LabelSelector`.
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::sync::Arc;
//! use kcm_store::{Lister, Object, ObjectKey, Selector, Store};
//!
//! struct Pod { ns: String, name: String, labels: BTreeMap<String, String> }
//! impl Object for Pod {
//!     fn name(&self) -> &str { &self.name }
//!     fn namespace(&self) -> Option<&str> { Some(&self.ns) }
//!     fn labels(&self) -> Option<&BTreeMap<String, String>> { Some(&self.labels) }
//! }
//!
//! let store: Store<Pod> = Store::new(); // has the "namespace" index
//! store.add(Arc::new(Pod {
//!     ns: "default".into(),
//!     name: "web-1".into(),
//!     labels: BTreeMap::from([("app".into(), "web".into())]),
//! }));
//! assert!(store.get_by_key(&ObjectKey::parse("default/web-1").unwrap()).is_some());
//!
//! let lister = Lister::new(store.clone());
//! let sel = Selector::parse("app in (web, api)").unwrap();
//! assert_eq!(lister.namespaced("default").list(&sel).len(), 1);
//! ```

/// Compiles and runs the README example as a doctest (needs the `k8s` feature).
#[cfg(all(doctest, feature = "k8s"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod deferred_drop;
mod index;
mod indexer;
mod inner;
#[cfg(feature = "k8s")]
mod k8s;
mod key;
mod lending;
mod lister;
mod object;
pub mod selector;
mod store;
mod table;

pub use index::{IndexFn, NAMESPACE_INDEX, index_fn, namespace_index_fn};
pub use indexer::StoreError;
pub use key::{KeyError, ObjectKey};
pub use lister::{Lister, NamespaceLister};
pub use object::Object;
pub use selector::{Selector, SelectorError};
pub use store::{Store, TxOp};
