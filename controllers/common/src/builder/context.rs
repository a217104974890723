//! What a builder controller's reconcile gets beside its object ([`Context`]): the client, the
//! caches it registered, an event recorder, and one-call writes with the controller's name as
//! field manager.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use kcm_informer::{InformerObject, Lister};
use kube::Resource;
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::Request;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::event_recorder::{EventRecorder, EventType};
use crate::owner_index::CONTROLLER_UID_INDEX;
use crate::pod_util::controller_ref;

/// The caches a controller registered (its own type, the owned and the watched ones), by type.
pub(crate) type Listers = HashMap<TypeId, Box<dyn Any + Send + Sync>>;

/// What a reconcile works with, shared by every reconcile of one controller.
pub struct Context {
    name: &'static str,
    client: kube::Client,
    recorder: EventRecorder,
    listers: Listers,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.name)
            .field("caches", &self.listers.len())
            .finish_non_exhaustive()
    }
}

impl Context {
    pub(crate) fn new(
        name: &'static str,
        client: kube::Client,
        recorder: EventRecorder,
        listers: Listers,
    ) -> Self {
        Context {
            name,
            client,
            recorder,
            listers,
        }
    }

    /// The controller's name: its queue's, its events' source and its field manager.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The controller's client (under a manager: its own User-Agent, rate limiter and write
    /// fence).
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The controller's event recorder (source component: the controller's name).
    pub fn recorder(&self) -> &EventRecorder {
        &self.recorder
    }

    /// Records an event about `obj` (aggregated and rate limited as client-go's recorder).
    pub fn event<R: Resource<DynamicType = ()>>(
        &self,
        obj: &R,
        type_: EventType,
        reason: &str,
        message: impl Into<String>,
    ) {
        self.recorder
            .record(&obj.object_ref(&()), type_, reason, message);
    }

    /// The shared cache of `C`, when the controller registered it (its own type, an
    /// [`owns`](super::Builder::owns) or a [`watches`](super::Builder::watches) type);
    /// `None` for any other type.
    pub fn lister<C: InformerObject>(&self) -> Option<Lister<C>> {
        self.listers
            .get(&TypeId::of::<C>())
            .and_then(|l| l.downcast_ref::<Lister<C>>())
            .cloned()
    }

    /// The cached objects of an owned type `C` that `owner` controls (through the
    /// `controllerUID` index), in name order; empty when `C` is not an owned type.
    pub fn owned<C: InformerObject, R: Resource>(&self, owner: &R) -> Vec<Arc<C>> {
        let (Some(lister), Some(uid)) = (self.lister::<C>(), owner.meta().uid.as_deref()) else {
            return Vec::new();
        };
        let namespace = owner.meta().namespace.as_deref().unwrap_or_default();
        let mut owned = lister
            .store()
            .by_index(CONTROLLER_UID_INDEX, uid)
            .unwrap_or_default();
        owned.retain(|o| {
            controller_ref(o.meta()).is_some_and(|r| r.uid == uid)
                && (namespace.is_empty() || o.meta().namespace.as_deref() == Some(namespace))
        });
        owned.sort_unstable_by(|a, b| a.meta().name.cmp(&b.meta().name));
        owned
    }

    /// Server-side apply of `obj` (its apiVersion, kind, name, namespace and the fields it
    /// sets) with the controller's name as field manager, forcing conflicts: the fields this
    /// controller applied before and leaves out now are removed.
    pub async fn apply<C>(&self, obj: &C) -> Result<C, kube::Error>
    where
        C: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + fmt::Debug,
    {
        let params = PatchParams::apply(self.name).force();
        let request = self.request::<C>(obj)?;
        let name = obj.meta().name.as_deref().unwrap_or_default();
        let req = request
            .patch(name, &params, &Patch::Apply(obj))
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(req).await
    }

    /// Server-side apply of `status` as `obj`'s status subresource, with the controller's
    /// name as field manager.
    pub async fn apply_status<R, S>(&self, obj: &R, status: &S) -> Result<R, kube::Error>
    where
        R: Resource<DynamicType = ()> + DeserializeOwned + Clone + fmt::Debug,
        S: Serialize,
    {
        let body = status_body(obj, status)?;
        let params = PatchParams::apply(self.name).force();
        self.patch_status_with(obj, &params, &Patch::Apply(body))
            .await
    }

    /// A merge patch of `status` on `obj`'s status subresource, for a server without
    /// server-side apply ([`apply_status`](Self::apply_status) otherwise).
    pub async fn patch_status<R, S>(&self, obj: &R, status: &S) -> Result<R, kube::Error>
    where
        R: Resource<DynamicType = ()> + DeserializeOwned + Clone + fmt::Debug,
        S: Serialize,
    {
        let body = status_body(obj, status)?;
        let params = PatchParams {
            field_manager: Some(self.name.to_string()),
            ..PatchParams::default()
        };
        self.patch_status_with(obj, &params, &Patch::Merge(body))
            .await
    }

    /// Creates `desired` when the cache of `C` has no object of its name, else merges it into
    /// the cached one (a merge patch guarded by the cached resourceVersion, so a stale cache
    /// conflicts and the reconcile is retried) unless the cached object already has every
    /// field `desired` sets. Fields `desired` leaves out are kept; set a map entry to `null` to
    /// drop it, or use [`apply`](Self::apply) where the server has server-side apply.
    pub async fn create_or_patch<C>(&self, desired: &C) -> Result<Arc<C>, kube::Error>
    where
        C: InformerObject + Serialize,
    {
        let meta = desired.meta();
        let name = meta.name.as_deref().unwrap_or_default();
        let namespace = meta.namespace.as_deref().unwrap_or_default();
        let cached = self.lister::<C>().and_then(|l| l.get(namespace, name));
        let request = self.request::<C>(desired)?;
        let body = serde_json::to_value(desired).map_err(kube::Error::SerdeError)?;
        let Some(cached) = cached else {
            let params = PostParams {
                field_manager: Some(self.name.to_string()),
                ..PostParams::default()
            };
            let data = serde_json::to_vec(&body).map_err(kube::Error::SerdeError)?;
            let req = request
                .create(&params, data)
                .map_err(kube::Error::BuildRequest)?;
            return self.client.request::<C>(req).await.map(Arc::new);
        };
        let current = serde_json::to_value(cached.as_ref()).map_err(kube::Error::SerdeError)?;
        if super::patch::contains(&current, &body) {
            return Ok(cached);
        }
        let mut patch = body;
        if let Some(meta) = patch.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            meta.insert(
                "resourceVersion".into(),
                cached.meta().resource_version.clone().into(),
            );
        }
        let params = PatchParams {
            field_manager: Some(self.name.to_string()),
            ..PatchParams::default()
        };
        let req = request
            .patch(name, &params, &Patch::Merge(patch))
            .map_err(kube::Error::BuildRequest)?;
        self.client.request::<C>(req).await.map(Arc::new)
    }

    async fn patch_status_with<R>(
        &self,
        obj: &R,
        params: &PatchParams,
        patch: &Patch<serde_json::Value>,
    ) -> Result<R, kube::Error>
    where
        R: Resource<DynamicType = ()> + DeserializeOwned + Clone + fmt::Debug,
    {
        let name = obj.meta().name.as_deref().unwrap_or_default();
        let req = self
            .request::<R>(obj)?
            .patch_subresource("status", name, params, patch)
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(req).await
    }

    /// Requests for `obj`'s collection (its namespace's, for a namespaced type).
    pub(crate) fn request<R: Resource<DynamicType = ()>>(
        &self,
        obj: &R,
    ) -> Result<Request, kube::Error> {
        let namespace = obj.meta().namespace.as_deref().filter(|ns| !ns.is_empty());
        if namespace.is_none() && super::triggers::is_namespaced::<R>() {
            return Err(kube::Error::BuildRequest(
                kube::core::request::Error::Validation(format!(
                    "{} {:?} has no namespace",
                    R::kind(&()),
                    obj.meta().name
                )),
            ));
        }
        Ok(Request::new(R::url_path(&(), namespace)))
    }
}

