//! Property-style test: random create/update/delete traffic with random watch drops and
//! compactions; afterwards the cache equals a fresh list of the server and every handler's view
//! (its notifications applied in order) equals the cache.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{
    NS, Recorder, cache_state, cluster, cm, eventually, fast_backoff, server_state, spawn_run,
};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kcm_informer::{CancellationToken, CountingMetrics, InformerOptions, SharedIndexInformer};
use kube::api::{Api, DeleteParams, PostParams};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

async fn run_case(seed: u64) {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    let metrics = Arc::new(CountingMetrics::default());
    let options = InformerOptions::default()
        .namespace(NS)
        .with_reflector(|r| r.backoff(fast_backoff()).metrics(metrics.clone()));
    let informer = SharedIndexInformer::<Lease>::new(cluster.client(), options);
    let early = Recorder::default();
    informer
        .add_event_handler(early.clone())
        .expect("early handler");
    let cancel = CancellationToken::new();
    spawn_run(&informer, &cancel);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut late = None;
    for step in 0..150 {
        let name = format!("p{}", rng.random_range(0..25));
        match rng.random_range(0..100) {
            0..=39 => {
                let _ = api
                    .create(&PostParams::default(), &cm(&name, &step.to_string()))
                    .await;
            }
            40..=69 => {
                if let Ok(mut o) = api.get(&name).await {
                    o.spec = Some(LeaseSpec {
                        holder_identity: Some(step.to_string()),
                        ..LeaseSpec::default()
                    });
                    let _ = api.replace(&name, &PostParams::default(), &o).await;
                }
            }
            70..=89 => {
                let _ = api.delete(&name, &DeleteParams::default()).await;
            }
            90..=94 => cluster.env().drop_watches(),
            _ => cluster.env().compact(),
        }
        if step == 75 {
            let r = Recorder::default();
            informer.add_event_handler(r.clone()).expect("late handler");
            late = Some(r);
        }
        if rng.random_range(0..10) == 0 {
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..30))).await;
        }
    }
    let late = late.expect("late handler registered");
    let server = server_state(&api).await;
    eventually("cache converged to the server state", || {
        cache_state(informer.store()) == server
    })
    .await;
    eventually("handlers converged to the cache", || {
        early.view() == server && late.view() == server
    })
    .await;
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_traffic_with_watch_drops_and_compactions_converges() {
    for seed in [1, 7, 42] {
        run_case(seed).await;
    }
}
