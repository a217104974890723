//! The simulated garbage collector and namespace controller against the real test server.
//! No ReplicaSet controller runs: owners and dependents are created by hand.

use std::time::Duration;

use crate::sim_common::*;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, PostParams, PropagationPolicy, WatchEvent, WatchParams};
use serde_json::json;

fn with_policy(p: PropagationPolicy) -> DeleteParams {
    DeleteParams {
        propagation_policy: Some(p),
        ..DeleteParams::default()
    }
}

#[tokio::test]
async fn background_deletion_removes_dependents() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "default");
    setup(&pods, &rss, "bg", 2).await;
    rss.delete("bg", &with_policy(PropagationPolicy::Background))
        .await
        .expect("delete");
    assert!(
        rss.get_opt("bg").await.expect("get").is_none(),
        "background: the owner goes at once"
    );
    wait_gone(&pods, "bg-0").await;
    wait_gone(&pods, "bg-1").await;
    cluster.shutdown().await;
}

#[tokio::test]
async fn orphan_deletion_keeps_dependents_without_the_reference() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "default");
    setup(&pods, &rss, "orph", 2).await;
    rss.delete("orph", &with_policy(PropagationPolicy::Orphan))
        .await
        .expect("delete");
    wait_gone(&rss, "orph").await;
    for i in 0..2 {
        let p = pods.get(&format!("orph-{i}")).await.expect("pod stays");
        assert!(
            p.metadata.owner_references.unwrap_or_default().is_empty(),
            "reference removed"
        );
        assert!(p.metadata.deletion_timestamp.is_none());
    }
    cluster.shutdown().await;
}

#[tokio::test]
async fn foreground_deletion_removes_dependents_first() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "default");
    setup(&pods, &rss, "fg", 2).await;
    let rv = rss
        .get("fg")
        .await
        .expect("rs")
        .metadata
        .resource_version
        .expect("rv");
    let pod_stream = pods
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch pods");
    let rs_stream = rss
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch rs");
    rss.delete("fg", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete");
    let owner = rss.get("fg").await.expect("owner waits for its dependents");
    assert!(owner.metadata.deletion_timestamp.is_some());
    assert!(
        owner
            .metadata
            .finalizers
            .unwrap_or_default()
            .contains(&"foregroundDeletion".to_string())
    );
    wait_gone(&rss, "fg").await;
    // Merge both streams by resourceVersion: every pod DELETED precedes the owner's DELETED.
    let mut deleted: Vec<(u64, String)> = Vec::new();
    let mut pod_stream = std::pin::pin!(pod_stream);
    while let Ok(Some(Ok(ev))) =
        tokio::time::timeout(Duration::from_millis(300), pod_stream.next()).await
    {
        if let WatchEvent::Deleted(p) = ev {
            deleted.push((
                rv_of(&p.metadata.resource_version),
                p.metadata.name.unwrap_or_default(),
            ));
        }
    }
    let mut rs_stream = std::pin::pin!(rs_stream);
    while let Ok(Some(Ok(ev))) =
        tokio::time::timeout(Duration::from_millis(300), rs_stream.next()).await
    {
        if let WatchEvent::Deleted(r) = ev {
            deleted.push((
                rv_of(&r.metadata.resource_version),
                r.metadata.name.unwrap_or_default(),
            ));
        }
    }
    deleted.sort();
    let order: Vec<&str> = deleted.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(order.len(), 3, "{order:?}");
    assert_eq!(order[2], "fg", "the owner goes last: {order:?}");
    cluster.shutdown().await;
}

fn rv_of(rv: &Option<String>) -> u64 {
    rv.as_deref().and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[tokio::test]
async fn dangling_references_are_removed_then_the_last_owner_takes_the_dependent() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "default");
    let a = rss
        .create(&PostParams::default(), &replicaset("own-a"))
        .await
        .expect("rs a");
    let b = rss
        .create(&PostParams::default(), &replicaset("own-b"))
        .await
        .expect("rs b");
    pods.create(&PostParams::default(), &owned_pod("shared", &[&a, &b]))
        .await
        .expect("pod");
    wait_pod(&pods, "shared", is_ready).await;
    rss.delete("own-a", &with_policy(PropagationPolicy::Background))
        .await
        .expect("delete a");
    let p = wait_pod(&pods, "shared", |p| {
        p.metadata
            .owner_references
            .as_ref()
            .is_some_and(|r| r.len() == 1)
    })
    .await;
    assert_eq!(p.metadata.owner_references.expect("refs")[0].name, "own-b");
    assert!(
        p.metadata.deletion_timestamp.is_none(),
        "another owner exists: the pod stays"
    );
    rss.delete("own-b", &with_policy(PropagationPolicy::Background))
        .await
        .expect("delete b");
    wait_gone(&pods, "shared").await;

    // An owner reference whose uid never existed (same name, other uid) counts as absent.
    let c = rss
        .create(&PostParams::default(), &replicaset("own-c"))
        .await
        .expect("rs c");
    let mut fake = c.clone();
    fake.metadata.uid = Some("00000000-0000-0000-0000-000000000000".into());
    pods.create(&PostParams::default(), &owned_pod("impostor", &[&fake]))
        .await
        .expect("pod");
    wait_gone(&pods, "impostor").await;
    assert!(rss.get_opt("own-c").await.expect("get").is_some());
    cluster.shutdown().await;
}

