//! Syncs driven one at a time through `DeploymentController::sync` (no workers): a rollout
//! reaches a steady state in which a sync performs no write at all.

use std::sync::Arc;

use crate::common::*;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_deployment::{DeploymentController, DeploymentControllerConfig};
use kcm_informer::{CancellationToken, InformerFactory, InformerOptions, Lister};
use kcm_testenv::TestCluster;
use kube::api::ListParams;

/// Waits until the informer caches hold exactly the API server's current Deployment and
/// ReplicaSets (same resourceVersions).
async fn wait_caches_fresh(h: &Harness, dl: &Lister<Deployment>, rl: &Lister<ReplicaSet>) {
    wait_until("caches caught up", || async {
        let d = h.get("web").await;
        let cached = dl.get(NS, "web");
        if cached.map(|c| c.metadata.resource_version.clone()) != Some(d.metadata.resource_version)
        {
            return false;
        }
        let rss = h
            .replica_sets()
            .list(&ListParams::default())
            .await
            .expect("list")
            .items;
        rss.iter().all(|rs| {
            rl.get(NS, rs.metadata.name.as_deref().unwrap_or_default())
                .map(|c| c.metadata.resource_version.clone())
                == Some(rs.metadata.resource_version.clone())
        }) && rl
            .namespaced(NS)
            .list(&kcm_informer::Selector::everything())
            .len()
            == rss.len()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steady_state_sync_makes_no_writes() {
    let cluster = TestCluster::builder()
        .start()
        .await
        .expect("test cluster starts");
    let client = cluster.client();
    let factory = InformerFactory::new(client.clone(), InformerOptions::default());
    let controller = Arc::new(
        DeploymentController::new(
            client.clone(),
            &factory,
            DeploymentControllerConfig::default(),
        )
        .expect("controller"),
    );
    let cancel = CancellationToken::new();
    factory.start(&cancel);
    wait_until("has_synced", || async { controller.has_synced() }).await;
    let h = Harness {
        cluster,
        client,
        cancel,
        task: None,
        rs_task: None,
        factory,
    };
    let dl = h.factory.lister::<Deployment>();
    let rl = h.factory.lister::<ReplicaSet>();

    let d = h.create(&rolling("web", 2, 1, 0)).await;
    let mut done = false;
    for _ in 0..30 {
        wait_caches_fresh(&h, &dl, &rl).await;
        // Conflicts (a second status write in one pass) are expected: retry like the queue.
        let _ = controller
            .sync(&kcm_informer::ObjectKey::new("default", "web"))
            .await;
        for rs in h.owned_replica_sets(&d).await {
            let n = spec_replicas(&rs);
            if rs.status.as_ref().and_then(|s| s.available_replicas) != Some(n) {
                h.fake_rs_status(rs.metadata.name.as_deref().unwrap(), n, n)
                    .await;
            }
        }
        let cur = h.get("web").await;
        let complete =
            condition(&cur, "Progressing").is_some_and(|c| c.1 == "NewReplicaSetAvailable");
        let observed =
            cur.status.as_ref().and_then(|s| s.observed_generation) == cur.metadata.generation;
        if complete && observed && cur.status.as_ref().and_then(|s| s.available_replicas) == Some(2)
        {
            done = true;
            break;
        }
    }
    assert!(done, "rollout did not complete under manual syncs");

    wait_caches_fresh(&h, &dl, &rl).await;
    let before = h.env().counters();
    controller
        .sync(&kcm_informer::ObjectKey::new("default", "web"))
        .await
        .expect("steady-state sync");
    let after = h.env().counters();
    assert_eq!(
        before.writes(),
        after.writes(),
        "a steady-state sync wrote something: {:?}",
        after.requests
    );
    // The sync did look at the world: the controller's queue was not needed for it.
    assert_eq!(h.owned_replica_sets(&d).await.len(), 1);
    h.shutdown().await;
}
