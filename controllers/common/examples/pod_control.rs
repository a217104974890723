//! The building blocks of a controller's sync against an embedded kcm-testenv API server:
//! expectations guard against acting twice on a stale cache, `KubePodControl` creates and deletes
//! pods owned by a ReplicaSet, and the event broadcaster writes their events.
//!
//! `cargo run -p kcm-controller --example pod_control`

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Event, Pod};
use kcm_controller::ControllerExpectations;
use kcm_controller::controller_ref_manager::ControllerRefOwner;
use kcm_controller::event_correlator::EventCorrelator;
use kcm_controller::event_recorder::{EventBroadcaster, KubeEventSink, object_reference};
use kcm_controller::pod_control::{KubePodControl, PodControl};
use kcm_testenv::{TestEnv, TestEnvConfig};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = TestEnv::start(TestEnvConfig::default()).await?;
    let client = env.client();
    let rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    }))?;
    let rs = Api::<ReplicaSet>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &rs)
        .await?;
    let template = rs.spec.template.clone().unwrap_or_default();

    let sink = KubeEventSink::new(client.clone());
    let events = EventBroadcaster::start(sink, EventCorrelator::default());
    let recorder = events.new_recorder("replicaset-controller", None);
    let control = KubePodControl::new(client.clone(), recorder);
    let owner = object_reference(&rs);
    let controller_ref = ControllerRefOwner::of(&rs).controller_ref();
    let expectations = ControllerExpectations::new();
    let key = kcm_store::ObjectKey::new("default", "web");

    // Record what we are about to do, then do it; a pod informer handler observes the creations.
    expectations.expect_creations(&key, 2);
    for _ in 0..2 {
        control
            .create_pods("default", &template, &owner, &controller_ref)
            .await?;
    }
    for _ in 0..2 {
        let satisfied = expectations.satisfied_expectations(&key);
        println!("expectations satisfied: {satisfied}; the informer observes one creation");
        expectations.creation_observed(&key);
    }
    let satisfied = expectations.satisfied_expectations(&key);
    println!("expectations satisfied: {satisfied}");

    let pods = Api::<Pod>::namespaced(client.clone(), "default");
    let pods = pods.list(&ListParams::default()).await?.items;
    for p in &pods {
        let owners = p.metadata.owner_references.iter().flatten();
        let by: Vec<_> = owners.map(|r| format!("{}/{}", r.kind, r.name)).collect();
        println!("pod {:?} controlled by {by:?}", p.metadata.name);
    }
    let victim = pods[0].metadata.name.clone().unwrap_or_default();
    control.delete_pod("default", &victim, &owner).await?;

    events.shutdown().await; // flushes the pending events
    let written = Api::<Event>::namespaced(client, "default");
    for e in written.list(&ListParams::default()).await?.items {
        println!("event {:?}: {:?}", e.reason, e.message);
    }
    env.shutdown().await;
    Ok(())
}