/// `{apiVersion, kind, metadata: {name}, status}` of `obj`.
fn status_body<R: Resource<DynamicType = ()>, S: Serialize>(
    obj: &R,
    status: &S,
) -> Result<serde_json::Value, kube::Error> {
    Ok(serde_json::json!({
        "apiVersion": R::api_version(&()),
        "kind": R::kind(&()),
        "metadata": {"name": obj.meta().name},
        "status": serde_json::to_value(status).map_err(kube::Error::SerdeError)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MockApi, MockResponse};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kcm_store::Store;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// A query's parameters, sorted (kube's queries start with `&`).
    fn params(query: &str) -> Vec<&str> {
        let mut params: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
        params.sort_unstable();
        params
    }

    fn cm(data: &[(&str, &str)]) -> ConfigMap {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "prod"},
            "data": data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
        }))
        .expect("a ConfigMap")
    }

    /// A context whose client answers every request with the request's body, and whose
    /// ConfigMap cache holds `cached`.
    fn context(cached: Option<ConfigMap>) -> (Context, MockApi) {
        let api = MockApi::new(|req| {
            let mut body = req.body.clone();
            if body.get("kind").is_none() {
                body =
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}});
            }
            MockResponse::json(200, body)
        });
        let (recorder, _events) = EventRecorder::channel("greeting-controller", 8);
        let store = Store::new();
        if let Some(cm) = cached {
            store.add(Arc::new(cm));
        }
        let mut listers = Listers::new();
        listers.insert(TypeId::of::<ConfigMap>(), Box::new(Lister::new(store)));
        let ctx = Context::new("greeting-controller", api.client(), recorder, listers);
        (ctx, api)
    }

    #[tokio::test]
    async fn apply_is_server_side_apply_under_the_controllers_name() {
        let (ctx, api) = context(None);
        ctx.apply(&cm(&[("a", "1")])).await.expect("applied");
        let status = json!({"ready": true});
        ctx.apply_status(&cm(&[]), &status).await.expect("applied");
        let [apply, apply_status] = api.requests().try_into().expect("two requests");
        assert_eq!(
            (apply.method.as_str(), apply.path.as_str()),
            ("PATCH", "/api/v1/namespaces/prod/configmaps/web")
        );
        assert_eq!(
            params(&apply.query),
            ["fieldManager=greeting-controller", "force=true"]
        );
        assert_eq!(
            apply.content_type.as_deref(),
            Some("application/apply-patch+yaml")
        );
        assert_eq!(apply.body["data"], json!({"a": "1"}));
        assert_eq!(
            apply_status.path,
            "/api/v1/namespaces/prod/configmaps/web/status"
        );
        assert_eq!(
            apply_status.body,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "status": {"ready": true}})
        );
    }

    #[tokio::test]
    async fn create_or_patch_writes_only_what_differs_from_the_cache() {
        // (case, cached, desired, the request: method and body)
        let mut cached = cm(&[("a", "1"), ("b", "2")]);
        cached.metadata.resource_version = Some("7".into());
        type Case<'a> = (
            &'a str,
            Option<ConfigMap>,
            ConfigMap,
            Option<(&'a str, serde_json::Value)>,
        );
        let cases: Vec<Case> = vec![
            (
                "absent: created",
                None,
                cm(&[("a", "1")]),
                Some(("POST", json!({"a": "1"}))),
            ),
            (
                "the same: no write",
                Some(cached.clone()),
                cm(&[("a", "1")]),
                None,
            ),
            (
                "changed: patched with the cached version",
                Some(cached),
                cm(&[("a", "2")]),
                Some(("PATCH", json!({"a": "2"}))),
            ),
        ];
        for (name, cached, desired, want) in cases {
            let (ctx, api) = context(cached);
            ctx.create_or_patch(&desired).await.expect(name);
            let requests = api.requests();
            match want {
                None => assert!(requests.is_empty(), "{name}: {requests:?}"),
                Some((method, data)) => {
                    let [req] = requests.try_into().expect("one request");
                    assert_eq!(req.method, method, "{name}");
                    assert_eq!(req.body["data"], data, "{name}");
                    assert_eq!(
                        params(&req.query),
                        ["fieldManager=greeting-controller"],
                        "{name}"
                    );
                    if method == "PATCH" {
                        assert_eq!(req.path, "/api/v1/namespaces/prod/configmaps/web", "{name}");
                        assert_eq!(req.body["metadata"]["resourceVersion"], "7", "{name}");
                        assert_eq!(
                            req.content_type.as_deref(),
                            Some("application/merge-patch+json"),
                            "{name}"
                        );
                    } else {
                        assert_eq!(req.path, "/api/v1/namespaces/prod/configmaps", "{name}");
                    }
                }
            }
        }
    }

    #[tokio::test]
    async fn owned_reads_the_controller_index() {
        let (ctx, _api) = context(None);
        let store = Store::new();
        store
            .add_indexer(
                CONTROLLER_UID_INDEX,
                super::super::triggers::controller_uid_index(),
            )
            .expect("a new index");
        let owned = |name: &str, uid: &str, controller: bool| {
            let mut cm = cm(&[]);
            cm.metadata.name = Some(name.into());
            cm.metadata.owner_references = Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    uid: uid.into(),
                    controller: Some(controller),
                    ..Default::default()
                },
            ]);
            Arc::new(cm)
        };
        store.add(owned("b", "uid-1", true));
        store.add(owned("a", "uid-1", true));
        store.add(owned("not-controller", "uid-1", false));
        store.add(owned("other", "uid-2", true));
        let mut listers = Listers::new();
        listers.insert(TypeId::of::<ConfigMap>(), Box::new(Lister::new(store)));
        let ctx = Context { listers, ..ctx };
        let mut owner = cm(&[]);
        owner.metadata.uid = Some("uid-1".into());
        let names: Vec<_> = ctx
            .owned::<ConfigMap, _>(&owner)
            .iter()
            .map(|c| c.metadata.name.clone().unwrap_or_default())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert!(
            ctx.owned::<k8s_openapi::api::core::v1::Secret, _>(&owner)
                .is_empty()
        );
    }
}
