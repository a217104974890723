//! Helpers shared by the simulation tests.
#![allow(dead_code)]

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Pod, PodCondition};
use kcm_testenv::TestCluster;
use kcm_testenv::sim::SimConfig;
use kube::Api;
use serde_json::json;

/// Liveness bound for waits (not a timing assertion: a broken simulation would hang forever).
const PATIENCE: Duration = Duration::from_secs(30);

pub fn fast_config() -> SimConfig {
    SimConfig {
        pod_ready_after: Duration::from_millis(50),
        max_grace: Duration::from_millis(300),
        crash_loop_backoff: Duration::from_millis(50),
        crash_loop_max_backoff: Duration::from_millis(200),
        ..SimConfig::default()
    }
}

/// A test cluster running the simulation with `config`.
pub async fn start_sim(config: SimConfig) -> TestCluster {
    TestCluster::builder()
        .simulation(config)
        .start()
        .await
        .expect("test cluster")
}

pub fn pod(name: &str, annotations: &[(&str, &str)]) -> Pod {
    let ann: serde_json::Map<String, serde_json::Value> = annotations
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}, "annotations": ann},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    }))
    .expect("pod")
}

pub fn condition(p: &Pod, t: &str) -> Option<PodCondition> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == t)
        .cloned()
}

pub fn is_ready(p: &Pod) -> bool {
    condition(p, "Ready").is_some_and(|c| c.status == "True")
}

pub fn phase(p: &Pod) -> Option<String> {
    p.status.as_ref()?.phase.clone()
}

pub fn restart_count(p: &Pod) -> i32 {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .map_or(0, |c| c.restart_count)
}

/// Poll until `f` yields a value.
pub async fn wait_for<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = tokio::time::Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn wait_pod(pods: &Api<Pod>, name: &str, pred: impl Fn(&Pod) -> bool) -> Pod {
    wait_for(&format!("pod {name}"), || async {
        pods.get_opt(name).await.ok().flatten().filter(|p| pred(p))
    })
    .await
}

pub async fn wait_gone<K>(api: &Api<K>, name: &str)
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    wait_for(&format!("{name} to be deleted"), || async {
        match api.get_opt(name).await {
            Ok(None) => Some(()),
            _ => None,
        }
    })
    .await
}

/// A custom resource kind of the simulation tests: `kind` (plural `<kind lowercase>s`) in
/// `group`, version `v1`, `Namespaced` or `Cluster`, any content kept.
pub fn crd(group: &str, kind: &str, scope: &str) -> serde_json::Value {
    let plural = format!("{}s", kind.to_lowercase());
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
        },
    })
}

/// Install a custom resource kind (see [`crd`]) and wait until its objects can be listed.
pub async fn install_crd(
    client: &kube::Client,
    group: &str,
    kind: &str,
    scope: &str,
) -> kube::api::ApiResource {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let body: CustomResourceDefinition =
        serde_json::from_value(crd(group, kind, scope)).expect("crd");
    crds.create(&Default::default(), &body)
        .await
        .expect("create CRD");
    let ar = kube::api::ApiResource {
        group: group.to_string(),
        version: "v1".into(),
        api_version: format!("{group}/v1"),
        kind: kind.to_string(),
        plural: format!("{}s", kind.to_lowercase()),
    };
    let all: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &ar);
    wait_for(&format!("{kind} to be served"), || async {
        all.list(&Default::default()).await.ok().map(|_| ())
    })
    .await;
    ar
}

/// A custom object `name` of `ar` in `namespace` (cluster-scoped with `None`), owned by `owners`
/// (`(reference, blockOwnerDeletion)`), with `finalizers`.
pub fn custom_object(
    ar: &kube::api::ApiResource,
    name: &str,
    owners: &[(&kube::api::ObjectMeta, &kube::api::ApiResource, bool)],
    finalizers: &[&str],
) -> kube::api::DynamicObject {
    let mut o = kube::api::DynamicObject::new(name, ar);
    o.data = json!({"spec": {"size": 1}});
    o.metadata.owner_references = Some(owner_references(owners));
    if !finalizers.is_empty() {
        o.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
    }
    o
}

/// Owner references to `owners`: `(owner's metadata, its resource, blockOwnerDeletion)`, the
/// first one the controller.
pub fn owner_references(
    owners: &[(&kube::api::ObjectMeta, &kube::api::ApiResource, bool)],
) -> Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference> {
    owners
        .iter()
        .enumerate()
        .map(|(i, (meta, ar, block))| {
            k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                api_version: ar.api_version.clone(),
                kind: ar.kind.clone(),
                name: meta.name.clone().unwrap_or_default(),
                uid: meta.uid.clone().unwrap_or_default(),
                controller: Some(i == 0),
                block_owner_deletion: Some(*block),
            }
        })
        .collect()
}

/// Create namespace `name`.
pub async fn create_namespace(client: &kube::Client, name: &str) {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns = serde_json::from_value(json!({"metadata": {"name": name}})).expect("namespace");
    namespaces
        .create(&Default::default(), &ns)
        .await
        .expect("create namespace");
}

/// A ReplicaSet `name` of 2 replicas selecting `app: name` (no controller runs in these tests).
pub fn replicaset(name: &str) -> ReplicaSet {
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

/// A pod `name` owned by `owners` (the first the controller), blocking their deletion.
pub fn owned_pod(name: &str, owners: &[&ReplicaSet]) -> Pod {
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

/// A ReplicaSet `rs_name` and `n` Ready pods it owns, `<rs_name>-<i>`.
pub async fn setup(pods: &Api<Pod>, rss: &Api<ReplicaSet>, rs_name: &str, n: usize) -> ReplicaSet {
    let rs = rss
        .create(&kube::api::PostParams::default(), &replicaset(rs_name))
        .await
        .expect("create rs");
    for i in 0..n {
        pods.create(
            &kube::api::PostParams::default(),
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
