//! The controller with the simulated scheduler and kubelets: scaling
//! 0 → 50 → 3 → 20, a pod deleted by hand is replaced, status converges.

use std::time::Duration;

use crate::common::*;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kcm_controller::pod_util::is_pod_ready;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

async fn converged(client: &kube::Client, name: &str, want: i32) -> Option<()> {
    let rs = get_rs(client, name).await;
    let st = rs.status.clone().unwrap_or_default();
    let active = active_pods(client, name).await;
    let ready = active.iter().filter(|p| is_pod_ready(*p)).count();
    let ok = active.len() == usize::try_from(want).ok()?
        && ready == active.len()
        && st.replicas == want
        && st.ready_replicas.unwrap_or(0) == want
        && st.available_replicas.unwrap_or(0) == want
        && st.fully_labeled_replicas.unwrap_or(0) == want
        && st.observed_generation == rs.metadata.generation;
    ok.then_some(())
}

async fn scale(rss: &Api<ReplicaSet>, name: &str, n: i32) {
    rss.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": n}})),
    )
    .await
    .expect("scale");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_0_50_3_20_and_replace_deleted_pod() {
    let cluster = sim_cluster().await;
    let client = cluster.client();
    let running = Running::start(client.clone()).await;
    let rss = create_rs(&client, "app", 0).await;
    eventually("0 replicas observed", WAIT, || converged(&client, "app", 0)).await;

    for n in [50, 3, 20] {
        scale(&rss, "app", n).await;
        eventually(&format!("{n} ready replicas"), WAIT, || {
            converged(&client, "app", n)
        })
        .await;
    }

    // Delete one pod by hand: it is replaced.
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let victim = active_pods(&client, "app").await[0]
        .metadata
        .name
        .clone()
        .expect("name");
    pods.delete(&victim, &DeleteParams::default())
        .await
        .expect("delete");
    eventually("replacement ready", WAIT, || async {
        let active = active_pods(&client, "app").await;
        let replaced = active
            .iter()
            .all(|p| p.metadata.name.as_deref() != Some(victim.as_str()));
        if replaced {
            converged(&client, "app", 20).await
        } else {
            None
        }
    })
    .await;
    // 50 + 1 replacement + 17 on the way to 20 again, never more.
    assert_eq!(
        cluster.env().counters().count("create", "pods"),
        50 + 17 + 1
    );

    running.stop().await;
    cluster.shutdown().await;
}
