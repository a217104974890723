//! End to end with the ReplicaSet controller and the simulated scheduler/kubelets: a rollout
//! completes, and a rollout whose pods never become ready stalls at the surge limit and
//! reports ProgressDeadlineExceeded.

use std::time::Duration;

use crate::common::*;
use k8s_openapi::api::core::v1::Pod;
use kcm_testenv::TestCluster;
use kube::api::{Api, ListParams};
use serde_json::json;

/// The Deployment and ReplicaSet controllers on three simulated nodes whose pods become Ready
/// 50 ms after they are bound.
async fn start_cluster() -> Harness {
    Harness::start_with_replicasets(
        TestCluster::builder()
            .pod_ready_after(Duration::from_millis(50))
            .max_grace(Duration::from_millis(200)),
    )
    .await
}

async fn wait_complete(h: &Harness, replicas: i32) {
    wait_until("rollout complete", || async {
        let d = h.get("web").await;
        let st = d.status.clone().unwrap_or_default();
        condition(&d, "Progressing").is_some_and(|c| c.1 == "NewReplicaSetAvailable")
            && st.observed_generation == d.metadata.generation
            && st.replicas == Some(replicas)
            && st.updated_replicas == Some(replicas)
            && st.available_replicas == Some(replicas)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_completes_with_replica_set_controller() {
    let h = start_cluster().await;
    let d = h.create(&rolling("web", 3, 1, 0)).await;
    wait_complete(&h, 3).await;
    let first = h.owned_replica_sets(&d).await;
    assert_eq!(first.len(), 1);
    let old_name = first[0].metadata.name.clone().unwrap();

    h.set_image("web", "nginx:2").await;
    wait_until("new ReplicaSet owns every replica", || async {
        let d = h.get("web").await;
        let st = d.status.clone().unwrap_or_default();
        let rss = h.owned_replica_sets(&d).await;
        let new = rss.iter().find(|rs| image(rs) == "nginx:2");
        let old = rss
            .iter()
            .find(|rs| rs.metadata.name.as_deref() == Some(&old_name));
        condition(&d, "Progressing").is_some_and(|c| c.1 == "NewReplicaSetAvailable")
            && st.updated_replicas == Some(3)
            && st.replicas == Some(3)
            && st.available_replicas == Some(3)
            && new.is_some_and(|n| spec_replicas(n) == 3)
            && old.is_some_and(|o| spec_replicas(o) == 0)
    })
    .await;
    let d = h.get("web").await;
    assert_eq!(
        condition(&d, "Available").map(|c| (c.0, c.1)),
        Some(("True".into(), "MinimumReplicasAvailable".into()))
    );
    assert_eq!(
        annotation(&d.metadata, "deployment.kubernetes.io/revision"),
        Some("2")
    );
    // Eventually only new pods are left.
    let pods: Api<Pod> = Api::namespaced(h.client.clone(), NS);
    wait_until("only nginx:2 pods", || async {
        let list = pods.list(&ListParams::default()).await.expect("pods").items;
        let live: Vec<&Pod> = list
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .collect();
        live.len() == 3
            && live.iter().all(|p| {
                p.spec
                    .as_ref()
                    .and_then(|s| s.containers[0].image.as_deref())
                    == Some("nginx:2")
            })
    })
    .await;
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_ready_pods_stall_at_surge_and_time_out() {
    let h = start_cluster().await;
    let mut d = rolling("web", 3, 1, 0);
    d.spec.progress_deadline_seconds = Some(2);
    let d = h.create(&d).await;
    wait_complete(&h, 3).await;
    let old_name = h.owned_replica_sets(&d).await[0]
        .metadata
        .name
        .clone()
        .unwrap();

    h.merge_patch(
        "web",
        json!({"spec": {"template": {
            "metadata": {"annotations": {"sim.kcm-rs.io/never-ready": "true"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:2"}]}
        }}}),
    )
    .await;
    let timed_out = wait_for("ProgressDeadlineExceeded", || async {
        let d = h.get("web").await;
        condition(&d, "Progressing").filter(|c| c.1 == "ProgressDeadlineExceeded")
    })
    .await;
    assert_eq!(timed_out.0, "False");
    assert!(
        timed_out.2.ends_with("has timed out progressing."),
        "{}",
        timed_out.2
    );
    // Stalled at the surge limit: 1 new replica (never ready), all 3 old ones kept.
    let rss = h.owned_replica_sets(&d).await;
    let new = rss
        .iter()
        .find(|rs| image(rs) == "nginx:2")
        .expect("new ReplicaSet");
    let old = rss
        .iter()
        .find(|rs| rs.metadata.name.as_deref() == Some(&old_name))
        .expect("old ReplicaSet");
    assert_eq!((spec_replicas(new), spec_replicas(old)), (1, 3));
    let d = h.get("web").await;
    assert_eq!(
        condition(&d, "Available").map(|c| c.0),
        Some("True".into()),
        "old pods keep the Deployment available"
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_rollout_never_overlaps_old_and_new_pods() {
    let h = start_cluster().await;
    let d = h.create(&recreate("web", 2)).await;
    wait_complete(&h, 2).await;
    let old_name = h.owned_replica_sets(&d).await[0]
        .metadata
        .name
        .clone()
        .unwrap();
    h.set_image("web", "nginx:2").await;
    // Whenever the new ReplicaSet wants pods, the old one has none left (Recreate never
    // overlaps); checked at every observation until the rollout completes.
    wait_until("recreate rollout complete", || async {
        let rss = h.owned_replica_sets(&d).await;
        let old = rss
            .iter()
            .find(|rs| rs.metadata.name.as_deref() == Some(&old_name));
        let new = rss.iter().find(|rs| image(rs) == "nginx:2");
        if let (Some(old), Some(new)) = (old, new)
            && spec_replicas(new) > 0
        {
            let old_status = old.status.as_ref().map_or(0, |s| s.replicas);
            assert_eq!(
                (spec_replicas(old), old_status),
                (0, 0),
                "new ReplicaSet scaled up while old pods exist"
            );
        }
        let d = h.get("web").await;
        let st = d.status.clone().unwrap_or_default();
        new.is_some_and(|n| spec_replicas(n) == 2)
            && st.updated_replicas == Some(2)
            && st.available_replicas == Some(2)
            && st.replicas == Some(2)
    })
    .await;
    h.shutdown().await;
}
