//! The generated namespaces of the equivalence tests: objects with assorted controllers,
//! labels and deletion, a history of changes, and the two caches built from it.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;
use kcm_controller::PodView;
use kcm_controller::owner_index::Dependent;
use kcm_store::{IndexFn, Lister, ObjectKey, Store};
use proptest::prelude::*;

pub(crate) const NS: &str = "a";
pub(crate) const OTHER_NS: &str = "b";
pub(crate) const OWNER_UID: &str = "uid-owner";
pub(crate) const OWNER_NAME: &str = "web";

/// Who controls a generated object.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ctrl {
    /// Nobody: an orphan.
    Orphan,
    /// The owner (its kind, name and UID).
    Owner,
    /// The owner's UID under another kind and name.
    OwnerUidOtherRef,
    /// Another live controller.
    Foreign,
    /// A deleted owner of the same name (an old UID).
    DeletedOwner,
    /// A reference to the owner without `controller: true` (still an orphan).
    NonController,
}

pub(crate) fn ctrl() -> impl Strategy<Value = Ctrl> {
    prop_oneof![
        3 => Just(Ctrl::Orphan),
        3 => Just(Ctrl::Owner),
        1 => Just(Ctrl::OwnerUidOtherRef),
        2 => Just(Ctrl::Foreign),
        1 => Just(Ctrl::DeletedOwner),
        1 => Just(Ctrl::NonController),
    ]
}

/// Label sets the generated selectors match or not.
pub(crate) const LABELS: &[&[(&str, &str)]] = &[
    &[],
    &[("app", "web")],
    &[("app", "db")],
    &[("app", "web"), ("tier", "x")],
    &[("app", "web"), ("pod-template-hash", "h1")],
    &[("app", "web"), ("pod-template-hash", "h2")],
    &[("app", "db"), ("pod-template-hash", "h1")],
    &[("pod-template-hash", "h1")],
];

/// One generated object: namespace, name, controller, labels, being deleted.
#[derive(Debug, Clone)]
pub(crate) struct Obj {
    pub(crate) other_ns: bool,
    pub(crate) name: u8,
    pub(crate) ctrl: Ctrl,
    pub(crate) labels: usize,
    pub(crate) deleting: bool,
}

pub(crate) fn obj() -> impl Strategy<Value = Obj> {
    (
        prop::bool::weighted(0.2),
        0u8..16,
        ctrl(),
        0..LABELS.len(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(other_ns, name, ctrl, labels, deleting)| Obj {
            other_ns,
            name,
            ctrl,
            labels,
            deleting,
        })
}

/// A change after the objects were added: a new controller and labels, or a deletion.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    Update(usize, Ctrl, usize),
    Delete(usize),
}

pub(crate) fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (any::<prop::sample::Index>(), ctrl(), 0..LABELS.len())
            .prop_map(|(i, c, l)| Change::Update(i.index(usize::MAX), c, l)),
        1 => any::<prop::sample::Index>().prop_map(|i| Change::Delete(i.index(usize::MAX))),
    ]
}

pub(crate) fn labels(i: usize) -> Option<BTreeMap<String, String>> {
    let set = LABELS[i % LABELS.len()];
    (!set.is_empty()).then(|| {
        set.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    })
}

pub(crate) fn owner_ref(kind: &str, name: &str, uid: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(controller),
        block_owner_deletion: Some(true),
    }
}

/// The metadata of `o` for an owner of kind `owner_kind`.
pub(crate) fn metadata(o: &Obj, owner_kind: &str) -> ObjectMeta {
    let namespace = if o.other_ns { OTHER_NS } else { NS };
    let refs = match o.ctrl {
        Ctrl::Orphan => None,
        Ctrl::Owner => Some(owner_ref(owner_kind, OWNER_NAME, OWNER_UID, true)),
        Ctrl::OwnerUidOtherRef => Some(owner_ref("StatefulSet", "other", OWNER_UID, true)),
        Ctrl::Foreign => Some(owner_ref(owner_kind, "db", "uid-foreign", true)),
        Ctrl::DeletedOwner => Some(owner_ref(owner_kind, OWNER_NAME, "uid-deleted", true)),
        Ctrl::NonController => Some(owner_ref(owner_kind, OWNER_NAME, OWNER_UID, false)),
    };
    ObjectMeta {
        namespace: Some(namespace.into()),
        name: Some(format!("obj-{:02}", o.name)),
        uid: Some(format!("{namespace}-{}", o.name)),
        labels: labels(o.labels),
        owner_references: refs.map(|r| vec![r]),
        deletion_timestamp: o.deleting.then_some(Time(Timestamp::UNIX_EPOCH)),
        ..Default::default()
    }
}

/// Two stores with the same history: one with `indexes`, one without any.
pub(crate) fn stores<T: Dependent>(
    objs: Vec<T>,
    changes: &[Change],
    update: impl Fn(&T, Ctrl, usize) -> T,
    indexes: &[(&str, IndexFn<T>)],
) -> (Lister<T>, Lister<T>) {
    let indexed: Store<T> = Store::new();
    for (name, f) in indexes {
        indexed.add_indexer(name, f.clone()).expect("index");
    }
    let plain: Store<T> = Store::new();
    let objs: Vec<Arc<T>> = objs.into_iter().map(Arc::new).collect();
    for o in &objs {
        indexed.add(o.clone());
        plain.add(o.clone());
    }
    for c in changes {
        if objs.is_empty() {
            break;
        }
        match *c {
            Change::Update(i, ctrl, labels) => {
                let new = Arc::new(update(&objs[i % objs.len()], ctrl, labels));
                indexed.update(new.clone());
                plain.update(new);
            }
            Change::Delete(i) => {
                let key = ObjectKey::from_meta(objs[i % objs.len()].metadata());
                indexed.delete(&key);
                plain.delete(&key);
            }
        }
    }
    (Lister::new(indexed), Lister::new(plain))
}

pub(crate) fn names<T: Dependent>(objs: &[Arc<T>]) -> Vec<String> {
    objs.iter()
        .map(|o| ObjectKey::from_meta(o.metadata()).to_string())
        .collect()
}

pub(crate) fn by_name<T: Dependent>(mut objs: Vec<Arc<T>>) -> Vec<Arc<T>> {
    objs.sort_by(|a, b| a.metadata().name.cmp(&b.metadata().name));
    objs
}

pub(crate) fn replica_set(o: &Obj) -> ReplicaSet {
    ReplicaSet {
        metadata: metadata(o, "Deployment"),
        ..Default::default()
    }
}

pub(crate) fn pod(o: &Obj) -> PodView {
    PodView {
        metadata: metadata(o, "ReplicaSet"),
        ..Default::default()
    }
}

/// A copy of `meta` with the controller and labels of a change.
pub(crate) fn changed(
    meta: &ObjectMeta,
    ctrl: Ctrl,
    labels: usize,
    owner_kind: &str,
) -> ObjectMeta {
    let o = Obj {
        other_ns: meta.namespace.as_deref() == Some(OTHER_NS),
        name: 0,
        ctrl,
        labels,
        deleting: meta.deletion_timestamp.is_some(),
    };
    ObjectMeta {
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        ..metadata(&o, owner_kind)
    }
}
