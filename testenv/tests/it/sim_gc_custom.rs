//! The simulated garbage collector with custom resources as owners and as dependents, owners of
//! another scope or namespace, and owners that never existed. Every kind here is installed
//! after the simulation started: the collector finds it through discovery.

use crate::sim_common::*;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, PropagationPolicy,
};
use serde_json::json;

const HOLD: &str = "example.com/hold";

fn with_policy(p: PropagationPolicy) -> DeleteParams {
    DeleteParams {
        propagation_policy: Some(p),
        ..DeleteParams::default()
    }
}

/// Remove every finalizer of `name`.
async fn release(api: &Api<DynamicObject>, name: &str) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release");
}

async fn create(api: &Api<DynamicObject>, obj: &DynamicObject) -> DynamicObject {
    api.create(&PostParams::default(), obj)
        .await
        .expect("create")
}

/// A Widget owns a Gadget (blocking its deletion): background deletion takes the owner at once
/// and the dependent after it, foreground deletion keeps the owner until the dependent is gone,
/// orphan deletion leaves the dependent without its reference.
#[tokio::test]
async fn every_propagation_policy_on_a_custom_dependent_of_a_custom_owner() {
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    let widgets = install_crd(&client, "sim.example.com", "Widget", "Namespaced").await;
    let gadgets = install_crd(&client, "sim.example.com", "Gadget", "Namespaced").await;
    let wapi: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &widgets);
    let gapi: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &gadgets);
    for policy in [
        PropagationPolicy::Background,
        PropagationPolicy::Foreground,
        PropagationPolicy::Orphan,
    ] {
        let name = format!("{policy:?}").to_lowercase();
        let owner = create(&wapi, &custom_object(&widgets, &name, &[], &[])).await;
        let dep = custom_object(&gadgets, &name, &[(&owner.metadata, &widgets, true)], &[]);
        create(&gapi, &dep).await;
        wapi.delete(&name, &with_policy(policy.clone()))
            .await
            .expect("delete owner");
        match policy {
            PropagationPolicy::Background => {
                assert!(wapi.get_opt(&name).await.expect("get").is_none());
                wait_gone(&gapi, &name).await;
            }
            PropagationPolicy::Foreground => {
                let waiting = wapi.get(&name).await.expect("the owner waits");
                assert_eq!(
                    waiting.metadata.finalizers.as_deref(),
                    Some(&["foregroundDeletion".to_string()][..])
                );
                wait_gone(&gapi, &name).await;
                wait_gone(&wapi, &name).await;
            }
            _ => {
                wait_gone(&wapi, &name).await;
                let kept = wait_for("the reference removed", || async {
                    gapi.get_opt(&name).await.ok().flatten().filter(|g| {
                        g.metadata
                            .owner_references
                            .as_ref()
                            .is_none_or(|r| r.is_empty())
                    })
                })
                .await;
                assert!(kept.metadata.deletion_timestamp.is_none());
            }
        }
    }
    cluster.shutdown().await;
}

/// In foreground deletion, a dependent with `blockOwnerDeletion: true` holds the owner until it
/// is gone; one with `false` does not.
#[tokio::test]
async fn block_owner_deletion_in_foreground_deletion() {
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    let widgets = install_crd(&client, "sim.example.com", "Widget", "Namespaced").await;
    let gadgets = install_crd(&client, "sim.example.com", "Gadget", "Namespaced").await;
    let wapi: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &widgets);
    let gapi: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &gadgets);
    let owner = create(&wapi, &custom_object(&widgets, "owner", &[], &[])).await;
    for (name, block) in [("blocking", true), ("free", false)] {
        let dep = custom_object(
            &gadgets,
            name,
            &[(&owner.metadata, &widgets, block)],
            &[HOLD],
        );
        create(&gapi, &dep).await;
    }
    wapi.delete("owner", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete owner");
    // Both dependents are deleted (and held by their finalizer); the owner waits for the
    // blocking one only.
    for name in ["blocking", "free"] {
        wait_for(&format!("{name} deleting"), || async {
            gapi.get_opt(name)
                .await
                .ok()
                .flatten()
                .filter(|g| g.metadata.deletion_timestamp.is_some())
        })
        .await;
    }
    assert!(wapi.get_opt("owner").await.expect("get").is_some());
    release(&gapi, "blocking").await;
    wait_gone(&wapi, "owner").await;
    assert!(
        gapi.get_opt("free").await.expect("get").is_some(),
        "the non-blocking dependent did not hold the owner"
    );
    release(&gapi, "free").await;
    wait_gone(&gapi, "free").await;
    cluster.shutdown().await;
}

/// A cluster-scoped custom owner takes its namespaced dependents, custom and built-in.
#[tokio::test]
async fn a_cluster_scoped_owner_takes_namespaced_dependents() {
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    let gizmos = install_crd(&client, "sim.example.com", "Gizmo", "Cluster").await;
    let gadgets = install_crd(&client, "sim.example.com", "Gadget", "Namespaced").await;
    let zapi: Api<DynamicObject> = Api::all_with(client.clone(), &gizmos);
    let gapi: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &gadgets);
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let owner = create(&zapi, &custom_object(&gizmos, "big", &[], &[])).await;
    create(
        &gapi,
        &custom_object(&gadgets, "small", &[(&owner.metadata, &gizmos, false)], &[]),
    )
    .await;
    let mut p = pod("owned", &[]);
    p.metadata.owner_references = Some(owner_references(&[(&owner.metadata, &gizmos, true)]));
    pods.create(&PostParams::default(), &p).await.expect("pod");
    // Both stay while their owner exists.
    wait_pod(&pods, "owned", is_ready).await;
    assert!(gapi.get_opt("small").await.expect("get").is_some());
    zapi.delete("big", &DeleteParams::default())
        .await
        .expect("delete owner");
    wait_gone(&gapi, "small").await;
    wait_gone(&pods, "owned").await;
    cluster.shutdown().await;
}

