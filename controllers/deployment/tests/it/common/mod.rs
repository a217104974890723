//! Shared harness of the controller tests: a test cluster (the embedded API server, with the
//! simulation when a test asks for it), a running `DeploymentController`, object builders and
//! polling waits.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, ReplicaSet, ReplicaSetStatus,
    RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{Container, Event, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_deployment::{DeploymentController, DeploymentControllerConfig};
use kcm_informer::{CancellationToken, InformerFactory, InformerOptions};
use kcm_replicaset::{ReplicaSetController, ReplicaSetControllerConfig};
use kcm_testenv::{TestCluster, TestClusterBuilder, TestEnv};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};

pub const NS: &str = "default";

/// Longest a wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

pub struct Harness {
    pub cluster: TestCluster,
    pub client: kube::Client,
    pub cancel: CancellationToken,
    pub task: Option<tokio::task::JoinHandle<()>>,
    /// The ReplicaSet controller, when it runs too ([`Harness::start_with_replicasets`]).
    pub rs_task: Option<tokio::task::JoinHandle<()>>,
    pub factory: InformerFactory,
}

impl Harness {
    /// API server + factory + running controller.
    pub async fn start() -> Harness {
        let cluster = TestCluster::builder()
            .start()
            .await
            .expect("test cluster starts");
        let client = cluster.client();
        Self::start_with(cluster, client).await
    }

    /// The controller on `cluster`, talking to it through `client`.
    pub async fn start_with(cluster: TestCluster, client: kube::Client) -> Harness {
        Self::launch(cluster, client, false).await
    }

    /// The cluster `builder` describes (the simulation, say) + factory + the Deployment and
    /// ReplicaSet controllers running on that one factory.
    pub async fn start_with_replicasets(builder: TestClusterBuilder) -> Harness {
        let cluster = builder.start().await.expect("test cluster starts");
        let client = cluster.client();
        Self::launch(cluster, client, true).await
    }

    async fn launch(cluster: TestCluster, client: kube::Client, replicasets: bool) -> Harness {
        let factory = InformerFactory::new(client.clone(), InformerOptions::default());
        let controller = DeploymentController::new(
            client.clone(),
            &factory,
            DeploymentControllerConfig::default(),
        )
        .expect("controller builds");
        let rs_controller = replicasets.then(|| {
            ReplicaSetController::new(
                client.clone(),
                &factory,
                ReplicaSetControllerConfig::default(),
            )
            .expect("replicaset controller builds")
        });
        let cancel = CancellationToken::new();
        factory.start(&cancel);
        let task = tokio::spawn(controller.run(cancel.clone()));
        let rs_task = rs_controller.map(|c| tokio::spawn(c.run(cancel.clone())));
        Harness {
            cluster,
            client,
            cancel,
            task: Some(task),
            rs_task,
            factory,
        }
    }

    /// The API server (controls and counters).
    pub fn env(&self) -> &TestEnv {
        self.cluster.env()
    }

    pub fn deployments(&self) -> Api<Deployment> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub fn replica_sets(&self) -> Api<ReplicaSet> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub async fn get(&self, name: &str) -> Deployment {
        self.deployments().get(name).await.expect("get deployment")
    }

