//! Creating, deleting and patching pods on behalf of a controller (upstream
//! `PodControlInterface` / `RealPodControl` / `FakePodControl` in
//! `pkg/controller/controller_utils.go`), with the upstream events:
//!
//! | reason | type | message |
//! | --- | --- | --- |
//! | `SuccessfulCreate` | Normal | `Created pod: <name>` |
//! | `FailedCreate` | Warning | `Error creating: <err>` (not when the namespace is terminating) |
//! | `SuccessfulDelete` | Normal | `Deleted pod: <name>` |
//! | `FailedDelete` | Warning | `Error deleting: <err>` (not on NotFound) |

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{ObjectReference, Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, PostParams};
use parking_lot::Mutex;

use crate::api_write::log_write;
use crate::error::{ControlError, NAMESPACE_TERMINATING_CAUSE};
use crate::event_recorder::{EventRecorder, EventType};
use crate::names::is_dns1123_subdomain;
use crate::patch::strategic_merge_patch;

/// Event reason: a pod could not be created.
pub const FAILED_CREATE_POD_REASON: &str = "FailedCreate";
/// Event reason: a pod was created.
pub const SUCCESSFUL_CREATE_POD_REASON: &str = "SuccessfulCreate";
/// Event reason: a pod could not be deleted.
pub const FAILED_DELETE_POD_REASON: &str = "FailedDelete";
/// Event reason: a pod was deleted.
pub const SUCCESSFUL_DELETE_POD_REASON: &str = "SuccessfulDelete";

/// Creates, deletes and patches pods; implemented over the API
/// ([`KubePodControl`]) and as a recording fake ([`FakePodControl`]).
///
/// `owner` is the controller object (events are recorded against it and its
/// name prefixes generated pod names).
pub trait PodControl: Send + Sync {
    /// Creates one pod from `template`, controlled by `controller_ref`.
    fn create_pods<'a>(
        &'a self,
        namespace: &'a str,
        template: &'a PodTemplateSpec,
        owner: &'a ObjectReference,
        controller_ref: &'a OwnerReference,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        self.create_pods_with_generate_name(namespace, template, owner, controller_ref, None)
    }

    /// Like [`create_pods`](Self::create_pods) with an explicit `generateName`.
    fn create_pods_with_generate_name<'a>(
        &'a self,
        namespace: &'a str,
        template: &'a PodTemplateSpec,
        owner: &'a ObjectReference,
        controller_ref: &'a OwnerReference,
        generate_name: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), ControlError>>;

    /// Deletes pod `name`. A NotFound error is returned unchanged (and no event
    /// is recorded); other errors are wrapped as `"unable to delete pods: …"`.
    fn delete_pod<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        owner: &'a ObjectReference,
    ) -> BoxFuture<'a, Result<(), ControlError>>;

    /// Sends a strategic-merge patch (JSON text, sent byte for byte) to pod `name`.
    fn patch_pod<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        patch: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>>;
}

/// Checks a controller reference the way upstream `validateControllerRef` does.
pub fn validate_controller_ref(controller_ref: &OwnerReference) -> Result<(), ControlError> {
    let err = |m: &str| Err(ControlError::Invalid(m.to_string()));
    if controller_ref.api_version.is_empty() {
        return err("controllerRef has empty APIVersion");
    }
    if controller_ref.kind.is_empty() {
        return err("controllerRef has empty Kind");
    }
    if controller_ref.controller != Some(true) {
        return err("controllerRef.Controller is not set to true");
    }
    if controller_ref.block_owner_deletion != Some(true) {
        return err("controllerRef.BlockOwnerDeletion is not set");
    }
    Ok(())
}

/// The `generateName` for pods of controller `name` (upstream `getPodsPrefix`):
/// `"<name>-"` when that is a valid pod-name prefix, else `"<name>"`.
pub fn pods_prefix(controller_name: &str) -> String {
    let prefix = format!("{controller_name}-");
    // A prefix is validated with its trailing dash masked, as the server appends a suffix.
    let masked = format!("{controller_name}a");
    if is_dns1123_subdomain(&masked) {
        prefix
    } else {
        controller_name.to_string()
    }
}

