//! The Greeting controller of this crate written on kube-runtime 5.0 instead of kcm-rs's
//! builder, for the size comparison in the README: the same resource and ConfigMap (the
//! crate's `Greeting` and `config_map`), the same writes (server-side apply here, as
//! kube-runtime's users write it), status and event.
//!
//! Run it against a cluster with the Greeting CRD installed: `cargo run -p
//! kcm-example-configmap --example kube_runtime`.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kcm_example_configmap::{Greeting, GreetingStatus, config_map};
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use kube_runtime::controller::{Action, Controller};
use kube_runtime::events::{Event, EventType, Recorder, Reporter};
use kube_runtime::watcher;

struct Ctx {
    client: Client,
    recorder: Recorder,
}

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct Error(#[from] kube::Error);

async fn reconcile(greeting: Arc<Greeting>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let ns = greeting.namespace().unwrap_or_default();
    let params = PatchParams::apply("greeting-controller").force();
    let desired = config_map(&greeting);
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    let cm = cms
        .patch(&desired.name_any(), &params, &Patch::Apply(&desired))
        .await?;
    let status = GreetingStatus {
        config_map: cm.name_any(),
        observed_generation: greeting.metadata.generation,
    };
    if greeting.status.as_ref() != Some(&status) {
        let greetings: Api<Greeting> = Api::namespaced(ctx.client.clone(), &ns);
        let body = serde_json::json!({
            "apiVersion": Greeting::api_version(&()), "kind": "Greeting", "status": status,
        });
        greetings
            .patch_status(&greeting.name_any(), &params, &Patch::Apply(body))
            .await?;
        let event = Event {
            type_: EventType::Normal,
            reason: "Published".into(),
            note: Some(format!("ConfigMap {}", status.config_map)),
            action: "Publishing".into(),
            secondary: None,
        };
        ctx.recorder
            .publish(&event, &greeting.object_ref(&()))
            .await?;
    }
    Ok(Action::await_change())
}

fn error_policy(_greeting: Arc<Greeting>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    tracing::warn!(%error, "reconcile failed");
    Action::requeue(Duration::from_secs(5))
}

/// Runs the controller until a signal stops it (the crate's test runs it too).
pub async fn run(client: Client) {
    let reporter = Reporter {
        controller: "greeting-controller".into(),
        instance: None,
    };
    let recorder = Recorder::new(client.clone(), reporter);
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        recorder,
    });
    Controller::new(
        Api::<Greeting>::all(client.clone()),
        watcher::Config::default(),
    )
    .owns(Api::<ConfigMap>::all(client), watcher::Config::default())
    .shutdown_on_signal()
    .run(reconcile, error_policy, ctx)
    .for_each(|result| async move {
        if let Err(error) = result {
            tracing::warn!(%error, "controller");
        }
    })
    .await;
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt::init();
    run(Client::try_default().await?).await;
    Ok(())
}