/// Owners resolved as upstream resolves them: a namespaced owner is looked up in the dependent's
/// namespace (one elsewhere counts as absent), a cluster-scoped dependent of a namespaced owner is
/// never collected, and an owner that never existed is verified absent before its dependent goes.
#[tokio::test]
async fn owners_of_another_namespace_or_scope_and_owners_that_never_existed() {
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    let widgets = install_crd(&client, "sim.example.com", "Widget", "Namespaced").await;
    let gadgets = install_crd(&client, "sim.example.com", "Gadget", "Namespaced").await;
    let gizmos = install_crd(&client, "sim.example.com", "Gizmo", "Cluster").await;
    create_namespace(&client, "other").await;
    let wapi: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &widgets);
    let gapi_other: Api<DynamicObject> = Api::namespaced_with(client.clone(), "other", &gadgets);
    let gapi: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &gadgets);
    let zapi: Api<DynamicObject> = Api::all_with(client.clone(), &gizmos);
    let owner = create(&wapi, &custom_object(&widgets, "w", &[], &[])).await;
    // Cluster-scoped, naming a namespaced owner: invalid, left alone.
    create(
        &zapi,
        &custom_object(&gizmos, "stuck", &[(&owner.metadata, &widgets, false)], &[]),
    )
    .await;
    // In another namespace than its owner: the owner is absent there.
    create(
        &gapi_other,
        &custom_object(
            &gadgets,
            "elsewhere",
            &[(&owner.metadata, &widgets, false)],
            &[],
        ),
    )
    .await;
    // An owner uid that never existed.
    let mut ghost = owner.metadata.clone();
    ghost.uid = Some("00000000-0000-0000-0000-00000000dead".into());
    ghost.name = Some("ghost".into());
    create(
        &gapi,
        &custom_object(&gadgets, "haunted", &[(&ghost, &widgets, false)], &[]),
    )
    .await;
    // And one whose owner is there, which stays.
    create(
        &gapi,
        &custom_object(
            &gadgets,
            "owned",
            &[(&owner.metadata, &widgets, false)],
            &[],
        ),
    )
    .await;
    wait_gone(&gapi_other, "elsewhere").await;
    wait_gone(&gapi, "haunted").await;
    // The owner itself is untouched, and so are its valid dependent and the invalid one.
    assert!(wapi.get_opt("w").await.expect("get").is_some());
    assert!(gapi.get_opt("owned").await.expect("get").is_some());
    wapi.delete("w", &DeleteParams::default())
        .await
        .expect("delete owner");
    wait_gone(&gapi, "owned").await;
    let stuck = zapi.get("stuck").await.expect("never collected");
    assert!(stuck.metadata.deletion_timestamp.is_none());
    cluster.shutdown().await;
}

fn configmaps() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
    }
}

/// What a controller written the kube-runtime way owns: a ConfigMap, under each policy.
#[tokio::test]
async fn every_propagation_policy_on_a_configmap_owned_by_a_custom_resource() {
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    let widgets = install_crd(&client, "sim.example.com", "Widget", "Namespaced").await;
    let wapi: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &widgets);
    let cms: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &configmaps());
    for policy in [
        PropagationPolicy::Background,
        PropagationPolicy::Foreground,
        PropagationPolicy::Orphan,
    ] {
        let name = format!("{policy:?}").to_lowercase();
        let owner = create(&wapi, &custom_object(&widgets, &name, &[], &[])).await;
        let mut cm = DynamicObject::new(&name, &configmaps());
        cm.data = json!({"data": {"k": "v"}});
        cm.metadata.owner_references = Some(owner_references(&[(&owner.metadata, &widgets, true)]));
        create(&cms, &cm).await;
        wapi.delete(&name, &with_policy(policy.clone()))
            .await
            .expect("delete owner");
        if policy == PropagationPolicy::Orphan {
            wait_gone(&wapi, &name).await;
            wait_for("the reference removed", || async {
                cms.get_opt(&name).await.ok().flatten().filter(|c| {
                    c.metadata
                        .owner_references
                        .as_ref()
                        .is_none_or(|r| r.is_empty())
                })
            })
            .await;
        } else {
            wait_gone(&cms, &name).await;
            wait_gone(&wapi, &name).await;
        }
    }
    cluster.shutdown().await;
}

/// A Secret owned by a Deployment goes with it.
#[tokio::test]
async fn a_secret_owned_by_a_deployment_goes_with_it() {
    use k8s_openapi::api::apps::v1::Deployment;
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    let deps: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "app", "image": "nginx"}]}},
        },
    }))
    .expect("deployment");
    let d = deps
        .create(&PostParams::default(), &d)
        .await
        .expect("deployment");
    let deployments = ApiResource {
        group: "apps".into(),
        version: "v1".into(),
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        plural: "deployments".into(),
    };
    let secrets_ar = ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "Secret".into(),
        plural: "secrets".into(),
    };
    let secrets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &secrets_ar);
    let mut s = DynamicObject::new("web-token", &secrets_ar);
    s.data = json!({"stringData": {"token": "t"}});
    s.metadata.owner_references = Some(owner_references(&[(&d.metadata, &deployments, true)]));
    create(&secrets, &s).await;
    deps.delete("web", &DeleteParams::default())
        .await
        .expect("delete deployment");
    wait_gone(&secrets, "web-token").await;
    cluster.shutdown().await;
}