/// Builds the pod to POST from a template (upstream `GetPodFromTemplate`):
/// generateName from the owner's name, copies of the template's labels,
/// annotations and finalizers, the controller reference, and the template spec.
pub fn get_pod_from_template(
    template: &PodTemplateSpec,
    owner_name: &str,
    controller_ref: Option<&OwnerReference>,
) -> Pod {
    let tm = template.metadata.clone().unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            labels: Some(tm.labels.unwrap_or_default()),
            annotations: Some(tm.annotations.unwrap_or_default()),
            generate_name: Some(pods_prefix(owner_name)),
            finalizers: Some(tm.finalizers.unwrap_or_default()),
            owner_references: controller_ref.map(|r| vec![r.clone()]),
            ..ObjectMeta::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

/// Called with the server's copy of every pod this control created or patched
/// (upstream `OnWrite`, feeds the consistency store).
pub type WriteObserver = Arc<dyn Fn(&Pod) + Send + Sync>;

/// [`PodControl`] over a kube client, recording events with an [`EventRecorder`].
#[derive(Clone)]
pub struct KubePodControl {
    client: kube::Client,
    recorder: EventRecorder,
    on_write: Option<WriteObserver>,
}

impl fmt::Debug for KubePodControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubePodControl")
            .field("recorder", &self.recorder)
            .field("on_write", &self.on_write.is_some())
            .finish_non_exhaustive()
    }
}

impl KubePodControl {
    /// A pod control writing with `client` and recording events with `recorder`.
    pub fn new(client: kube::Client, recorder: EventRecorder) -> Self {
        Self {
            client,
            recorder,
            on_write: None,
        }
    }

    /// Calls `f` with every pod successfully created or patched.
    pub fn with_write_observer(mut self, f: WriteObserver) -> Self {
        self.on_write = Some(f);
        self
    }

    fn api(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }
}

impl PodControl for KubePodControl {
    fn create_pods_with_generate_name<'a>(
        &'a self,
        namespace: &'a str,
        template: &'a PodTemplateSpec,
        owner: &'a ObjectReference,
        controller_ref: &'a OwnerReference,
        generate_name: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            validate_controller_ref(controller_ref)?;
            let owner_name = owner.name.as_deref().unwrap_or_default();
            let mut pod = get_pod_from_template(template, owner_name, Some(controller_ref));
            if let Some(g) = generate_name.filter(|g| !g.is_empty()) {
                pod.metadata.generate_name = Some(g.to_string());
            }
            if pod.metadata.labels.as_ref().is_none_or(BTreeMap::is_empty) {
                return Err(ControlError::Invalid(
                    "unable to create pods, no labels".to_string(),
                ));
            }
            let kind = owner.kind.as_deref().unwrap_or("owner");
            match self
                .api(namespace)
                .create(&PostParams::default(), &pod)
                .await
            {
                Ok(created) => {
                    let name = created.metadata.name.as_deref().unwrap_or_default();
                    log_write::<str>(
                        "create",
                        "pods",
                        namespace,
                        name,
                        format_args!("too few replicas for {kind} {namespace}/{owner_name}"),
                        Ok(()),
                    );
                    self.recorder.record(
                        owner,
                        EventType::Normal,
                        SUCCESSFUL_CREATE_POD_REASON,
                        format!("Created pod: {name}"),
                    );
                    if let Some(f) = &self.on_write {
                        f(&created);
                    }
                    Ok(())
                }
                Err(e) => {
                    let e = ControlError::from(e);
                    let prefix = pod.metadata.generate_name.as_deref().unwrap_or_default();
                    log_write(
                        "create",
                        "pods",
                        namespace,
                        prefix,
                        format_args!("too few replicas for {kind} {namespace}/{owner_name}"),
                        Err(&e),
                    );
                    if !e.has_status_cause(NAMESPACE_TERMINATING_CAUSE) {
                        self.recorder.record(
                            owner,
                            EventType::Warning,
                            FAILED_CREATE_POD_REASON,
                            format!("Error creating: {e}"),
                        );
                    }
                    Err(e)
                }
            }
        })
    }

    fn delete_pod<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        owner: &'a ObjectReference,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            let result = self
                .api(namespace)
                .delete(name, &DeleteParams::default())
                .await
                .map_err(ControlError::from);
            log_write(
                "delete",
                "pods",
                namespace,
                name,
                format_args!(
                    "too many replicas for {} {namespace}/{}",
                    owner.kind.as_deref().unwrap_or("owner"),
                    owner.name.as_deref().unwrap_or_default()
                ),
                result.as_ref().map(|_| ()),
            );
            match result {
                Ok(_) => {
                    self.recorder.record(
                        owner,
                        EventType::Normal,
                        SUCCESSFUL_DELETE_POD_REASON,
                        format!("Deleted pod: {name}"),
                    );
                    Ok(())
                }
                Err(e) => {
                    if e.is_not_found() {
                        tracing::debug!(pod = name, "pod has already been deleted");
                        return Err(e);
                    }
                    self.recorder.record(
                        owner,
                        EventType::Warning,
                        FAILED_DELETE_POD_REASON,
                        format!("Error deleting: {e}"),
                    );
                    Err(ControlError::DeletePods(Box::new(e)))
                }
            }
        })
    }

    fn patch_pod<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        patch: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            let pod = strategic_merge_patch(&self.api(namespace), name, patch).await?;
            if let Some(f) = &self.on_write {
                f(&pod);
            }
            Ok(())
        })
    }
}

