//! The simulated namespace controller against the real test server: namespaces are emptied
//! through discovery (every namespaced resource, custom resources included), report what remains
//! in their conditions, and are finalized.

use std::time::Duration;

use crate::sim_common::*;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::Api;
use kube::api::{
    DeleteParams, DynamicObject, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::json;

#[tokio::test]
async fn namespace_deletion_empties_and_removes_it() {
    let cluster = start_sim(fast_config()).await;
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "doomed"}})).expect("ns");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("create ns");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "doomed");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "doomed");
    setup(&pods, &rss, "app", 2).await;
    let answer = namespaces
        .delete("doomed", &DeleteParams::default())
        .await
        .expect("delete ns");
    let terminating = answer
        .left()
        .expect("DELETE answers the terminating namespace");
    assert_eq!(
        terminating.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    assert!(terminating.metadata.deletion_timestamp.is_some());
    wait_gone(&namespaces, "doomed").await;
    assert!(
        pods.list(&Default::default())
            .await
            .map(|l| l.items.is_empty())
            .unwrap_or(true)
    );
    cluster.shutdown().await;
}

/// Upstream's namespace controller empties a namespace through the API: pods terminate gracefully
/// (the kubelet finishes them) before anything else goes.
#[tokio::test]
async fn namespace_deletion_goes_through_graceful_pod_termination() {
    let cluster = start_sim(fast_config()).await;
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "slow"}})).expect("ns");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("create ns");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "slow");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "slow");
    setup(&pods, &rss, "app", 2).await;
    let rv = pods
        .list(&Default::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    let pod_stream = pods
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch pods");
    let ns_stream = namespaces
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch ns");
    namespaces
        .delete("slow", &DeleteParams::default())
        .await
        .expect("delete ns");
    wait_gone(&namespaces, "slow").await;
    let mut terminating = std::collections::BTreeSet::new();
    let mut deleted = std::collections::BTreeSet::new();
    let mut pod_stream = std::pin::pin!(pod_stream);
    while let Ok(Some(Ok(ev))) =
        tokio::time::timeout(Duration::from_millis(300), pod_stream.next()).await
    {
        match ev {
            WatchEvent::Modified(p) if p.metadata.deletion_timestamp.is_some() => {
                terminating.insert(p.metadata.name.unwrap_or_default());
            }
            WatchEvent::Deleted(p) => {
                deleted.insert(p.metadata.name.unwrap_or_default());
            }
            _ => {}
        }
    }
    assert_eq!(deleted.len(), 2);
    assert_eq!(
        terminating, deleted,
        "every pod was terminating before it went"
    );
    // The conditions upstream writes while pods terminate: pods are waited for first and are
    // not counted, so every condition reports success.
    let mut written: Vec<Vec<(String, String)>> = Vec::new();
    let mut ns_stream = std::pin::pin!(ns_stream);
    while let Ok(Some(Ok(ev))) =
        tokio::time::timeout(Duration::from_millis(300), ns_stream.next()).await
    {
        if let WatchEvent::Modified(n) = ev {
            let conditions = n.status.and_then(|s| s.conditions).unwrap_or_default();
            written.push(
                conditions
                    .iter()
                    .map(|c| (c.type_.clone(), c.status.clone()))
                    .collect(),
            );
        }
    }
    let last = written
        .iter()
        .rev()
        .find(|c| !c.is_empty())
        .expect("conditions written");
    let types: Vec<&str> = last.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        types,
        [
            "NamespaceDeletionDiscoveryFailure",
            "NamespaceDeletionGroupVersionParsingFailure",
            "NamespaceDeletionContentFailure",
            "NamespaceContentRemaining",
            "NamespaceFinalizersRemaining",
        ]
    );
    assert!(last.iter().all(|(_, s)| s == "False"), "{last:?}");
    cluster.shutdown().await;
}

