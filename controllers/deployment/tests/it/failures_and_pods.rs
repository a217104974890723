//! Create failures (ReplicaSetCreateError), the pod-delete wake-up of Recreate, and a Recreate
//! rollout whose `NewReplicaSetCreated` status write is refused.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::common::*;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcm_testenv::{ApiError, HookDecision, RequestHook, RequestInfo};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

#[derive(Debug)]
struct FailReplicaSetCreates;

impl RequestHook for FailReplicaSetCreates {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        if req.verb == "create" && req.resource == "replicasets" {
            return HookDecision::Fail {
                error: ApiError::new(403, "Forbidden", "exceeded quota: compute"),
                retry_after: None,
            };
        }
        HookDecision::Continue
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_create_reports_replica_set_create_error() {
    let h = Harness::start().await;
    h.env().set_hook(Some(Arc::new(FailReplicaSetCreates)));
    let d = h.create(&rolling("web", 1, 1, 0)).await;
    let cond = wait_for("ReplicaSetCreateError", || async {
        let d = h.get("web").await;
        condition(&d, "Progressing").filter(|c| c.1 == "ReplicaSetCreateError")
    })
    .await;
    // Lift the quota at once: every further failure doubles the key's backoff (and after 15
    // requeues the key is dropped), so checking the events first would make the recovery
    // below depend on how fast this machine is.
    h.env().set_hook(None);
    assert_eq!(cond.0, "False");
    assert!(
        cond.2
            .starts_with("Failed to create new replica set \"web-")
            && cond.2.ends_with("\": exceeded quota: compute"),
        "{}",
        cond.2
    );
    h.wait_for_event("web", "ReplicaSetCreateError", &cond.2)
        .await;
    let events = h.events_for("web").await;
    assert!(
        events
            .iter()
            .any(|(t, r, _)| t == "Warning" && r == "ReplicaSetCreateError")
    );

    // The key is retried with backoff; now that creates work again the rollout proceeds.
    wait_for("ReplicaSet after the quota is lifted", || async {
        h.owned_replica_sets(&d).await.into_iter().next()
    })
    .await;
    wait_until("Progressing True again", || async {
        condition(&h.get("web").await, "Progressing").is_some_and(|c| c.0 == "True")
    })
    .await;
    h.shutdown().await;
}

fn pod_of(rs_name: &str, rs_uid: &str, app: &str, name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: rs_name.into(),
                uid: rs_uid.into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("nginx:1".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    }
}

/// A Recreate Deployment `web` of `replicas`, and one pod of its first ReplicaSet made by hand
/// (`web-pod-1`, Pending: no kubelet): returns the Deployment, that ReplicaSet's name and the
/// pods' API.
async fn recreate_with_an_old_pod(h: &Harness, replicas: i32) -> (Deployment, String, Api<Pod>) {
    let d = h.create(&recreate("web", replicas)).await;
    let old = h.first_replica_set(&d).await;
    let old_name = old.metadata.name.clone().unwrap();
    let old_uid = old.metadata.uid.clone().unwrap();
    let pods: Api<Pod> = Api::namespaced(h.client.clone(), NS);
    pods.create(
        &PostParams::default(),
        &pod_of(&old_name, &old_uid, "web", "web-pod-1"),
    )
    .await
    .expect("create pod");
    (d, old_name, pods)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_waits_for_old_pods_and_wakes_on_pod_delete() {
    let h = Harness::start().await;
    let (d, old_name, pods) = recreate_with_an_old_pod(&h, 1).await;
    h.fake_rs_status(&old_name, 1, 1).await;

    h.set_image("web", "nginx:2").await;
    h.wait_scaled_to(&old_name, 0).await;
    // The ReplicaSet reports no replicas any more, but its pod still exists.
    h.fake_rs_status(&old_name, 0, 0).await;
    let status_written = h.replica_sets().get(&old_name).await.unwrap();
    wait_until("the RS status update was synced", || async {
        // The status change enqueued the Deployment; its sync recomputes the status.
        let d = h.get("web").await;
        d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0) == 0
    })
    .await;
    assert_eq!(
        h.owned_replica_sets(&d).await.len(),
        1,
        "new ReplicaSet created while an old pod exists (rs rv {:?})",
        status_written.metadata.resource_version
    );

    // Deleting the last old pod wakes the Recreate Deployment up.
    pods.delete("web-pod-1", &DeleteParams::default().grace_period(0))
        .await
        .expect("delete pod");
    let new = h.replica_set_with_image(&d, "nginx:2").await;
    assert_eq!(spec_replicas(&new), 1);
    h.shutdown().await;
}

/// Once armed, fails the next status write of a Deployment with a 409 (nothing changed on the
/// server), then lets everything through.
#[derive(Debug, Default)]
struct RefuseNextDeploymentStatus {
    armed: AtomicBool,
    refused: AtomicUsize,
}

impl RequestHook for RefuseNextDeploymentStatus {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        let status_write = req.verb == "update"
            && req.resource == "deployments"
            && req.subresource.as_deref() == Some("status");
        if status_write && self.armed.swap(false, Ordering::SeqCst) {
            self.refused.fetch_add(1, Ordering::SeqCst);
            return HookDecision::Fail {
                error: ApiError::new(
                    409,
                    "Conflict",
                    "Operation cannot be fulfilled on deployments.apps \"web\": the object has \
                     been modified; please apply your changes to the latest version and try again",
                ),
                retry_after: None,
            };
        }
        HookDecision::Continue
    }
}

