//! Shared helpers of the integration tests: test clusters, a ReplicaSet fixture, a controller
//! running against a kcm-testenv API server, and polling waits.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kcm_controller::pod_util::is_pod_active;
use kcm_informer::{InformerFactory, InformerOptions};
use kcm_replicaset::{ReplicaSetController, ReplicaSetControllerConfig};
use kcm_testenv::{TestCluster, TestClusterBuilder};
use kube::api::{Api, ListParams, PostParams};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub const NS: &str = "default";

/// A test cluster of the API server alone.
pub async fn api_server() -> TestCluster {
    start(TestCluster::builder()).await
}

/// The API server and three simulated nodes whose pods become Ready 50 ms after they are
/// bound and whose graceful deletion takes at most 200 ms.
pub async fn sim_cluster() -> TestCluster {
    start(
        TestCluster::builder()
            .pod_ready_after(Duration::from_millis(50))
            .max_grace(Duration::from_millis(200)),
    )
    .await
}

async fn start(builder: TestClusterBuilder) -> TestCluster {
    builder.start().await.expect("test cluster starts")
}

pub fn labels(app: &str) -> BTreeMap<String, String> {
    [("app".to_string(), app.to_string())].into_iter().collect()
}

pub fn replica_set(name: &str, app: &str, replicas: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels(app)),
                ..Default::default()
            },
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(app)),
                    ..Default::default()
                }),
                spec: Some(pod_spec()),
            }),
            ..Default::default()
        },
        status: None,
    }
}

/// Creates `replica_set(name, name, replicas)`; returns the namespace's ReplicaSets.
pub async fn create_rs(client: &kube::Client, name: &str, replicas: i32) -> Api<ReplicaSet> {
    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), NS);
    rss.create(&PostParams::default(), &replica_set(name, name, replicas))
        .await
        .expect("create rs");
    rss
}

pub fn pod_spec() -> PodSpec {
    PodSpec {
        containers: vec![Container {
            name: "c".into(),
            image: Some("nginx".into()),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A running controller over its own informer factory.
#[derive(Debug)]
pub struct Running {
    pub cancel: CancellationToken,
    pub factory: InformerFactory,
    pub task: JoinHandle<()>,
}

impl Running {
    pub async fn start(client: kube::Client) -> Self {
        let factory = InformerFactory::new(client.clone(), InformerOptions::default());
        let controller =
            ReplicaSetController::new(client, &factory, ReplicaSetControllerConfig::default())
                .expect("controller");
        let cancel = CancellationToken::new();
        factory.start(&cancel);
        let task = tokio::spawn(controller.run(cancel.clone()));
        Self {
            cancel,
            factory,
            task,
        }
    }

    pub async fn stop(self) {
        self.cancel.cancel();
        self.task.await.expect("controller task");
        self.factory.shutdown().await;
    }
}

/// Polls `check` every 50 ms until it returns `Some`, failing after `timeout`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Active pods (not terminal, not terminating) with the `app` label.
pub async fn active_pods(client: &kube::Client, app: &str) -> Vec<Pod> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    pods.list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .into_iter()
        .filter(is_pod_active)
        .collect()
}

pub async fn get_rs(client: &kube::Client, name: &str) -> ReplicaSet {
    Api::<ReplicaSet>::namespaced(client.clone(), NS)
        .get(name)
        .await
        .expect("get rs")
}
