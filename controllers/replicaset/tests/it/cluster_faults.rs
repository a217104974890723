//! The controller in a misbehaving cluster: a node goes NotReady, and the API server answers
//! writes with 409s, drops watches and compacts its watch history. The final state is always
//! exactly `replicas` active pods with a correct status.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kcm_controller::pod_util::is_pod_ready;
use kcm_testenv::faults::{FaultInjector, FaultSpec};
use kube::api::{Patch, PatchParams};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(60);
/// A relist may wait up to 60 s (30 s backoff cap with full jitter) while faults go on.
const WAIT_UNDER_FAULTS: Duration = Duration::from_secs(150);

async fn status_is(client: &kube::Client, name: &str, want: i32, ready: i32) -> Option<()> {
    let rs = get_rs(client, name).await;
    let st = rs.status.clone().unwrap_or_default();
    let active = active_pods(client, name).await;
    let ok = active.len() == usize::try_from(want).ok()?
        && st.replicas == want
        && st.ready_replicas.unwrap_or(0) == ready
        && st.observed_generation == rs.metadata.generation;
    ok.then_some(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_not_ready_drops_ready_replicas_and_recovers() {
    let cluster = sim_cluster().await;
    let client = cluster.client();
    let running = Running::start(client.clone()).await;
    create_rs(&client, "app", 6).await;
    eventually("6 ready", WAIT, || status_is(&client, "app", 6, 6)).await;

    let pods = active_pods(&client, "app").await;
    let node = pods[0]
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .expect("bound");
    let on_node = pods
        .iter()
        .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node.as_str()))
        .count() as i32;
    assert!(on_node > 0);
    let sim = cluster.sim().expect("simulation");
    sim.set_node_ready(&node, false)
        .await
        .expect("node NotReady");
    // Pods on the failed node lose Ready; the controller reports it and creates nothing (the
    // pods are still active, as upstream: only eviction would delete them).
    eventually("ready drops", WAIT, || {
        status_is(&client, "app", 6, 6 - on_node)
    })
    .await;
    let not_ready = active_pods(&client, "app")
        .await
        .iter()
        .filter(|p| !is_pod_ready(*p))
        .count() as i32;
    assert_eq!(not_ready, on_node);
    sim.set_node_ready(&node, true).await.expect("node Ready");
    eventually("ready recovers", WAIT, || status_is(&client, "app", 6, 6)).await;
    assert_eq!(
        cluster.env().counters().count("create", "pods"),
        6,
        "no pod created for a NotReady node"
    );

    running.stop().await;
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_under_conflicts_dropped_watches_and_compaction() {
    let cluster = sim_cluster().await;
    let client = cluster.client();
    let running = Running::start(client.clone()).await;
    let rss = create_rs(&client, "app", 0).await;
    eventually("0 replicas", WAIT, || status_is(&client, "app", 0, 0)).await;

    // Every failed sync doubles the key's backoff until one succeeds (5 ms × 2^n), and every
    // relist within two minutes doubles the reflector's wait before the next one (800 ms × 2^n,
    // capped at 30 s, jittered up to 2×), both as upstream. Under constant compaction the
    // informers may thus be a minute behind, hence WAIT_UNDER_FAULTS and moderate rates.
    let spec = FaultSpec::parse("conflict=0.1@create:pods,conflict=0.15@update:replicasets/status,watch-drop=0.3,compact-every=4s")
        .expect("fault spec");
    let injector = Arc::new(FaultInjector::new(spec, 7));
    let stop_faults = CancellationToken::new();
    let faults = injector.attach(cluster.env().server().clone(), stop_faults.clone());

    for n in [12, 4, 9] {
        rss.patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": n}})),
        )
        .await
        .expect("scale");
        eventually(
            &format!("{n} replicas under faults"),
            WAIT_UNDER_FAULTS,
            || status_is(&client, "app", n, n),
        )
        .await;
    }
    let injected = injector.render_metrics();
    stop_faults.cancel();
    let _ = faults.await;
    // Let a quiet period pass: nothing more may be created or deleted.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        status_is(&client, "app", 9, 9).await.is_some(),
        "stable after faults stop"
    );
    assert!(
        injected.contains("conflict"),
        "faults were injected: {injected}"
    );

    running.stop().await;
    cluster.shutdown().await;
}
