//! What puts a key in a builder controller's queue: changes of its own objects, of the objects
//! it owns (mapped to their controller's key, as upstream's `resolveControllerRef` does:
//! kind, group, and the UID of the cached owner), and of watched objects (mapped by a
//! function of the user's).

use std::marker::PhantomData;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_informer::{DeletedObject, InformerObject, Lister, ObjectKey, ResourceEventHandler};
use kcm_store::IndexFn;
use kcm_workqueue::RateLimitingQueue;

use crate::owner_index::orphan_index_key;
use crate::pod_util::controller_ref;

/// Maps a watched object to the keys of the objects to reconcile.
pub(crate) type MapFn<X> = Arc<dyn Fn(&X) -> Vec<ObjectKey> + Send + Sync>;

/// The owner of a controller reference, as a builder controller's key and UID, when the
/// reference points at a `kind` of `group`. A namespaced owner is in its dependent's namespace
/// (owner references never cross namespaces); a cluster-scoped one has an empty namespace.
pub(crate) fn owner_key(
    meta: &ObjectMeta,
    kind: &str,
    group: &str,
    owner_namespaced: bool,
) -> Option<(ObjectKey, String)> {
    let r = controller_ref(meta)?;
    let ref_group = r.api_version.split_once('/').map_or("", |(g, _)| g);
    if r.kind != kind || ref_group != group {
        return None;
    }
    let namespace = if owner_namespaced {
        meta.namespace.as_deref().unwrap_or_default()
    } else {
        ""
    };
    Some((ObjectKey::new(namespace, r.name.clone()), r.uid.clone()))
}

/// Whether `K` is namespaced (its URL has a namespace segment when given one).
pub(crate) fn is_namespaced<K: kube::Resource<DynamicType = ()>>() -> bool {
    K::url_path(&(), Some("ns")).contains("/namespaces/ns/")
}

/// The `controllerUID` index of [`owner_index`](crate::owner_index) for any resource type
/// (custom types included): the controller's UID, or the namespace's orphan key.
pub(crate) fn controller_uid_index<C: kube::Resource>() -> IndexFn<C> {
    Arc::new(|obj: &C| {
        let meta = obj.meta();
        match controller_ref(meta) {
            Some(r) => vec![r.uid.clone()],
            None => vec![orphan_index_key(
                meta.namespace.as_deref().unwrap_or_default(),
            )],
        }
    })
}

/// Enqueues the key of every added, changed or deleted object of the controller's own type.
pub(crate) struct OwnHandler(pub(crate) RateLimitingQueue<ObjectKey>);

impl<K: InformerObject> ResourceEventHandler<K> for OwnHandler {
    fn on_add(&self, obj: &Arc<K>, _: bool) {
        self.0.add(obj.key());
    }
    fn on_update(&self, _: &Arc<K>, new: &Arc<K>) {
        self.0.add(new.key());
    }
    fn on_delete(&self, obj: DeletedObject<K>) {
        self.0.add(obj.object().key());
    }
}

/// Enqueues the controller (a cached `K` of the reference's UID) of an owned object.
pub(crate) struct OwnedHandler<K: InformerObject> {
    pub(crate) queue: RateLimitingQueue<ObjectKey>,
    pub(crate) owners: Lister<K>,
}

impl<K: InformerObject> OwnedHandler<K> {
    fn enqueue_owner(&self, meta: &ObjectMeta) {
        let (kind, group) = (K::kind(&()), K::group(&()));
        let Some((key, uid)) = owner_key(meta, &kind, &group, is_namespaced::<K>()) else {
            return;
        };
        match self.owners.get(&key.namespace, &key.name) {
            Some(owner) if owner.meta().uid.as_deref() == Some(uid.as_str()) => self.queue.add(key),
            _ => tracing::trace!(owner = %key, "ignoring an object whose controller is not cached"),
        }
    }
}

impl<K: InformerObject, C: InformerObject> ResourceEventHandler<C> for OwnedHandler<K> {
    fn on_add(&self, obj: &Arc<C>, _: bool) {
        self.enqueue_owner(obj.meta());
    }
    fn on_update(&self, old: &Arc<C>, new: &Arc<C>) {
        // A resync delivers the same version again: nothing changed.
        if old.meta().resource_version == new.meta().resource_version {
            return;
        }
        // A changed controller reference: both the old and the new controller hear of it.
        if controller_ref(old.meta()) != controller_ref(new.meta()) {
            self.enqueue_owner(old.meta());
        }
        self.enqueue_owner(new.meta());
    }
    fn on_delete(&self, obj: DeletedObject<C>) {
        self.enqueue_owner(obj.object().meta());
    }
}

