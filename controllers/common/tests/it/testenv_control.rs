//! End-to-end checks against the embedded API server (kcm-testenv): pod
//! creation/deletion with their events written through the broadcaster, and
//! adopt/release patches through the controller-ref manager.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::{Container, Event, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kcm_controller::controller_ref_manager::{
    ControllerRefManager, ControllerRefOwner, live_can_adopt,
};
use kcm_controller::event_correlator::EventCorrelator;
use kcm_controller::event_recorder::{EventBroadcaster, KubeEventSink, object_reference};
use kcm_controller::pod_control::{KubePodControl, PodControl};
use kcm_controller::pod_view::PodView;
use kcm_testenv::TestCluster;
use kube::api::{Api, ListParams, PostParams};

fn labels(app: &str) -> BTreeMap<String, String> {
    [("app".to_string(), app.to_string())].into_iter().collect()
}

fn spec() -> PodSpec {
    PodSpec {
        containers: vec![Container {
            name: "c".into(),
            image: Some("nginx".into()),
            ..Default::default()
        }],
        ..Default::default()
    }
}

async fn create_rs(client: &kube::Client) -> ReplicaSet {
    let rs = ReplicaSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(0),
            selector: LabelSelector {
                match_labels: Some(labels("web")),
                ..Default::default()
            },
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels("web")),
                    ..Default::default()
                }),
                spec: Some(spec()),
            }),
            ..Default::default()
        },
        status: None,
    };
    Api::<ReplicaSet>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &rs)
        .await
        .expect("create replicaset")
}

/// The API server alone, its client, and the ReplicaSet `default/web` created on it.
async fn cluster_with_rs() -> (TestCluster, kube::Client, ReplicaSet) {
    let cluster = TestCluster::builder()
        .start()
        .await
        .expect("test cluster starts");
    let client = cluster.client();
    let rs = create_rs(&client).await;
    (cluster, client, rs)
}

#[tokio::test]
async fn pod_control_creates_deletes_and_records_events() {
    let (cluster, client, rs) = cluster_with_rs().await;
    let owner = ControllerRefOwner::of(&rs);
    let owner_ref = object_reference(&rs);

    let broadcaster = EventBroadcaster::start(
        KubeEventSink::new(client.clone()),
        EventCorrelator::default(),
    );
    let control = KubePodControl::new(
        client.clone(),
        broadcaster.new_recorder("replicaset-controller", None),
    );
    let template = rs.spec.template.clone().expect("template");
    for _ in 0..2 {
        control
            .create_pods("default", &template, &owner_ref, &owner.controller_ref())
            .await
            .expect("create pod");
    }

    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let list = pods.list(&ListParams::default()).await.expect("list pods");
    assert_eq!(list.items.len(), 2);
    let first = list.items[0].metadata.name.clone().expect("generated name");
    assert!(first.starts_with("web-"), "{first}");
    assert_eq!(
        list.items[0]
            .metadata
            .owner_references
            .as_ref()
            .map(|r| r[0].uid.clone()),
        rs.metadata.uid.clone()
    );

    control
        .delete_pod("default", &first, &owner_ref)
        .await
        .expect("delete pod");
    let missing = control
        .delete_pod("default", "nope", &owner_ref)
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    broadcaster.shutdown().await;

    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let events = events
        .list(&ListParams::default())
        .await
        .expect("list events")
        .items;
    let by_reason = |r: &str| {
        events
            .iter()
            .filter(|e| e.reason.as_deref() == Some(r))
            .collect::<Vec<_>>()
    };
    let created = by_reason("SuccessfulCreate");
    assert_eq!(
        created.len(),
        2,
        "two distinct messages, two events: {events:?}"
    );
    assert!(created.iter().all(|e| {
        e.message
            .as_deref()
            .is_some_and(|m| m.starts_with("Created pod: web-"))
    }));
    assert_eq!(
        created[0].involved_object.kind.as_deref(),
        Some("ReplicaSet")
    );
    assert_eq!(
        created[0]
            .source
            .as_ref()
            .and_then(|s| s.component.as_deref()),
        Some("replicaset-controller")
    );
    let deleted = by_reason("SuccessfulDelete");
    assert_eq!(deleted.len(), 1);
    assert_eq!(
        deleted[0].message.as_deref(),
        Some(format!("Deleted pod: {first}").as_str())
    );
    assert!(
        by_reason("FailedDelete").is_empty(),
        "no event for NotFound"
    );
    cluster.shutdown().await;
}

