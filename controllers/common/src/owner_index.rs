//! The cache index by controller, for pods and ReplicaSets alike (upstream `PodControllerIndex`
//! with `FilterPodsByOwner`, and the ReplicaSet controller's `controllerUID` index): a sync reads
//! the objects its owner controls, plus the orphans of its namespace when it may adopt them,
//! instead of every object of the namespace.
//!
//! The index value of an object is its controller's UID, or an orphan key per namespace
//! ([`orphan_index_key`]). Three reads use it, each with the same answer as a namespace-wide
//! list when the store has no such index (the fallback, and the reference of the tests):
//!
//! * [`filter_by_owner`] (`FilterPodsByOwner`): what one owner controls (its kind, name and
//!   UID, in its namespace), then the namespace's orphans;
//! * [`claim_candidates`] (`getReplicaSetsForDeployment`'s list): everything a claim pass of
//!   one owner can keep, release or adopt;
//! * [`controlled_by`] (`getReplicaSetsWithSameController`): what one UID controls, in every
//!   namespace.
//!
//! Lists come out in name order, so a sync does the same writes in the same order whichever
//! path served it (upstream's order is that of a Go map).
//!
//! # Two reads, one answer
//!
//! The orphans and the owned objects are two buckets, read one after the other. The orphans
//! are read first: an object the owner adopted (its update landing between the reads) is then
//! in both and kept once, with its owned version, where the opposite order (upstream's
//! `FilterPodsByOwner`) misses it. An object that leaves the owner in between is missed, as if
//! read after the change; that change (a release, or someone else editing the references)
//! requeues the owner, whose next sync sees it.
//!
//! ```
//! use std::sync::Arc;
//! use k8s_openapi::api::apps::v1::ReplicaSet;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
//! use kcm_controller::owner_index::{CONTROLLER_UID_INDEX, claim_candidates, controller_uid_index_fn};
//! use kcm_store::{Lister, Store};
//!
//! let rs = |name: &str, controller: Option<&str>| {
//!     let mut rs = ReplicaSet::default();
//!     rs.metadata.namespace = Some("default".into());
//!     rs.metadata.name = Some(name.into());
//!     rs.metadata.owner_references = controller.map(|uid| vec![OwnerReference {
//!         uid: uid.into(),
//!         controller: Some(true),
//!         ..Default::default()
//!     }]);
//!     Arc::new(rs)
//! };
//! let store = Store::new();
//! store.add_indexer(CONTROLLER_UID_INDEX, controller_uid_index_fn()).unwrap();
//! store.add(rs("web-2", Some("deployment-uid")));
//! store.add(rs("web-1", Some("deployment-uid")));
//! store.add(rs("orphan", None));
//! store.add(rs("other", Some("other-uid")));
//!
//! let names: Vec<String> = claim_candidates(&Lister::new(store), "default", "deployment-uid")
//!     .iter()
//!     .map(|rs| rs.metadata.name.clone().unwrap_or_default())
//!     .collect();
//! assert_eq!(names, ["orphan", "web-1", "web-2"]);
//! ```

use std::fmt;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_store::{IndexFn, Lister, Object, Selector, Store};

use crate::pod_util::controller_ref;

/// Name of the index on the pod and ReplicaSet informers.
pub const CONTROLLER_UID_INDEX: &str = "controllerUID";

/// The index value of an orphan in `namespace` (cannot collide with a UID).
pub fn orphan_index_key(namespace: &str) -> String {
    format!("\0orphan/{namespace}")
}

/// Objects that carry owner references (pods, ReplicaSets).
pub trait Dependent: k8s_openapi::Metadata<Ty = ObjectMeta> + Send + Sync + 'static {}

impl<T: k8s_openapi::Metadata<Ty = ObjectMeta> + Send + Sync + 'static> Dependent for T {}

/// Indexes an object under its controller's UID, or as an orphan of its namespace.
pub fn controller_uid_index_fn<T: Dependent>() -> IndexFn<T> {
    Arc::new(|obj: &T| {
        let meta = obj.metadata();
        match controller_ref(meta) {
            Some(r) => vec![r.uid.clone()],
            None => vec![orphan_index_key(
                meta.namespace.as_deref().unwrap_or_default(),
            )],
        }
    })
}

/// Registers index `name` on a shared informer's `store` with `add` (the informer's
/// `add_indexer`), unless a controller sharing the informer already did. A failure is logged:
/// the reads of this module then list whole namespaces.
pub fn ensure_index<T: Object, E: fmt::Display>(
    store: &Store<T>,
    name: &str,
    f: IndexFn<T>,
    add: impl FnOnce(&str, IndexFn<T>) -> Result<(), E>,
) {
    if !store.has_index(name)
        && let Err(e) = add(name, f)
    {
        tracing::warn!(index = name, error = %e, "cache index unavailable; listing whole namespaces");
    }
}

/// The owner whose objects [`filter_by_owner`] reads.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// Kind of the owner (`ReplicaSet`).
    pub kind: &'a str,
    /// Namespace of the owner (its dependents are in the same one).
    pub namespace: &'a str,
    /// Name of the owner.
    pub name: &'a str,
    /// UID of the owner.
    pub uid: &'a str,
}

fn meta<T: Dependent>(obj: &Arc<T>) -> &ObjectMeta {
    (**obj).metadata()
}

fn name_of<T: Dependent>(obj: &Arc<T>) -> &str {
    meta(obj).name.as_deref().unwrap_or_default()
}

fn namespace_of<T: Dependent>(obj: &Arc<T>) -> &str {
    meta(obj).namespace.as_deref().unwrap_or_default()
}

