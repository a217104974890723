//! One reconcile of a Foo (upstream's `syncHandler` and `updateFooStatus`): read its
//! Deployment from the cache, carry out the [`plan`], write the status, record the events.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use kcm_controller::api_write::log_write;
use kcm_controller::builder::{Action, Context};
use kcm_controller::event_recorder::EventType;
use kube::api::{Api, PostParams};

use crate::foo::Foo;
use crate::plan::{
    DeploymentPlan, MESSAGE_SYNCED, REASON_RESOURCE_EXISTS, REASON_SYNCED, new_status, plan,
};

/// The field manager of the controller's writes, as upstream's (`sample-controller`).
pub const FIELD_MANAGER: &str = "sample-controller";

/// Why a sync failed; the key is retried with backoff.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The Deployment exists and the Foo does not control it (the `ErrResourceExists` message).
    #[error("{0}")]
    NotOwned(String),
    /// An API request failed.
    #[error("{action}: {source}")]
    Api {
        /// What the request was for.
        action: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
}

/// Reconciles a Foo: converges its Deployment, then its status.
///
/// # Errors
///
/// A failed API write, or a Deployment of the wanted name that the Foo does not control
/// (retried with the queue's backoff, as upstream).
pub async fn reconcile(foo: Arc<Foo>, ctx: Arc<Context>) -> Result<Action, SyncError> {
    let ns = foo.metadata.namespace.as_deref().unwrap_or_default();
    let name = foo.metadata.name.as_deref().unwrap_or_default();
    let key = format!("{ns}/{name}");
    let deployment_name = foo.spec.deployment_name.as_str();
    let existing = ctx
        .lister::<Deployment>()
        .and_then(|l| l.get(ns, deployment_name));
    let deployments: Api<Deployment> = Api::namespaced(ctx.client().clone(), ns);
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PostParams::default()
    };
    let deployment: Arc<Deployment> = match plan(&foo, existing.as_deref()) {
        DeploymentPlan::NoDeploymentName => {
            tracing::error!(foo = %key, "deployment name must be specified");
            return Ok(Action::Done);
        }
        DeploymentPlan::NotOwned(message) => {
            ctx.event(
                foo.as_ref(),
                EventType::Warning,
                REASON_RESOURCE_EXISTS,
                message.clone(),
            );
            return Err(SyncError::NotOwned(message));
        }
        DeploymentPlan::Create(desired) => {
            let result = deployments.create(&params, &desired).await;
            let why = format!("Deployment of Foo {key}");
            Arc::new(logged("create", ns, deployment_name, why, result)?)
        }
        DeploymentPlan::Update(desired) => {
            let want = foo.spec.replicas.unwrap_or_default();
            let result = deployments
                .replace(deployment_name, &params, &desired)
                .await;
            let why = format!("replicas to {want} for Foo {key}");
            Arc::new(logged("update", ns, deployment_name, why, result)?)
        }
        DeploymentPlan::UpToDate => match existing {
            Some(d) => d,
            None => return Ok(Action::Done),
        },
    };
    if let Some(status) = new_status(&foo, &deployment) {
        // Never change the cached object: write a copy.
        let mut copy = Foo::clone(&foo);
        copy.status = Some(status);
        let foos: Api<Foo> = Api::namespaced(ctx.client().clone(), ns);
        let result = foos.replace_status(name, &params, &copy).await;
        let reason = format!("availableReplicas of Deployment {deployment_name}");
        log_write(
            "update",
            "foos/status",
            ns,
            name,
            reason,
            result.as_ref().map(|_| ()),
        );
        result.map_err(|source| SyncError::Api {
            action: format!("updating the status of Foo {key}"),
            source,
        })?;
    }
    ctx.event(
        foo.as_ref(),
        EventType::Normal,
        REASON_SYNCED,
        MESSAGE_SYNCED,
    );
    Ok(Action::Done)
}

/// Logs one Deployment write (`verb` of `namespace/name`, because of `why`) and turns its error
/// into a [`SyncError`].
fn logged(
    verb: &str,
    namespace: &str,
    name: &str,
    why: String,
    result: Result<Deployment, kube::Error>,
) -> Result<Deployment, SyncError> {
    log_write(
        verb,
        "deployments",
        namespace,
        name,
        why,
        result.as_ref().map(|_| ()),
    );
    result.map_err(|source| SyncError::Api {
        action: format!("{verb} Deployment {namespace}/{name}"),
        source,
    })
}
