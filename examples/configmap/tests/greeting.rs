//! The Greeting controller on a cluster, as a client sees it: kcm-testenv in-process, or the
//! cluster of `KCM_TEST_KUBECONFIG`. The same controller written on kube-runtime
//! (`examples/kube_runtime.rs`) passes the same checks.

use k8s_openapi::api::core::v1::{ConfigMap, Event};
use kcm_example_configmap::{Greeting, GreetingSpec, controller};
use kcm_harness::{Harness, HarnessBuilder};
use kube::CustomResourceExt;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

/// The kube-runtime version of the controller, compiled into this test.
#[allow(dead_code)]
#[path = "../examples/kube_runtime.rs"]
mod kube_runtime;

fn harness(name: &'static str) -> HarnessBuilder {
    Harness::new(name)
        .crd(Greeting::crd())
        .controller(controller())
}

fn greeting(name: &str, message: &str) -> Greeting {
    Greeting::new(
        name,
        GreetingSpec {
            message: message.into(),
        },
    )
}

fn message(cm: &ConfigMap) -> Option<&str> {
    cm.data.as_ref()?.get("message").map(String::as_str)
}

/// The controller an Event names: `source.component` as client-go's and kcm-rs's recorders
/// write it (core/v1), or `reportingComponent` for an events.k8s.io/v1 Event such as
/// kube-runtime's recorder writes (its `reportingController`, read through core/v1).
fn reported_by(e: &Event) -> Option<&str> {
    e.source
        .as_ref()
        .and_then(|s| s.component.as_deref())
        .filter(|c| !c.is_empty())
        .or(e.reporting_component.as_deref())
}

/// Creates `hello`, waits for its ConfigMap and status; the harness's own checks.
async fn publishes(h: &Harness) -> anyhow::Result<()> {
    let created = h
        .api::<Greeting>()
        .create(&PostParams::default(), &greeting("hello", "Hello, world"))
        .await?;
    let cm = h
        .wait_for_object::<ConfigMap>("hello-greeting", |cm| message(cm) == Some("Hello, world"))
        .await?;
    let owner = &cm.metadata.owner_references.unwrap_or_default()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Greeting", "hello")
    );
    assert_eq!(
        (Some(&owner.uid), owner.controller),
        (created.metadata.uid.as_ref(), Some(true))
    );
    let g = h
        .wait_for_object::<Greeting>("hello", |g| g.status.is_some())
        .await?;
    let status = g.status.unwrap_or_default();
    assert_eq!(status.config_map, "hello-greeting");
    assert_eq!(status.observed_generation, created.metadata.generation);
    h.wait_for("the Published event", || async {
        let events = h.api::<Event>().list(&Default::default()).await?;
        Ok(events.items.into_iter().find(|e| {
            e.reason.as_deref() == Some("Published")
                && e.involved_object.name.as_deref() == Some("hello")
                && reported_by(e) == Some("greeting-controller")
        }))
    })
    .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_greeting_is_published_as_its_configmap_with_status_and_event() -> anyhow::Result<()> {
    let h = harness("greeting-publish").start().await?;
    publishes(&h).await?;
    h.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_message_updates_the_configmap_and_the_status() -> anyhow::Result<()> {
    let h = harness("greeting-update").start().await?;
    publishes(&h).await?;
    let patch = Patch::Merge(json!({"spec": {"message": "Bonjour"}}));
    let changed = h
        .api::<Greeting>()
        .patch("hello", &PatchParams::default(), &patch)
        .await?;
    h.wait_for_object::<ConfigMap>("hello-greeting", |cm| message(cm) == Some("Bonjour"))
        .await?;
    h.wait_for_object::<Greeting>("hello", |g| {
        g.status.as_ref().and_then(|s| s.observed_generation) == changed.metadata.generation
    })
    .await?;
    h.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_configmap_changed_or_deleted_is_put_back() -> anyhow::Result<()> {
    let h = harness("greeting-owned").start().await?;
    publishes(&h).await?;
    let cms = h.api::<ConfigMap>();
    let edit = Patch::Merge(json!({"data": {"message": "tampered"}}));
    cms.patch("hello-greeting", &PatchParams::default(), &edit)
        .await?;
    h.wait_for_object::<ConfigMap>("hello-greeting", |cm| message(cm) == Some("Hello, world"))
        .await?;
    cms.delete("hello-greeting", &Default::default()).await?;
    h.wait_for_object::<ConfigMap>("hello-greeting", |cm| message(cm) == Some("Hello, world"))
        .await?;
    h.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_by_namespace_it_publishes_too() -> anyhow::Result<()> {
    let h = harness("greeting-sharded")
        .args(["--sharding=namespace"])
        .start()
        .await?;
    publishes(&h).await?;
    h.stop().await;
    Ok(())
}

/// kube-runtime's version (its own `Controller`, server-side apply, its event recorder) passes
/// the same checks on the same server, with no kcm-rs code running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kube_runtime_version_passes_the_same_checks() -> anyhow::Result<()> {
    let h = Harness::new("greeting-kube-runtime")
        .crd(Greeting::crd())
        .start()
        .await?;
    let controller = tokio::spawn(kube_runtime::run(h.client().clone()));
    publishes(&h).await?;
    let cms = h.api::<ConfigMap>();
    cms.delete("hello-greeting", &Default::default()).await?;
    h.wait_for_object::<ConfigMap>("hello-greeting", |cm| message(cm) == Some("Hello, world"))
        .await?;
    controller.abort();
    h.stop().await;
    Ok(())
}
