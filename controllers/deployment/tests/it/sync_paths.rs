//! Controller-level tests of each `syncDeployment` path against the embedded API server.
//! No ReplicaSet controller runs: ReplicaSet status is written by the tests.

use crate::common::*;
use kcm_deployment::{DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, compute_hash};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_makes_new_replica_set() {
    let h = Harness::start().await;
    let d = h.create(&rolling("web", 3, 1, 0)).await;
    let rs = wait_for("the new ReplicaSet", || async {
        h.owned_replica_sets(&d).await.into_iter().next()
    })
    .await;
    let stored = h.get("web").await;
    let hash = compute_hash(&stored.spec.template, None);
    assert_eq!(
        rs.metadata.name.as_deref(),
        Some(format!("web-{hash}").as_str())
    );
    let labels = rs.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("app").map(String::as_str), Some("web"));
    assert_eq!(
        labels.get(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY),
        Some(&hash),
        "pod-template-hash label"
    );
    let spec = rs.spec.clone();
    assert_eq!(spec.replicas, Some(3));
    assert_eq!(
        spec.selector
            .match_labels
            .unwrap()
            .get(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY),
        Some(&hash)
    );
    let owner = &rs.metadata.owner_references.clone().unwrap()[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.api_version.as_str()
        ),
        ("Deployment", "web", "apps/v1")
    );
    assert_eq!(owner.uid, d.metadata.uid.clone().unwrap());
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    assert_eq!(
        annotation(&rs.metadata, "deployment.kubernetes.io/revision"),
        Some("1")
    );
    assert_eq!(
        annotation(&rs.metadata, "deployment.kubernetes.io/desired-replicas"),
        Some("3")
    );
    assert_eq!(
        annotation(&rs.metadata, "deployment.kubernetes.io/max-replicas"),
        Some("4")
    );

    let rs_name = rs.metadata.name.clone().unwrap();
    h.wait_for_event(
        "web",
        "ScalingReplicaSet",
        &format!("Scaled up replica set {rs_name} from 0 to 3"),
    )
    .await;
    // Revision annotation on the Deployment, status observed, Progressing from the creation.
    let d = wait_for("deployment status", || async {
        let d = h.get("web").await;
        let observed = d.status.as_ref().and_then(|s| s.observed_generation);
        (observed == d.metadata.generation
            && annotation(&d.metadata, "deployment.kubernetes.io/revision") == Some("1"))
        .then_some(d)
    })
    .await;
    let (status, _, _) = condition(&d, "Progressing").expect("Progressing");
    assert_eq!(status, "True");
    let (status, reason, message) = condition(&d, "Available").expect("Available");
    assert_eq!(
        (status.as_str(), reason.as_str(), message.as_str()),
        (
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability."
        )
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_event_resizes_the_replica_set() {
    let h = Harness::start().await;
    let d = h.create(&rolling("web", 3, 1, 0)).await;
    let rs = wait_for("the new ReplicaSet", || async {
        h.owned_replica_sets(&d).await.into_iter().next()
    })
    .await;
    let rs_name = rs.metadata.name.clone().unwrap();
    h.fake_rs_status(&rs_name, 3, 3).await;
    h.merge_patch("web", json!({"spec": {"replicas": 5}})).await;
    let rs = wait_for("scaled ReplicaSet", || async {
        let rs = h.replica_sets().get(&rs_name).await.ok()?;
        (spec_replicas(&rs) == 5).then_some(rs)
    })
    .await;
    assert_eq!(
        annotation(&rs.metadata, "deployment.kubernetes.io/desired-replicas"),
        Some("5")
    );
    assert_eq!(
        annotation(&rs.metadata, "deployment.kubernetes.io/max-replicas"),
        Some("6")
    );
    h.wait_for_event(
        "web",
        "ScalingReplicaSet",
        &format!("Scaled up replica set {rs_name} from 3 to 5"),
    )
    .await;
    // No second ReplicaSet: a scaling event is not a rollout.
    assert_eq!(h.owned_replica_sets(&d).await.len(), 1);

    h.merge_patch("web", json!({"spec": {"replicas": 2}})).await;
    h.wait_for_event(
        "web",
        "ScalingReplicaSet",
        &format!("Scaled down replica set {rs_name} from 5 to 2"),
    )
    .await;
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_deployment_reports_paused_and_creates_nothing() {
    let h = Harness::start().await;
    let mut d = rolling("web", 2, 1, 0);
    d.spec.paused = Some(true);
    let d = h.create(&d).await;
    let paused = wait_for("DeploymentPaused", || async {
        let d = h.get("web").await;
        let c = condition(&d, "Progressing")?;
        (c.1 == "DeploymentPaused").then_some(d)
    })
    .await;
    assert_eq!(
        condition(&paused, "Progressing"),
        Some((
            "Unknown".into(),
            "DeploymentPaused".into(),
            "Deployment is paused".into()
        ))
    );
    // The status pass of the paused sync also ran; still no ReplicaSet (paused never creates).
    wait_until("observedGeneration", || async {
        let d = h.get("web").await;
        d.status.as_ref().and_then(|s| s.observed_generation) == d.metadata.generation
    })
    .await;
    assert!(h.owned_replica_sets(&d).await.is_empty());

    h.merge_patch("web", json!({"spec": {"paused": false}}))
        .await;
    let rs = wait_for("new ReplicaSet after resume", || async {
        h.owned_replica_sets(&d).await.into_iter().next()
    })
    .await;
    assert_eq!(spec_replicas(&rs), 2);
    wait_until("Progressing no longer paused", || async {
        let d = h.get("web").await;
        condition(&d, "Progressing").is_some_and(|c| c.1 != "DeploymentPaused")
    })
    .await;
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_deployment_only_syncs_status() {
    let h = Harness::start().await;
    let mut d = rolling("web", 3, 1, 0);
    d.metadata.finalizers = Some(vec!["test.kcm-rs.io/hold".into()]);
    let d = h.create(&d).await;
    let rs = wait_for("the new ReplicaSet", || async {
        h.owned_replica_sets(&d).await.into_iter().next()
    })
    .await;
    let rs_name = rs.metadata.name.clone().unwrap();
    h.deployments()
        .delete("web", &Default::default())
        .await
        .expect("delete");
    let deleting = h.merge_patch("web", json!({"spec": {"replicas": 5}})).await;
    assert!(deleting.metadata.deletion_timestamp.is_some());
    let generation = deleting.metadata.generation;
    // syncStatusOnly observes the new generation but never scales.
    wait_until("status of the deleting deployment", || async {
        h.get("web")
            .await
            .status
            .and_then(|s| s.observed_generation)
            == generation
    })
    .await;
    let rs = h.replica_sets().get(&rs_name).await.unwrap();
    assert_eq!(spec_replicas(&rs), 3);
    h.merge_patch("web", json!({"metadata": {"finalizers": null}}))
        .await;
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_deadline_exceeded_then_available() {
    let h = Harness::start().await;
    let mut d = rolling("web", 1, 1, 0);
    d.spec.progress_deadline_seconds = Some(1);
    let d = h.create(&d).await;
    let rs = wait_for("the new ReplicaSet", || async {
        h.owned_replica_sets(&d).await.into_iter().next()
    })
    .await;
    let rs_name = rs.metadata.name.clone().unwrap();
    // Nothing becomes available: the requeue for the progress check reports the timeout.
    let timed_out = wait_for("ProgressDeadlineExceeded", || async {
        let d = h.get("web").await;
        let c = condition(&d, "Progressing")?;
        (c.1 == "ProgressDeadlineExceeded").then_some(c)
    })
    .await;
    assert_eq!(timed_out.0, "False");
    assert_eq!(
        timed_out.2,
        format!("ReplicaSet \"{rs_name}\" has timed out progressing.")
    );
    h.fake_rs_status(&rs_name, 1, 1).await;
    let d = wait_for("NewReplicaSetAvailable", || async {
        let d = h.get("web").await;
        let c = condition(&d, "Progressing")?;
        (c.1 == "NewReplicaSetAvailable").then_some(d)
    })
    .await;
    assert_eq!(
        condition(&d, "Progressing").unwrap().2,
        format!("ReplicaSet \"{rs_name}\" has successfully progressed.")
    );
    assert_eq!(
        condition(&d, "Available").map(|c| (c.0, c.1)),
        Some(("True".into(), "MinimumReplicasAvailable".into()))
    );
    let status = d.status.unwrap();
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.available_replicas
        ),
        (Some(1), Some(1), Some(1))
    );
    h.shutdown().await;
}