/// Enqueues what the user's function maps a watched object to.
pub(crate) struct WatchHandler<X> {
    pub(crate) queue: RateLimitingQueue<ObjectKey>,
    pub(crate) map: MapFn<X>,
    pub(crate) _type: PhantomData<fn(X)>,
}

impl<X> WatchHandler<X> {
    fn enqueue(&self, obj: &X) {
        for key in (self.map)(obj) {
            self.queue.add(key);
        }
    }
}

impl<X: InformerObject> ResourceEventHandler<X> for WatchHandler<X> {
    fn on_add(&self, obj: &Arc<X>, _: bool) {
        self.enqueue(obj);
    }
    fn on_update(&self, old: &Arc<X>, new: &Arc<X>) {
        if old.meta().resource_version == new.meta().resource_version {
            return;
        }
        self.enqueue(old);
        self.enqueue(new);
    }
    fn on_delete(&self, obj: DeletedObject<X>) {
        self.enqueue(obj.object());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn meta(refs: &[(&str, &str, &str, bool)]) -> ObjectMeta {
        ObjectMeta {
            namespace: Some("prod".into()),
            name: Some("web-config".into()),
            owner_references: Some(
                refs.iter()
                    .map(|(api_version, kind, name, controller)| OwnerReference {
                        api_version: api_version.to_string(),
                        kind: kind.to_string(),
                        name: name.to_string(),
                        uid: format!("uid-{name}"),
                        controller: Some(*controller),
                        ..OwnerReference::default()
                    })
                    .collect(),
            ),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn owner_keys_follow_the_controller_reference() {
        let web = Some((ObjectKey::new("prod", "web"), "uid-web".to_string()));
        // (case, owner references, owner namespaced, the key)
        type Case<'a> = (
            &'a str,
            Vec<(&'a str, &'a str, &'a str, bool)>,
            bool,
            Option<(ObjectKey, String)>,
        );
        let cases: Vec<Case> = vec![
            (
                "controller of the kind and group",
                vec![("example.com/v1", "Greeting", "web", true)],
                true,
                web.clone(),
            ),
            (
                "another version of the group",
                vec![("example.com/v2", "Greeting", "web", true)],
                true,
                web.clone(),
            ),
            (
                "an owner that is not the controller",
                vec![("example.com/v1", "Greeting", "web", false)],
                true,
                None,
            ),
            (
                "the controller among other owners",
                vec![
                    ("v1", "ConfigMap", "a", false),
                    ("example.com/v1", "Greeting", "web", true),
                ],
                true,
                web,
            ),
            (
                "another kind",
                vec![("example.com/v1", "Other", "web", true)],
                true,
                None,
            ),
            (
                "another group",
                vec![("example.org/v1", "Greeting", "web", true)],
                true,
                None,
            ),
            ("no references", vec![], true, None),
            (
                "a cluster-scoped owner",
                vec![("example.com/v1", "Greeting", "web", true)],
                false,
                Some((ObjectKey::new("", "web"), "uid-web".to_string())),
            ),
        ];
        for (name, refs, namespaced, want) in cases {
            let got = owner_key(&meta(&refs), "Greeting", "example.com", namespaced);
            assert_eq!(got, want, "{name}");
        }
        let core = meta(&[("v1", "Namespace", "prod", true)]);
        assert_eq!(
            owner_key(&core, "Namespace", "", false).map(|(k, _)| k),
            Some(ObjectKey::new("", "prod")),
            "the core group"
        );
    }

    #[test]
    fn the_index_puts_orphans_apart_per_namespace() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let index = controller_uid_index::<ConfigMap>();
        let owned = ConfigMap {
            metadata: meta(&[("example.com/v1", "Greeting", "web", true)]),
            ..ConfigMap::default()
        };
        assert_eq!(index(&owned), ["uid-web"]);
        let orphan = ConfigMap {
            metadata: meta(&[("example.com/v1", "Greeting", "web", false)]),
            ..ConfigMap::default()
        };
        assert_eq!(index(&orphan), [orphan_index_key("prod")]);
    }
}
