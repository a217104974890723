//! The controller against the embedded API server (no kubelet): exact pod
//! counts, adoption and release, create failures reported and recovered.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::*;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_testenv::{ApiError, HookDecision, RequestHook, RequestInfo};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

fn owned_by(p: &Pod, rs: &ReplicaSet) -> bool {
    p.metadata.owner_references.as_ref().is_some_and(|refs| {
        refs.iter()
            .any(|r| r.controller == Some(true) && Some(&r.uid) == rs.metadata.uid.as_ref())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_exactly_replicas_adopts_orphans_and_releases() {
    let cluster = api_server().await;
    let client = cluster.client();
    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), NS);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);

    // An orphan with matching labels exists before the ReplicaSet.
    let orphan = Pod {
        metadata: ObjectMeta {
            name: Some("orphan".into()),
            labels: Some(labels("web")),
            ..Default::default()
        },
        spec: Some(pod_spec()),
        status: None,
    };
    pods.create(&PostParams::default(), &orphan)
        .await
        .expect("orphan");
    let running = Running::start(client.clone()).await;
    let rs = rss
        .create(&PostParams::default(), &replica_set("web", "web", 5))
        .await
        .expect("create rs");

    let rs = eventually("5 owned pods and status.replicas 5", WAIT, || async {
        let active = active_pods(&client, "web").await;
        let cur = get_rs(&client, "web").await;
        let replicas = cur.status.as_ref().map_or(0, |s| s.replicas);
        (active.len() == 5 && active.iter().all(|p| owned_by(p, &rs)) && replicas == 5)
            .then_some(cur)
    })
    .await;
    // The orphan was adopted, so only 4 pods were created.
    let adopted = pods.get("orphan").await.expect("orphan still exists");
    assert!(owned_by(&adopted, &rs), "orphan adopted");
    let writes = cluster.env().counters().count("create", "pods");
    assert_eq!(writes, 5, "1 orphan + exactly 4 creates");
    let status = rs.status.clone().unwrap_or_default();
    assert_eq!(status.observed_generation, rs.metadata.generation);

    // A pod relabelled away is released and replaced.
    pods.patch(
        "orphan",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "elsewhere"}}})),
    )
    .await
    .expect("relabel");
    eventually("orphan released and replaced", WAIT, || async {
        let released = pods.get("orphan").await.ok()?;
        let active = active_pods(&client, "web").await;
        (!owned_by(&released, &rs) && active.len() == 5).then_some(())
    })
    .await;

    // Scale down: exactly 2 remain, and they are still owned.
    rss.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 2}})),
    )
    .await
    .expect("scale");
    eventually("scaled to 2", WAIT, || async {
        let active = active_pods(&client, "web").await;
        let replicas = get_rs(&client, "web")
            .await
            .status
            .map_or(0, |s| s.replicas);
        (active.len() == 2 && replicas == 2).then_some(())
    })
    .await;
    // No further creates happened after settling (never double-creates).
    let creates = cluster.env().counters().count("create", "pods");
    tokio::task::yield_now().await;
    assert_eq!(creates, 6, "1 orphan + 4 + 1 replacement");

    running.stop().await;
    cluster.shutdown().await;
}

#[derive(Debug, Default)]
struct FailPodCreates(AtomicBool);

impl RequestHook for FailPodCreates {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        if self.0.load(Ordering::SeqCst) && req.verb == "create" && req.resource == "pods" {
            return HookDecision::Fail {
                error: ApiError::new(
                    403,
                    "Forbidden",
                    "pods \"web-\" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=0, limited: pods=0",
                ),
                retry_after: None,
            };
        }
        HookDecision::Continue
    }
}

/// The first Event with `reason`, once there is one.
async fn event_with_reason(events: &Api<Event>, reason: &str) -> Event {
    eventually(&format!("{reason} event"), WAIT, || async {
        events
            .list(&ListParams::default())
            .await
            .ok()?
            .items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some(reason))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_failures_set_condition_and_events_then_recover() {
    let hook = Arc::new(FailPodCreates(AtomicBool::new(true)));
    let cluster = api_server().await;
    cluster.env().set_hook(Some(hook.clone()));
    let client = cluster.client();
    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), NS);
    let running = Running::start(client.clone()).await;
    rss.create(&PostParams::default(), &replica_set("quota", "quota", 3))
        .await
        .expect("create rs");

    let cond = eventually("ReplicaFailure condition", WAIT, || async {
        let rs = get_rs(&client, "quota").await;
        rs.status?
            .conditions?
            .into_iter()
            .find(|c| c.type_.as_deref() == Some("ReplicaFailure"))
    })
    .await;
    assert_eq!(cond.status.as_deref(), Some("True"));
    assert_eq!(cond.reason.as_deref(), Some("FailedCreate"));
    assert!(
        cond.message
            .as_deref()
            .is_some_and(|m| m.contains("exceeded quota")),
        "{cond:?}"
    );

    let events: Api<Event> = Api::namespaced(client.clone(), NS);
    let ev = event_with_reason(&events, "FailedCreate").await;
    assert_eq!(ev.type_.as_deref(), Some("Warning"));
    assert!(
        ev.message
            .as_deref()
            .is_some_and(|m| m.starts_with("Error creating: pods \"web-\" is forbidden"))
    );
    assert_eq!(
        ev.source.and_then(|s| s.component).as_deref(),
        Some("replicaset-controller")
    );
    assert_eq!(ev.involved_object.name.as_deref(), Some("quota"));

    // Quota lifted: the retries (rate-limited) succeed and the condition goes away.
    hook.0.store(false, Ordering::SeqCst);
    eventually("3 pods and no condition", WAIT, || async {
        let rs = get_rs(&client, "quota").await;
        let st = rs.status.unwrap_or_default();
        let clear = st
            .conditions
            .unwrap_or_default()
            .iter()
            .all(|c| c.type_.as_deref() != Some("ReplicaFailure"));
        (clear && st.replicas == 3 && active_pods(&client, "quota").await.len() == 3).then_some(())
    })
    .await;
    let ok = event_with_reason(&events, "SuccessfulCreate").await;
    assert!(
        ok.message
            .as_deref()
            .is_some_and(|m| m.starts_with("Created pod: quota-"))
    );

    running.stop().await;
    cluster.shutdown().await;
}
