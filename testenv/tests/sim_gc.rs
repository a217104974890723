//! The simulated garbage collector and namespace controller against the real test server.
//! No ReplicaSet controller runs: owners and dependents are created by hand.

mod sim_common;

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::Api;
use kube::api::{DeleteParams, PostParams, PropagationPolicy, WatchEvent, WatchParams};
use serde_json::json;
use sim_common::*;

fn replicaset(name: &str) -> ReplicaSet {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }))
    .expect("replicaset")
}

fn owned_pod(name: &str, owners: &[&ReplicaSet]) -> Pod {
    let mut p = pod(name, &[]);
    p.metadata.owner_references = Some(
        owners
            .iter()
            .enumerate()
            .map(|(i, rs)| {
                serde_json::from_value(json!({
                    "apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": rs.metadata.name, "uid": rs.metadata.uid,
                    "controller": i == 0, "blockOwnerDeletion": true,
                }))
                .expect("owner reference")
            })
            .collect(),
    );
    p
}

async fn setup(pods: &Api<Pod>, rss: &Api<ReplicaSet>, rs_name: &str, n: usize) -> ReplicaSet {
    let rs = rss
        .create(&PostParams::default(), &replicaset(rs_name))
        .await
        .expect("create rs");
    for i in 0..n {
        pods.create(
            &PostParams::default(),
            &owned_pod(&format!("{rs_name}-{i}"), &[&rs]),
        )
        .await
        .expect("create pod");
    }
    for i in 0..n {
        wait_pod(pods, &format!("{rs_name}-{i}"), is_ready).await;
    }
    rs
}

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
/// (the kubelet finishes them) and the namespace reports `NamespaceContentRemaining` meanwhile.
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
    let mut saw_remaining = false;
    let mut ns_stream = std::pin::pin!(ns_stream);
    while let Ok(Some(Ok(ev))) =
        tokio::time::timeout(Duration::from_millis(300), ns_stream.next()).await
    {
        if let WatchEvent::Modified(n) = ev {
            saw_remaining |= n
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "NamespaceContentRemaining" && c.status == "True");
        }
    }
    assert!(
        saw_remaining,
        "NamespaceContentRemaining=True while content was being removed"
    );
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