/// The status write that records Progressing=True/`NewReplicaSetCreated` is made once, by the
/// sync that creates the ReplicaSet; when it is refused, upstream never makes it again, and the
/// previous rollout's Progressing=True/`NewReplicaSetAvailable` stays (no progress is estimated
/// while `replicas == updatedReplicas` under that reason, always so in a Recreate rollout).
/// Upstream's end state, from kube-apiserver's audit log of `cargo xtask diff --only recreate`
/// on a loaded machine (2026-12-07): Progressing still naming the previous ReplicaSet, then
/// Available, which turned True again after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_with_its_new_replica_set_condition_refused_keeps_the_previous_progressing() {
    let h = Harness::start().await;
    let hook = Arc::new(RefuseNextDeploymentStatus::default());
    h.env().set_hook(Some(hook.clone()));
    // Its old pod holds the Recreate rollout until the hook is armed.
    let (d, old_name, pods) = recreate_with_an_old_pod(&h, 2).await;
    h.fake_rs_status(&old_name, 2, 2).await;
    let done_1 = format!("ReplicaSet \"{old_name}\" has successfully progressed.");
    wait_until("rollout 1 complete", || async {
        condition(&h.get("web").await, "Progressing").is_some_and(|c| c.2 == done_1)
    })
    .await;

    h.set_image("web", "nginx:2").await;
    h.wait_scaled_to(&old_name, 0).await;
    h.fake_rs_status(&old_name, 0, 0).await;
    wait_until("the Deployment shows no available replica", || async {
        condition(&h.get("web").await, "Available").is_some_and(|c| c.0 == "False")
    })
    .await;
    // The next status write is the sync's that creates the new ReplicaSet.
    hook.armed.store(true, Ordering::SeqCst);
    pods.delete("web-pod-1", &DeleteParams::default().grace_period(0))
        .await
        .expect("delete pod");
    let new = h.replica_set_with_image(&d, "nginx:2").await;
    let new_name = new.metadata.name.clone().unwrap();
    wait_until("the refused status write", || async {
        hook.refused.load(Ordering::SeqCst) == 1
    })
    .await;
    h.fake_rs_status(&new_name, 2, 2).await;
    let d = wait_for("rollout 2 complete", || async {
        let d = h.get("web").await;
        let st = d.status.clone().unwrap_or_default();
        let available = condition(&d, "Available").is_some_and(|c| c.0 == "True");
        (available && st.updated_replicas == Some(2) && st.available_replicas == Some(2))
            .then_some(d)
    })
    .await;
    let conditions: Vec<(String, String, String, String)> = d
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            (
                c.type_.unwrap_or_default(),
                c.status.unwrap_or_default(),
                c.reason.unwrap_or_default(),
                c.message.unwrap_or_default(),
            )
        })
        .collect();
    let row = |t: &str, s: &str, r: &str, m: &str| (t.into(), s.into(), r.into(), m.into());
    assert_eq!(
        conditions,
        vec![
            row("Progressing", "True", "NewReplicaSetAvailable", &done_1),
            row(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability."
            ),
        ],
        "the new ReplicaSet is {new_name}"
    );
    h.shutdown().await;
}

/// Fails the uncached GET of Deployments (the adoption pre-check); list/watch still work.
#[derive(Debug)]
struct FailDeploymentGets;

impl RequestHook for FailDeploymentGets {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        if req.verb == "get" && req.resource == "deployments" && req.subresource.is_none() {
            return HookDecision::Fail {
                error: ApiError::new(503, "ServiceUnavailable", "etcd is sulking"),
                retry_after: None,
            };
        }
        HookDecision::Continue
    }
}

/// Upstream `TestSyncDeploymentDeletionRace` in spirit: adoption needs a fresh (uncached)
/// read of the Deployment; while that read fails, the orphan is not adopted and the sync
/// fails (and is retried) without creating anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adoption_requires_the_uncached_recheck() {
    let h = Harness::start().await;
    let env = h.env();
    let orphan = serde_json::from_value::<k8s_openapi::api::apps::v1::ReplicaSet>(json!({
        "metadata": {"name": "orphan", "namespace": NS, "labels": {"app": "web"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}
            }
        }
    }))
    .expect("rs");
    h.replica_sets()
        .create(&PostParams::default(), &orphan)
        .await
        .expect("create orphan");
    env.set_hook(Some(Arc::new(FailDeploymentGets)));
    let gets_before = env.counters().count("get", "deployments");
    let d = h.create(&rolling("web", 1, 1, 0)).await;
    wait_until("the adoption pre-check was attempted", || async {
        env.counters().count("get", "deployments") > gets_before
    })
    .await;
    let rs = h.replica_sets().get("orphan").await.unwrap();
    assert!(
        rs.metadata.owner_references.is_none(),
        "adopted without recheck"
    );
    assert!(h.owned_replica_sets(&d).await.is_empty());

    env.set_hook(None);
    wait_until("adoption after the recheck succeeds", || async {
        let rs = h.replica_sets().get("orphan").await.unwrap();
        rs.metadata
            .owner_references
            .unwrap_or_default()
            .iter()
            .any(|r| Some(&r.uid) == d.metadata.uid.as_ref())
    })
    .await;
    // The adopted ReplicaSet has the Deployment's template: it is the new one, no other.
    assert_eq!(h.owned_replica_sets(&d).await.len(), 1);
    h.shutdown().await;
}
