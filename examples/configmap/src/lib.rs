//! A `Greeting` custom resource published as a ConfigMap, on kcm-rs's controller builder: the
//! controller creates (or updates) the ConfigMap `<name>-greeting` holding the message,
//! controlled by the Greeting (so the garbage collector deletes it with the Greeting), writes
//! the ConfigMap's name and the generation it saw into the Greeting's status, and records a
//! `Published` event. `examples/kube_runtime.rs` is the same controller on kube-runtime 5.0.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kcm_manager::prelude::*;
use kube::CustomResource;
use kube::api::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a `Greeting` asks for: a ConfigMap holding `message`.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "example.kcm-rs.io",
    version = "v1",
    kind = "Greeting",
    namespaced
)]
#[kube(
    status = "GreetingStatus",
    doc = "A message, published as a ConfigMap."
)]
pub struct GreetingSpec {
    /// The ConfigMap's `message` entry.
    pub message: String,
}

/// What the controller last published.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreetingStatus {
    /// The name of the ConfigMap.
    pub config_map: String,
    /// The Greeting's `metadata.generation` the ConfigMap holds.
    pub observed_generation: Option<i64>,
}

/// The ConfigMap `greeting` asks for, controlled by it.
pub fn config_map(greeting: &Greeting) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{}-greeting", greeting.name_any())),
            namespace: greeting.namespace(),
            owner_references: greeting.controller_owner_ref(&()).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "message".into(),
            greeting.spec.message.clone(),
        )])),
        ..ConfigMap::default()
    }
}

/// Publishes the Greeting's ConfigMap, then its status (both with server-side apply, the
/// controller's name as field manager).
pub async fn reconcile(greeting: Arc<Greeting>, ctx: Arc<Context>) -> Result<Action, BoxError> {
    let cm = ctx.apply(&config_map(&greeting)).await?;
    let status = GreetingStatus {
        config_map: cm.name_any(),
        observed_generation: greeting.metadata.generation,
    };
    if greeting.status.as_ref() != Some(&status) {
        ctx.apply_status(greeting.as_ref(), &status).await?;
        let message = format!("ConfigMap {}", status.config_map);
        ctx.event(greeting.as_ref(), EventType::Normal, "Published", message);
    }
    Ok(Action::done())
}

/// The controller, as the manager registers it.
pub fn controller() -> Controller {
    Controller::for_::<Greeting>("greeting-controller")
        .owns::<ConfigMap>()
        .run(reconcile)
        .into()
}