#[tokio::test]
async fn repeated_event_is_patched_to_count_two() {
    let (cluster, client, rs) = cluster_with_rs().await;
    let broadcaster = EventBroadcaster::start(
        KubeEventSink::new(client.clone()),
        EventCorrelator::default(),
    );
    let rec = broadcaster.new_recorder("replicaset-controller", None);
    for _ in 0..2 {
        rec.record(
            &object_reference(&rs),
            kcm_controller::event_recorder::EventType::Warning,
            "FailedCreate",
            "Error creating: quota",
        );
    }
    broadcaster.shutdown().await;
    let events = Api::<Event>::namespaced(client, "default")
        .list(&ListParams::default())
        .await
        .expect("list events")
        .items;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].count, Some(2));
    cluster.shutdown().await;
}

#[tokio::test]
async fn claim_adopts_and_releases_through_strategic_merge_patch() {
    let (cluster, client, rs) = cluster_with_rs().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let orphan = Pod {
        metadata: ObjectMeta {
            name: Some("orphan".into()),
            labels: Some(labels("web")),
            ..Default::default()
        },
        spec: Some(spec()),
        status: None,
    };
    pods.create(&PostParams::default(), &orphan)
        .await
        .expect("create orphan");
    let (recorder, _rx) =
        kcm_controller::event_recorder::EventRecorder::channel("replicaset-controller", 8);
    let control = KubePodControl::new(client.clone(), recorder);
    let owner = ControllerRefOwner::of(&rs);
    let views: Api<PodView> = Api::namespaced(client.clone(), "default");
    let cached: Vec<Arc<PodView>> = views
        .list(&ListParams::default())
        .await
        .expect("list pod views")
        .items
        .into_iter()
        .map(Arc::new)
        .collect();

    let rs_api = Api::<ReplicaSet>::namespaced(client.clone(), "default");
    let name = owner.name.clone();
    let can_adopt = live_can_adopt(owner.clone(), async move {
        rs_api
            .get(&name)
            .await
            .map(|rs| rs.metadata)
            .map_err(kcm_controller::ControlError::from)
    });
    let mut m = ControllerRefManager::new(owner.clone(), can_adopt);
    let claimed = m
        .claim_pods(&control, &cached, |p: &PodView| {
            p.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("app"))
                .is_some_and(|v| v == "web")
        })
        .await
        .into_result()
        .expect("adopt");
    assert_eq!(claimed.len(), 1);
    let adopted = pods.get("orphan").await.expect("get");
    let refs = adopted
        .metadata
        .owner_references
        .clone()
        .expect("owner refs");
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].uid, owner.uid);
    assert_eq!(refs[0].controller, Some(true));

    // The selector no longer matches: release.
    let cached: Vec<Arc<PodView>> = views
        .list(&ListParams::default())
        .await
        .expect("list pod views")
        .items
        .into_iter()
        .map(Arc::new)
        .collect();
    let mut m = ControllerRefManager::without_recheck(owner);
    let claimed = m
        .claim_pods(&control, &cached, |_p: &PodView| false)
        .await
        .into_result()
        .expect("release");
    assert!(claimed.is_empty());
    let released = pods.get("orphan").await.expect("get");
    assert!(
        released
            .metadata
            .owner_references
            .as_ref()
            .is_none_or(Vec::is_empty),
        "{:?}",
        released.metadata.owner_references
    );
    cluster.shutdown().await;
}