fn is_orphan<T: Dependent>(obj: &Arc<T>) -> bool {
    controller_ref(meta(obj)).is_none()
}

/// Whether `obj`'s controller reference has `uid` (any kind and name) and it is in `namespace`.
fn controlled_in<T: Dependent>(obj: &Arc<T>, namespace: &str, uid: &str) -> bool {
    namespace_of(obj) == namespace && controller_ref(meta(obj)).is_some_and(|r| r.uid == uid)
}

/// Two buckets of the index: the objects with one controller UID (in any namespace), and the
/// orphans of one namespace.
struct Buckets<T> {
    owned: Vec<Arc<T>>,
    orphans: Vec<Arc<T>>,
}

/// The orphans of `namespace` then the objects with controller `uid`, read in that order
/// (see the module docs); `None` without the index.
fn read_buckets<T: Dependent>(
    lister: &Lister<T>,
    namespace: &str,
    uid: &str,
    with_orphans: bool,
) -> Option<Buckets<T>> {
    let store = lister.store();
    let orphans = if with_orphans {
        store
            .by_index(CONTROLLER_UID_INDEX, &orphan_index_key(namespace))
            .ok()?
    } else {
        Vec::new()
    };
    let owned = store.by_index(CONTROLLER_UID_INDEX, uid).ok()?;
    Some(Buckets { owned, orphans })
}

/// The namespace's objects, without the index.
fn namespace_list<T: Dependent>(lister: &Lister<T>, namespace: &str) -> Vec<Arc<T>> {
    lister.namespaced(namespace).list(&Selector::everything())
}

fn sort_by_name<T: Dependent>(objs: &mut [Arc<T>]) {
    objs.sort_unstable_by(|a, b| name_of(a).cmp(name_of(b)));
}

/// Drops from `orphans` what is also in `owned` (sorted by name): read in between an adoption.
fn drop_adopted<T: Dependent>(orphans: &mut Vec<Arc<T>>, owned: &[Arc<T>]) {
    if !owned.is_empty() {
        orphans.retain(|o| {
            owned
                .binary_search_by(|x| name_of(x).cmp(name_of(o)))
                .is_err()
        });
    }
}

/// `FilterPodsByOwner`: the objects whose controller reference is `owner` (its kind, name and
/// UID, in its namespace), then, with `include_orphans`, the namespace's objects without a
/// controller; each part in name order.
pub fn filter_by_owner<T: Dependent>(
    lister: &Lister<T>,
    owner: Owner<'_>,
    include_orphans: bool,
) -> Vec<Arc<T>> {
    let is_owner = |obj: &Arc<T>| {
        controlled_in(obj, owner.namespace, owner.uid)
            && controller_ref(meta(obj))
                .is_some_and(|r| r.kind == owner.kind && r.name == owner.name)
    };
    let (mut owned, mut orphans) =
        match read_buckets(lister, owner.namespace, owner.uid, include_orphans) {
            Some(Buckets { mut owned, orphans }) => {
                owned.retain(is_owner);
                (owned, orphans)
            }
            None => {
                let mut owned = namespace_list(lister, owner.namespace);
                let orphans = if include_orphans {
                    owned.iter().filter(|o| is_orphan(o)).cloned().collect()
                } else {
                    Vec::new()
                };
                owned.retain(is_owner);
                (owned, orphans)
            }
        };
    sort_by_name(&mut owned);
    sort_by_name(&mut orphans);
    drop_adopted(&mut orphans, &owned);
    owned.append(&mut orphans);
    owned
}

/// What a claim pass of the owner with `uid` in `namespace` decides on, in name order: the
/// namespace's objects whose controller reference has that UID (whatever its kind and name:
/// `ClaimObject` compares the UID only) and its orphans. Every other object of the namespace
/// has another controller, which `ClaimObject` ignores without a write, so claiming these gives
/// the claimed objects and the writes, in order, of claiming the namespace in name order.
pub fn claim_candidates<T: Dependent>(
    lister: &Lister<T>,
    namespace: &str,
    uid: &str,
) -> Vec<Arc<T>> {
    let mut candidates = match read_buckets(lister, namespace, uid, true) {
        Some(Buckets {
            mut owned,
            mut orphans,
        }) => {
            owned.retain(|o| controlled_in(o, namespace, uid));
            sort_by_name(&mut owned);
            drop_adopted(&mut orphans, &owned);
            owned.append(&mut orphans);
            owned
        }
        None => {
            let mut all = namespace_list(lister, namespace);
            all.retain(|o| is_orphan(o) || controlled_in(o, namespace, uid));
            all
        }
    };
    sort_by_name(&mut candidates);
    candidates
}

/// The objects whose controller reference has `uid`, in every namespace (upstream's
/// `ByIndex(controllerUIDIndex, uid)`), by namespace and name.
pub fn controlled_by<T: Dependent>(lister: &Lister<T>, uid: &str) -> Vec<Arc<T>> {
    let has_uid = |obj: &Arc<T>| controller_ref(meta(obj)).is_some_and(|r| r.uid == uid);
    let mut objs = match lister.store().by_index(CONTROLLER_UID_INDEX, uid) {
        Ok(objs) => objs,
        Err(_) => {
            let mut all = Vec::new();
            lister.store().for_each(|o| {
                if has_uid(o) {
                    all.push(o.clone());
                }
            });
            all
        }
    };
    objs.sort_unstable_by(|a, b| (namespace_of(a), name_of(a)).cmp(&(namespace_of(b), name_of(b))));
    objs
}

#[cfg(test)]
#[path = "owner_index_tests.rs"]
mod tests;