/// A namespace with a metadata finalizer is emptied but stays Terminating until the finalizer goes.
#[tokio::test]
async fn namespace_with_a_metadata_finalizer_waits_for_it() {
    use kube::api::{Patch, PatchParams};
    let cluster = start_sim(fast_config()).await;
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    let ns: Namespace = serde_json::from_value(json!({
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]},
    }))
    .expect("ns");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("create ns");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "held");
    pods.create(&PostParams::default(), &pod("p", &[]))
        .await
        .expect("pod");
    wait_pod(&pods, "p", is_ready).await;
    namespaces
        .delete("held", &DeleteParams::default())
        .await
        .expect("delete ns");
    wait_gone(&pods, "p").await;
    let held = wait_for("spec finalizers removed", || async {
        namespaces.get_opt("held").await.ok().flatten().filter(|n| {
            n.spec
                .as_ref()
                .and_then(|s| s.finalizers.as_ref())
                .is_none_or(|f| f.is_empty())
        })
    })
    .await;
    assert!(held.metadata.deletion_timestamp.is_some());
    let patch = json!({"metadata": {"finalizers": null}});
    namespaces
        .patch("held", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("remove finalizer");
    wait_gone(&namespaces, "held").await;
    cluster.shutdown().await;
}

/// A namespace holds custom objects of a kind installed before it, and of a kind installed
/// after it was created: both are deleted with it (discovery is read at each pass).
#[tokio::test]
async fn namespace_deletion_removes_custom_objects_of_every_kind() {
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    let before = install_crd(&client, "sim.example.com", "Gadget", "Namespaced").await;
    create_namespace(&client, "mixed").await;
    let after = install_crd(&client, "later.example.com", "Doohickey", "Namespaced").await;
    let gadgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "mixed", &before);
    let doohickeys: Api<DynamicObject> = Api::namespaced_with(client.clone(), "mixed", &after);
    for i in 0..2 {
        gadgets
            .create(
                &PostParams::default(),
                &custom_object(&before, &format!("g{i}"), &[], &[]),
            )
            .await
            .expect("gadget");
        doohickeys
            .create(
                &PostParams::default(),
                &custom_object(&after, &format!("d{i}"), &[], &[]),
            )
            .await
            .expect("doohickey");
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), "mixed");
    pods.create(&PostParams::default(), &pod("p", &[]))
        .await
        .expect("pod");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete("mixed", &DeleteParams::default())
        .await
        .expect("delete ns");
    wait_gone(&namespaces, "mixed").await;
    for api in [&gadgets, &doohickeys] {
        let left = api.list(&Default::default()).await.expect("list");
        assert!(left.items.is_empty(), "{:?}", left.items);
    }
    cluster.shutdown().await;
}

/// Content held by a finalizer keeps the namespace Terminating, and its conditions say what
/// remains and which finalizers hold it, in upstream's words; releasing it lets the namespace go.
#[tokio::test]
async fn content_held_by_a_finalizer_shows_in_the_conditions() {
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    let widgets = install_crd(&client, "sim.example.com", "Widget", "Namespaced").await;
    create_namespace(&client, "held").await;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "held", &widgets);
    api.create(
        &PostParams::default(),
        &custom_object(&widgets, "w", &[], &["example.com/hold"]),
    )
    .await
    .expect("widget");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete("held", &DeleteParams::default())
        .await
        .expect("delete ns");
    let message = |n: &Namespace, t: &str| {
        n.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == t && c.status == "True"))
            .and_then(|c| c.message.clone())
    };
    let ns = wait_for("conditions naming the remaining content", || async {
        namespaces
            .get_opt("held")
            .await
            .ok()
            .flatten()
            .filter(|n| message(n, "NamespaceFinalizersRemaining").is_some())
    })
    .await;
    assert_eq!(
        message(&ns, "NamespaceContentRemaining").as_deref(),
        Some("Some resources are remaining: widgets.sim.example.com has 1 resource instances")
    );
    assert_eq!(
        message(&ns, "NamespaceFinalizersRemaining").as_deref(),
        Some(
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
        )
    );
    let w = api.get("w").await.expect("widget held");
    assert!(w.metadata.deletion_timestamp.is_some());
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release");
    wait_gone(&namespaces, "held").await;
    cluster.shutdown().await;
}

/// ConfigMaps and Secrets go with their namespace.
#[tokio::test]
async fn namespace_deletion_removes_configmaps_and_secrets() {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    let cluster = start_sim(fast_config()).await;
    let client = cluster.client();
    create_namespace(&client, "cfg").await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "cfg");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "cfg");
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "settings"}, "data": {"k": "v"}}))
            .expect("configmap");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("configmap");
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "token"}, "stringData": {"k": "v"}}))
            .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("secret");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete("cfg", &DeleteParams::default())
        .await
        .expect("delete ns");
    wait_gone(&namespaces, "cfg").await;
    assert!(cms.get_opt("settings").await.expect("get").is_none());
    assert!(secrets.get_opt("token").await.expect("get").is_none());
    cluster.shutdown().await;
}