    /// ReplicaSets controlled by the Deployment `name` (by owner UID), oldest first.
    pub async fn owned_replica_sets(&self, d: &Deployment) -> Vec<ReplicaSet> {
        let uid = d.metadata.uid.clone().unwrap_or_default();
        let mut list: Vec<ReplicaSet> = self
            .replica_sets()
            .list(&ListParams::default())
            .await
            .expect("list replicasets")
            .items
            .into_iter()
            .filter(|rs| {
                rs.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|r| r.controller == Some(true) && r.uid == uid)
            })
            .collect();
        list.sort_by_key(|rs| rs.metadata.creation_timestamp.clone().map(|t| t.0));
        list
    }

    pub async fn create(&self, d: &Deployment) -> Deployment {
        self.deployments()
            .create(&PostParams::default(), d)
            .await
            .expect("create deployment")
    }

    pub async fn merge_patch(&self, name: &str, patch: serde_json::Value) -> Deployment {
        self.deployments()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch deployment")
    }

    /// Rolls the Deployment `name` to `image` (its one container `c`).
    pub async fn set_image(&self, name: &str, image: &str) -> Deployment {
        self.merge_patch(
            name,
            serde_json::json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}),
        )
        .await
    }

    /// The first ReplicaSet the controller creates for `d`, once it exists.
    pub async fn first_replica_set(&self, d: &Deployment) -> ReplicaSet {
        wait_for("first ReplicaSet", || async {
            self.owned_replica_sets(d).await.into_iter().next()
        })
        .await
    }

    /// The ReplicaSet of `d` whose template runs `image`, once it exists.
    pub async fn replica_set_with_image(&self, d: &Deployment, image_name: &str) -> ReplicaSet {
        wait_for("new ReplicaSet", || async {
            self.owned_replica_sets(d)
                .await
                .into_iter()
                .find(|rs| image(rs) == image_name)
        })
        .await
    }

    /// Waits until the ReplicaSet `rs_name` wants `replicas` pods.
    pub async fn wait_scaled_to(&self, rs_name: &str, replicas: i32) {
        wait_until(
            &format!("ReplicaSet {rs_name} scaled to {replicas}"),
            || async {
                spec_replicas(&self.replica_sets().get(rs_name).await.unwrap()) == replicas
            },
        )
        .await;
    }

    /// Pretends a ReplicaSet controller and kubelets made every desired pod of `rs_name`
    /// exist with `available` of them available (and ready).
    pub async fn fake_rs_status(&self, rs_name: &str, replicas: i32, available: i32) {
        for _ in 0..20 {
            let mut rs = self.replica_sets().get(rs_name).await.expect("get rs");
            rs.status = Some(ReplicaSetStatus {
                replicas,
                fully_labeled_replicas: Some(replicas),
                ready_replicas: Some(available),
                available_replicas: Some(available),
                observed_generation: rs.metadata.generation,
                terminating_replicas: Some(0),
                conditions: None,
            });
            match self
                .replica_sets()
                .replace_status(rs_name, &PostParams::default(), &rs)
                .await
            {
                Ok(_) => return,
                Err(kube::Error::Api(s)) if s.code == 409 => continue,
                Err(e) => panic!("fake status of {rs_name}: {e}"),
            }
        }
        panic!("fake status of {rs_name}: too many conflicts");
    }

    /// Every Event about `object` (any kind) in the namespace, as (type, reason, message).
    pub async fn events_for(&self, object: &str) -> Vec<(String, String, String)> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), NS);
        api.list(&ListParams::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(object))
            .map(|e| {
                (
                    e.type_.unwrap_or_default(),
                    e.reason.unwrap_or_default(),
                    e.message.unwrap_or_default(),
                )
            })
            .collect()
    }

    pub async fn wait_for_event(&self, object: &str, reason: &str, message: &str) {
        wait_until(
            &format!("event {reason} {message:?} on {object}"),
            || async {
                self.events_for(object)
                    .await
                    .iter()
                    .any(|(_, r, m)| r == reason && m == message)
            },
        )
        .await;
    }

    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.rs_task.take() {
            let _ = task.await;
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.factory.shutdown().await;
        self.cluster.shutdown().await;
    }
}

/// Polls `check` every 20 ms until it holds; panics with `what` after [`WAIT`].
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if check().await {
            return;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls `get` until it returns `Some`, then returns the value.
pub async fn wait_for<T, F, Fut>(what: &str, mut get: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(v) = get().await {
            return v;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn labels(app: &str) -> BTreeMap<String, String> {
    [("app".to_string(), app.to_string())].into_iter().collect()
}

pub fn template(app: &str, image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(app)),
            ..Default::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some(image.into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

/// A RollingUpdate Deployment `name` selecting `app=<name>`.
pub fn rolling(name: &str, replicas: i32, max_surge: i32, max_unavailable: i32) -> Deployment {
    let mut d = base(name, replicas);
    d.spec.strategy = Some(DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_surge: Some(IntOrString::Int(max_surge)),
            max_unavailable: Some(IntOrString::Int(max_unavailable)),
        }),
    });
    d
}

/// A Recreate Deployment `name` selecting `app=<name>`.
pub fn recreate(name: &str, replicas: i32) -> Deployment {
    let mut d = base(name, replicas);
    d.spec.strategy = Some(DeploymentStrategy {
        type_: Some("Recreate".into()),
        rolling_update: None,
    });
    d
}

fn base(name: &str, replicas: i32) -> Deployment {
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels(name)),
                ..Default::default()
            },
            template: template(name, "nginx:1"),
            ..Default::default()
        },
        status: None,
    }
}

pub fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(0)
}

pub fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

/// (status, reason, message) of condition `type_`.
pub fn condition(d: &Deployment, type_: &str) -> Option<(String, String, String)> {
    d.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_.as_deref() == Some(type_))
        .map(|c| {
            (
                c.status.clone().unwrap_or_default(),
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        })
}

pub fn image(rs: &ReplicaSet) -> String {
    rs.spec
        .template
        .as_ref()
        .and_then(|t| t.spec.as_ref())
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}