/// What a [`FakePodControl`] has been asked to do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FakePodControlState {
    /// Templates of pods created (generateName set to the requested one, if any).
    pub templates: Vec<PodTemplateSpec>,
    /// Controller references of pods created.
    pub controller_refs: Vec<OwnerReference>,
    /// Names of pods deleted.
    pub delete_pod_names: Vec<String>,
    /// Patches sent, as `(namespace, name, patch JSON text)`.
    pub patches: Vec<(String, String, String)>,
    /// Create calls so far (including failed ones).
    pub create_call_count: usize,
}

/// A [`PodControl`] that records calls (upstream `FakePodControl`).
///
/// ```
/// use kcm_controller::pod_control::{FakePodControl, PodControl};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let fake = FakePodControl::default();
/// let owner = Default::default();
/// fake.delete_pod("ns", "p1", &owner).await.unwrap();
/// assert_eq!(fake.state().delete_pod_names, ["p1"]);
/// # });
/// ```
#[derive(Default)]
pub struct FakePodControl {
    state: Mutex<FakePodControlState>,
    err: Mutex<Option<Arc<dyn Fn() -> ControlError + Send + Sync>>>,
    create_limit: Mutex<usize>,
}

impl fmt::Debug for FakePodControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakePodControl")
            .field("state", &*self.state.lock())
            .finish_non_exhaustive()
    }
}

impl FakePodControl {
    /// A snapshot of the recorded calls.
    pub fn state(&self) -> FakePodControlState {
        self.state.lock().clone()
    }

    /// Makes every call (after recording it) fail with the error `f` builds; `None` clears.
    pub fn set_error(&self, f: Option<Arc<dyn Fn() -> ControlError + Send + Sync>>) {
        *self.err.lock() = f;
    }

    /// Makes create calls beyond the `limit`-th fail (0 = no limit).
    pub fn set_create_limit(&self, limit: usize) {
        *self.create_limit.lock() = limit;
    }

    /// Forgets recorded calls and the create limit (upstream `Clear`).
    pub fn clear(&self) {
        *self.state.lock() = FakePodControlState::default();
        *self.create_limit.lock() = 0;
    }

    fn result(&self) -> Result<(), ControlError> {
        match &*self.err.lock() {
            Some(f) => Err(f()),
            None => Ok(()),
        }
    }
}

impl PodControl for FakePodControl {
    fn create_pods_with_generate_name<'a>(
        &'a self,
        _namespace: &'a str,
        template: &'a PodTemplateSpec,
        _owner: &'a ObjectReference,
        controller_ref: &'a OwnerReference,
        generate_name: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            let limit = *self.create_limit.lock();
            {
                let mut st = self.state.lock();
                st.create_call_count += 1;
                if limit != 0 && st.create_call_count > limit {
                    return Err(ControlError::Other(format!(
                        "not creating pod, limit {limit} already reached (create call {})",
                        st.create_call_count
                    )));
                }
                let mut t = template.clone();
                t.metadata
                    .get_or_insert_with(Default::default)
                    .generate_name = generate_name.map(str::to_string);
                st.templates.push(t);
                st.controller_refs.push(controller_ref.clone());
            }
            self.result()
        })
    }

    fn delete_pod<'a>(
        &'a self,
        _namespace: &'a str,
        name: &'a str,
        _owner: &'a ObjectReference,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            self.state.lock().delete_pod_names.push(name.to_string());
            self.result()
        })
    }

    fn patch_pod<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        patch: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            self.state.lock().patches.push((
                namespace.to_string(),
                name.to_string(),
                patch.to_string(),
            ));
            self.result()
        })
    }
}

#[cfg(test)]
#[path = "pod_control_tests.rs"]
mod tests;
