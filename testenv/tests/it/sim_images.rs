//! Images the simulated kubelets cannot pull: the container statuses, conditions and events a
//! kubelet writes, the back-off rhythm, the configured patterns, and a fixed image starting.

use std::time::Duration;

use crate::sim_common::*;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Event, Pod};
use kcm_testenv::TestCluster;
use kcm_testenv::sim::SimConfig;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

fn pull_config() -> SimConfig {
    SimConfig {
        image_pull_backoff: Duration::from_millis(200),
        image_pull_max_backoff: Duration::from_millis(800),
        events: true,
        ..fast_config()
    }
}

fn with_image(name: &str, image: &str) -> Pod {
    let mut p = pod(name, &[]);
    if let Some(spec) = p.spec.as_mut() {
        spec.containers[0].image = Some(image.to_string());
    }
    p
}

fn waiting_reason(p: &Pod) -> Option<String> {
    p.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .first()?
        .state
        .as_ref()?
        .waiting
        .as_ref()?
        .reason
        .clone()
}

/// `webserver:404` (upstream e2e's proportional-scaling image) never runs: ErrImagePull, then
/// ImagePullBackOff, again and again, the pod Pending and not Ready, with the kubelet's events.
#[tokio::test]
async fn a_missing_image_never_runs_and_backs_off() {
    let cluster = start_sim(pull_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let rv = pods
        .list(&Default::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    let stream = pods
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch");
    pods.create(
        &PostParams::default(),
        &with_image("stuck", "webserver:404"),
    )
    .await
    .expect("create");
    // Every status the kubelet writes over three back-offs.
    let mut reasons: Vec<String> = Vec::new();
    let mut stream = std::pin::pin!(stream);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while let Ok(Some(Ok(ev))) = tokio::time::timeout_at(deadline, stream.next()).await {
        let (WatchEvent::Added(p) | WatchEvent::Modified(p)) = ev else {
            continue;
        };
        assert_ne!(phase(&p).as_deref(), Some("Running"), "never Running");
        assert!(!is_ready(&p), "never Ready");
        if let Some(r) = waiting_reason(&p)
            && reasons.last() != Some(&r)
        {
            reasons.push(r);
        }
    }
    assert!(
        reasons.len() >= 5,
        "alternating several times in 3 s: {reasons:?}"
    );
    assert_eq!(reasons[0], "ContainerCreating");
    for pair in reasons[1..].chunks(2) {
        assert_eq!(pair[0], "ErrImagePull", "{reasons:?}");
        if let Some(next) = pair.get(1) {
            assert_eq!(next, "ImagePullBackOff", "{reasons:?}");
        }
    }
    let p = pods.get("stuck").await.expect("pod");
    assert_eq!(phase(&p).as_deref(), Some("Pending"));
    assert_eq!(
        condition(&p, "PodReadyToStartContainers").map(|c| c.status),
        Some("True".into())
    );
    let ready = condition(&p, "Ready").expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_deref()),
        ("False", Some("ContainersNotReady"))
    );
    let cs = &p
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.clone())
        .expect("statuses")[0];
    assert_eq!(cs.image, "webserver:404");
    assert!(!cs.started.unwrap_or(false));
    let message = cs
        .state
        .as_ref()
        .and_then(|s| s.waiting.as_ref())
        .and_then(|w| w.message.clone())
        .unwrap_or_default();
    assert!(
        message.contains("docker.io/library/webserver:404: not found"),
        "{message}"
    );
    // The kubelet's events.
    let events: Api<Event> = Api::namespaced(cluster.client(), "default");
    let notes: Vec<(String, String)> = wait_for("pull events", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        let notes: Vec<(String, String)> = list
            .items
            .iter()
            .filter(|e| e.involved_object.name.as_deref() == Some("stuck"))
            .map(|e| {
                (
                    e.reason.clone().unwrap_or_default(),
                    e.message.clone().unwrap_or_default(),
                )
            })
            .collect();
        let has = |r: &str, m: &str| notes.iter().any(|(a, b)| a == r && b == m);
        (has("Pulling", "Pulling image \"webserver:404\"")
            && has("Failed", "Error: ErrImagePull")
            && has("BackOff", "Back-off pulling image \"webserver:404\"")
            && has("Failed", "Error: ImagePullBackOff"))
        .then_some(notes)
    })
    .await;
    assert!(
        notes.iter().any(|(r, m)| r == "Failed"
            && m.starts_with("Failed to pull image \"webserver:404\": rpc error: code = NotFound")),
        "{notes:?}"
    );
    cluster.shutdown().await;
}

/// Updating the pod's image to one that exists starts it (the kubelet pulls again at once).
#[tokio::test]
async fn fixing_the_image_starts_the_pod() {
    let config = SimConfig {
        // A back-off far longer than the test: only the spec change can start the pod.
        image_pull_backoff: Duration::from_secs(60),
        image_pull_max_backoff: Duration::from_secs(60),
        ..fast_config()
    };
    let cluster = start_sim(config).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    pods.create(
        &PostParams::default(),
        &with_image("fixed", "foo:non-existent"),
    )
    .await
    .expect("create");
    wait_pod(&pods, "fixed", |p| {
        waiting_reason(p).as_deref() == Some("ErrImagePull")
    })
    .await;
    let patch = json!({"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}});
    pods.patch("fixed", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .expect("update image");
    let p = wait_pod(&pods, "fixed", is_ready).await;
    assert_eq!(phase(&p).as_deref(), Some("Running"));
    cluster.shutdown().await;
}

/// The missing images are configurable: the given patterns replace upstream e2e's.
#[tokio::test]
async fn missing_images_are_configurable() {
    let cluster = TestCluster::builder()
        .simulation(fast_config())
        .missing_images(["registry.example.com/broken/*"])
        .start()
        .await
        .expect("cluster");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    pods.create(
        &PostParams::default(),
        &with_image("broken", "registry.example.com/broken/app:1"),
    )
    .await
    .expect("create");
    pods.create(&PostParams::default(), &with_image("fine", "webserver:404"))
        .await
        .expect("create");
    wait_pod(&pods, "fine", is_ready).await;
    let p = wait_pod(&pods, "broken", |p| {
        waiting_reason(p).as_deref() == Some("ErrImagePull")
    })
    .await;
    assert_eq!(phase(&p).as_deref(), Some("Pending"));
    cluster.shutdown().await;
}