/// Foreground deletion of a Deployment goes down the chain: pods, then the ReplicaSet (itself
/// deleted in the foreground because it has dependents), then the Deployment.
#[tokio::test]
async fn foreground_deletion_cascades_through_replicasets() {
    use k8s_openapi::api::apps::v1::Deployment;
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "default");
    let deps: Api<Deployment> = Api::namespaced(cluster.client(), "default");
    deployment_chain(&deps, &rss, &pods).await;
    let rv = rss
        .get("chain-rs")
        .await
        .expect("rs")
        .metadata
        .resource_version
        .expect("rv");
    let rs_stream = rss
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch rs");
    deps.delete("chain", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete");
    wait_gone(&deps, "chain").await;
    wait_gone(&rss, "chain-rs").await;
    wait_gone(&pods, "chain-0").await;
    wait_gone(&pods, "chain-1").await;
    // The ReplicaSet itself was deleted in the foreground (it had dependents).
    let mut rs_stream = std::pin::pin!(rs_stream);
    let mut saw_foreground = false;
    while let Ok(Some(Ok(ev))) =
        tokio::time::timeout(Duration::from_millis(300), rs_stream.next()).await
    {
        if let WatchEvent::Modified(r) = ev {
            saw_foreground |= r
                .metadata
                .finalizers
                .unwrap_or_default()
                .iter()
                .any(|f| f == "foregroundDeletion");
        }
    }
    assert!(
        saw_foreground,
        "the ReplicaSet carried foregroundDeletion while its pods went"
    );
    cluster.shutdown().await;
}

/// A Deployment `chain` owning ReplicaSet `chain-rs` owning pods `chain-0` and `chain-1`.
async fn deployment_chain(
    deps: &Api<k8s_openapi::api::apps::v1::Deployment>,
    rss: &Api<ReplicaSet>,
    pods: &Api<Pod>,
) -> ReplicaSet {
    use k8s_openapi::api::apps::v1::Deployment;
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "chain"},
        "spec": {
            "selector": {"matchLabels": {"app": "chain"}},
            "template": {"metadata": {"labels": {"app": "chain"}},
                         "spec": {"containers": [{"name": "app", "image": "nginx"}]}},
        },
    }))
    .expect("deployment");
    let d = deps
        .create(&PostParams::default(), &d)
        .await
        .expect("create deployment");
    let mut rs = replicaset("chain-rs");
    rs.metadata.owner_references = Some(vec![
        serde_json::from_value(json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "name": "chain",
            "uid": d.metadata.uid, "controller": true, "blockOwnerDeletion": true,
        }))
        .expect("ref"),
    ]);
    let rs = rss
        .create(&PostParams::default(), &rs)
        .await
        .expect("create rs");
    for i in 0..2 {
        pods.create(
            &PostParams::default(),
            &owned_pod(&format!("chain-{i}"), &[&rs]),
        )
        .await
        .expect("create pod");
    }
    rs
}

/// Background deletion of a Deployment goes down the chain too: the ReplicaSet, then its pods.
#[tokio::test]
async fn background_deletion_cascades_through_replicasets() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "default");
    let deps: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(cluster.client(), "default");
    deployment_chain(&deps, &rss, &pods).await;
    deps.delete("chain", &with_policy(PropagationPolicy::Background))
        .await
        .expect("delete");
    assert!(deps.get_opt("chain").await.expect("get").is_none());
    wait_gone(&rss, "chain-rs").await;
    wait_gone(&pods, "chain-0").await;
    wait_gone(&pods, "chain-1").await;
    cluster.shutdown().await;
}
