//! Finalizers in one call ([`finalizer`]): the controller's finalizer is added before it acts
//! on an object, its cleanup runs once the object is being deleted, and the finalizer is then
//! removed so the deletion completes (the pattern of kube-runtime's `finalizer` helper, on
//! merge patches guarded by the object's resourceVersion).

use std::future::Future;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::{Patch, PatchParams};
use serde::de::DeserializeOwned;

use super::action::{Action, BoxError};
use super::context::Context;

/// What the reconcile passed to [`finalizer`] is asked to do.
#[derive(Debug)]
pub enum Finalize<K> {
    /// The object lives (and carries the finalizer): converge it.
    Apply(Arc<K>),
    /// The object is being deleted: clean up what lives outside the cluster (or outside
    /// owner references); once this returns `Ok`, the finalizer is removed.
    Cleanup(Arc<K>),
}

/// The step [`finalizer`] takes for an object's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Not deleted, no finalizer yet: add it (with these finalizers) and wait for the change.
    Add(Vec<String>),
    /// Not deleted, finalizer present.
    Apply,
    /// Deleted with the finalizer: clean up, then write these finalizers.
    Cleanup(Vec<String>),
    /// Deleted without the finalizer: nothing left to do.
    Nothing,
}

/// Decides the step for `meta` and the finalizer `name`.
pub(crate) fn step(meta: &ObjectMeta, name: &str) -> Step {
    let finalizers = meta.finalizers.clone().unwrap_or_default();
    let has = finalizers.iter().any(|f| f == name);
    match (meta.deletion_timestamp.is_some(), has) {
        (false, true) => Step::Apply,
        (false, false) => {
            let mut with = finalizers;
            with.push(name.to_string());
            Step::Add(with)
        }
        (true, true) => Step::Cleanup(finalizers.into_iter().filter(|f| f != name).collect()),
        (true, false) => Step::Nothing,
    }
}

/// Runs `reconcile` under the finalizer `name` (e.g. `example.com/cleanup`): adds the finalizer
/// to a live object that lacks it (then returns [`Action::Done`]: the change brings the object
/// back), calls `reconcile(Finalize::Apply)` on a live object that has it, and on an object
/// being deleted calls `reconcile(Finalize::Cleanup)` and removes the finalizer once that
/// succeeded. The writes use the controller's client, fenced under a manager.
///
/// ```no_run
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcm_controller::builder::{Action, BoxError, Context, Finalize, finalizer};
///
/// async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Context>) -> Result<Action, BoxError> {
///     finalizer(&ctx, &cm, "example.com/cleanup", |event| async move {
///         match event {
///             Finalize::Apply(_cm) => Ok::<_, BoxError>(Action::done()),
///             Finalize::Cleanup(cm) => {
///                 println!("forgetting {:?}", cm.metadata.name);
///                 Ok(Action::done())
///             }
///         }
///     })
///     .await
/// }
/// ```
pub async fn finalizer<K, F, Fut, E>(
    ctx: &Context,
    obj: &Arc<K>,
    name: &str,
    reconcile: F,
) -> Result<Action, BoxError>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Clone + std::fmt::Debug,
    F: FnOnce(Finalize<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
    E: Into<BoxError>,
{
    match step(obj.meta(), name) {
        Step::Apply => reconcile(Finalize::Apply(obj.clone()))
            .await
            .map_err(Into::into),
        Step::Add(finalizers) => {
            write_finalizers(ctx, obj.as_ref(), finalizers).await?;
            Ok(Action::Done)
        }
        Step::Cleanup(finalizers) => {
            let action = reconcile(Finalize::Cleanup(obj.clone()))
                .await
                .map_err(Into::into)?;
            write_finalizers(ctx, obj.as_ref(), finalizers).await?;
            Ok(action)
        }
        Step::Nothing => Ok(Action::Done),
    }
}

/// Writes `finalizers` as the object's list, if its resourceVersion is still the cached one.
async fn write_finalizers<K>(
    ctx: &Context,
    obj: &K,
    finalizers: Vec<String>,
) -> Result<K, kube::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Clone + std::fmt::Debug,
{
    let meta = obj.meta();
    let patch = serde_json::json!({
        "metadata": {"finalizers": finalizers, "resourceVersion": meta.resource_version},
    });
    let params = PatchParams {
        field_manager: Some(ctx.name().to_string()),
        ..PatchParams::default()
    };
    let name = meta.name.as_deref().unwrap_or_default();
    let req = ctx
        .request(obj)?
        .patch(name, &params, &Patch::Merge(patch))
        .map_err(kube::Error::BuildRequest)?;
    ctx.client().request(req).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn meta(finalizers: &[&str], deleted: bool) -> ObjectMeta {
        ObjectMeta {
            finalizers: Some(finalizers.iter().map(|f| f.to_string()).collect()),
            deletion_timestamp: deleted.then_some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn steps() {
        let ours = "example.com/cleanup";
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases = [
            ("live, none", meta(&[], false), Step::Add(strings(&[ours]))),
            (
                "live, another one",
                meta(&["other"], false),
                Step::Add(strings(&["other", ours])),
            ),
            ("live, ours", meta(&["other", ours], false), Step::Apply),
            (
                "deleted, ours",
                meta(&["other", ours], true),
                Step::Cleanup(strings(&["other"])),
            ),
            (
                "deleted, only ours",
                meta(&[ours], true),
                Step::Cleanup(vec![]),
            ),
            ("deleted, not ours", meta(&["other"], true), Step::Nothing),
            ("deleted, none", meta(&[], true), Step::Nothing),
        ];
        for (name, meta, want) in cases {
            assert_eq!(step(&meta, ours), want, "{name}");
        }
        assert_eq!(
            step(&ObjectMeta::default(), ours),
            Step::Add(strings(&[ours]))
        );
    }
}
