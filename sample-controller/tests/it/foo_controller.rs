//! The sample controller against a cluster, as a client sees it: kcm-testenv in-process by
//! default, the cluster of `KCM_TEST_KUBECONFIG` when that names a kubeconfig
//! (`KCM_SAMPLE_BUILTIN_CONTROLLERS=0` when that cluster runs its own Deployment and
//! ReplicaSet controllers).

use crate::common::{events_of, start};
use k8s_openapi::api::apps::v1::Deployment;
use kcm_harness::Harness;
use kcm_sample_controller::{Foo, FooSpec};
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

fn foo(name: &str, deployment: &str, replicas: i32) -> Foo {
    Foo::new(
        name,
        FooSpec {
            deployment_name: deployment.to_string(),
            replicas: Some(replicas),
        },
    )
}

/// Waits until the Foo reports `want` available replicas.
async fn available(h: &Harness, name: &str, want: i32) -> anyhow::Result<()> {
    h.wait_for_object::<Foo>(name, |f| f.available_replicas() == want)
        .await
        .map(drop)
}

/// Waits until the Deployment exists with `want` replicas.
async fn deployment_with(h: &Harness, name: &str, want: i32) -> anyhow::Result<Deployment> {
    h.wait_for_object::<Deployment>(name, |d| d.spec.replicas == Some(want))
        .await
}

/// Waits for an event of the Foo `name` with `reason`: `[type, reason, message, component]`.
async fn event(h: &Harness, name: &str, reason: &str) -> anyhow::Result<[String; 4]> {
    h.wait_for(&format!("a {reason} event of Foo {name}"), || async {
        let events = events_of(h, name).await?;
        Ok(events.into_iter().find(|e| e[1] == reason))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foo_gets_an_owned_deployment_its_pods_and_its_status() -> anyhow::Result<()> {
    let h = start("sample-create").await?;
    let created = h
        .api::<Foo>()
        .create(
            &PostParams::default(),
            &foo("example-foo", "example-dep", 2),
        )
        .await?;

    let d = deployment_with(&h, "example-dep", 2).await?;
    let owners = d.metadata.owner_references.unwrap_or_default();
    assert_eq!(owners.len(), 1, "{owners:?}");
    let owner = &owners[0];
    assert_eq!(owner.api_version, "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Foo", "example-foo")
    );
    assert_eq!(Some(&owner.uid), created.metadata.uid.as_ref());
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    let labels = d.spec.selector.match_labels.unwrap_or_default();
    assert_eq!(
        labels.get("controller").map(String::as_str),
        Some("example-foo")
    );

    // The Deployment and ReplicaSet controllers bring up 2 pods, the (simulated) kubelets
    // make them Ready, the Deployment reports them available, and so does the Foo.
    available(&h, "example-foo", 2).await?;

    let synced = event(&h, "example-foo", "Synced").await?;
    assert_eq!(
        synced,
        [
            "Normal",
            "Synced",
            "Foo synced successfully",
            "sample-controller"
        ]
        .map(String::from)
    );
    h.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_the_foo_scales_its_deployment() -> anyhow::Result<()> {
    let h = start("sample-scale").await?;
    let foos = h.api::<Foo>();
    foos.create(&PostParams::default(), &foo("web", "web", 1))
        .await?;
    available(&h, "web", 1).await?;

    for replicas in [3, 1] {
        let patch = Patch::Merge(json!({"spec": {"replicas": replicas}}));
        foos.patch("web", &PatchParams::default(), &patch).await?;
        deployment_with(&h, "web", replicas).await?;
        available(&h, "web", replicas).await?;
    }
    h.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_the_foo_does_not_own_is_left_alone() -> anyhow::Result<()> {
    let h = start("sample-conflict").await?;
    let theirs: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "taken"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "theirs"}},
            "template": {
                "metadata": {"labels": {"app": "theirs"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}
            }
        }
    }))?;
    let deployments = h.api::<Deployment>();
    let before = deployments.create(&PostParams::default(), &theirs).await?;
    h.api::<Foo>()
        .create(&PostParams::default(), &foo("intruder", "taken", 4))
        .await?;

    let warning = event(&h, "intruder", "ErrResourceExists").await?;
    assert_eq!(
        warning,
        [
            "Warning",
            "ErrResourceExists",
            r#"Resource "taken" already exists and is not managed by Foo"#,
            "sample-controller",
        ]
        .map(String::from)
    );
    let after = deployments.get("taken").await?;
    assert_eq!(after.metadata.owner_references, None);
    assert_eq!(after.spec.replicas, Some(1));
    assert_eq!(after.spec.selector, before.spec.selector);
    let events = events_of(&h, "intruder").await?;
    assert!(!events.iter().any(|e| e[1] == "Synced"), "{events:?}");
    h.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_foo_deletes_its_deployment() -> anyhow::Result<()> {
    let h = start("sample-delete").await?;
    let foos = h.api::<Foo>();
    foos.create(
        &PostParams::default(),
        &foo("short-lived", "short-lived", 1),
    )
    .await?;
    deployment_with(&h, "short-lived", 1).await?;
    foos.delete("short-lived", &Default::default()).await?;
    let deployments = h.api::<Deployment>();
    h.wait_for("the garbage collector to delete the Deployment", || async {
        Ok(deployments
            .get_opt("short-lived")
            .await?
            .is_none()
            .then_some(()))
    })
    .await?;
    h.stop().await;
    Ok(())
}
