//! A shared informer following a dynamic shard against kcm-testenv over real HTTP: when the
//! shard grows or shrinks by a part ([`ShardChange`]), the handlers hear of the part's objects
//! only (adds for what joined, tombstone deletes for what left); the objects that stay are
//! neither listed nor delivered again.

use crate::common;
use std::time::Duration;

use crate::common::{Recorder, Seen, eventually, fast_backoff};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use kcm_informer::{
    DynamicShard, InformerOptions, ShardChange, ShardScope, ShardSelection, SharedIndexInformer,
};
use kube::api::{Api, ObjectMeta, PostParams};

fn only(names: &'static [&'static str]) -> ShardScope {
    ShardScope::new(
        format!("only({})", names.join(",")),
        move |m: &ObjectMeta| m.namespace.as_deref().is_some_and(|ns| names.contains(&ns)),
    )
}

fn about(seen: &[Seen], ns: &str) -> usize {
    seen.iter()
        .filter(|s| match s {
            Seen::Add { key, .. } | Seen::Update { key, .. } | Seen::Delete { key, .. } => {
                key.starts_with(&format!("{ns}/"))
            }
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_hear_only_of_the_part_that_moved() {
    let cluster = common::cluster().await;
    let client = cluster.client();
    for ns in ["team-a", "team-b"] {
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(ns.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .expect("namespace");
        let api: Api<Lease> = Api::namespaced(client.clone(), ns);
        for i in 0..50 {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(format!("l{i}")),
                    namespace: Some(ns.into()),
                    ..Default::default()
                },
                spec: None,
            };
            api.create(&PostParams::default(), &lease)
                .await
                .expect("lease");
        }
    }
    let shard = DynamicShard::new(ShardSelection::Scope(only(&["team-a"])));
    let informer = SharedIndexInformer::<Lease>::new(
        client.clone(),
        InformerOptions::default()
            .with_reflector(|r| r.backoff(fast_backoff()).dynamic_shard(shard.clone())),
    );
    let rec = Recorder::default();
    informer.add_event_handler(rec.clone()).expect("handler");
    let cancel = common::run_synced(&informer, Duration::from_secs(30)).await;
    eventually("the first list delivered", || rec.seen().len() == 50).await;
    rec.seen.lock().clear();

    // Grow by team-b: 50 adds, nothing about team-a.
    let generation = shard.change(
        Some(ShardSelection::Scope(only(&["team-a", "team-b"]))),
        ShardChange::new().listing(only(&["team-b"])),
    );
    tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
        .await
        .expect("the part listed");
    eventually("team-b delivered", || rec.seen().len() >= 50).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let seen = rec.seen();
    assert_eq!(about(&seen, "team-b"), 50);
    assert!(
        seen.iter()
            .all(|s| matches!(s, Seen::Add { initial: false, .. }))
    );
    assert_eq!(
        about(&seen, "team-a"),
        0,
        "the kept part is not delivered again"
    );
    assert_eq!(informer.store().len(), 100);
    rec.seen.lock().clear();

    // Shrink to team-b: 50 tombstones for team-a, nothing about team-b.
    let generation = shard.change(
        Some(ShardSelection::Scope(only(&["team-b"]))),
        ShardChange::new().dropping(only(&["team-a"])),
    );
    tokio::time::timeout(Duration::from_secs(10), shard.listed(generation))
        .await
        .expect("dropped");
    eventually("team-a dropped", || rec.seen().len() >= 50).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let seen = rec.seen();
    assert_eq!(about(&seen, "team-a"), 50);
    assert!(seen.iter().all(|s| matches!(
        s,
        Seen::Delete {
            tombstone: true,
            ..
        }
    )));
    assert_eq!(about(&seen, "team-b"), 0);
    assert_eq!(informer.store().len(), 50);
    rec.seen.lock().clear();

    cancel.cancel();
}
