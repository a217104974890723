//! The Greeting controller on a cluster, as a client sees it: kcm-testenv in-process, or the
//! cluster of `KCM_TEST_KUBECONFIG`.

use k8s_openapi::api::core::v1::{ConfigMap, Event};
use kcm_example_configmap::{Greeting, GreetingSpec, controller};
use kcm_harness::{Harness, HarnessBuilder};
use kube::CustomResourceExt;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

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
                && e.source.as_ref().and_then(|s| s.component.as_deref())
                    == Some("greeting-controller")
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
