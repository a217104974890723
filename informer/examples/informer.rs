//! A shared informer against an embedded kcm-testenv API server: a handler sees the initial list
//! and then every add, update and delete; the lister answers label-selector queries from the
//! cache without calling the server.
//!
//! `cargo run -p kcm-informer --example informer`

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::Pod;
use kcm_informer::{
    CancellationToken, EventHandlerFns, InformerFactory, InformerOptions, Selector,
};
use kcm_testenv::{TestEnv, TestEnvConfig};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn pod(name: &str, app: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    }))
    .expect("valid pod")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = TestEnv::start(TestEnvConfig::default()).await?;
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let pp = PostParams::default();
    pods.create(&pp, &pod("web-1", "web")).await?;

    let options = InformerOptions::default().namespace("default");
    let factory = InformerFactory::new(env.client(), options);
    let informer = factory.informer::<Pod>();
    let name = |p: &Pod| p.metadata.name.clone().unwrap_or_default();
    informer.add_event_handler(
        EventHandlerFns::new()
            .on_add(move |p: &Arc<Pod>, initial| {
                println!("add    {} (initial list: {initial})", name(p))
            })
            .on_update(move |_, p: &Arc<Pod>| {
                println!("update {} labels {:?}", name(p), p.metadata.labels)
            })
            .on_delete(|d| println!("delete {} (tombstone: {})", d.key(), d.is_tombstone())),
    )?;
    let cancel = CancellationToken::new();
    factory.start(&cancel);
    let timeout = Some(Duration::from_secs(10));
    let synced = factory.wait_for_cache_sync(timeout, &cancel).await;
    println!("synced: {synced:?}");

    pods.create(&pp, &pod("web-2", "web")).await?;
    pods.create(&pp, &pod("db-1", "db")).await?;
    let relabel = json!({"metadata": {"labels": {"app": "web"}}});
    let patch = Patch::Merge(&relabel);
    pods.patch("db-1", &PatchParams::default(), &patch).await?;
    pods.delete("web-1", &DeleteParams::default()).await?;

    // The cache follows the server: wait until it holds the final state, then query it.
    let lister = informer.lister().namespaced("default");
    let web = Selector::parse("app=web")?;
    let mut names = Vec::new();
    for _ in 0..200 {
        names = lister.list(&web).iter().map(|p| name(p)).collect();
        names.sort();
        if names == ["db-1", "web-2"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("lister, app=web: {names:?}");
    assert_eq!(names, ["db-1", "web-2"]);

    cancel.cancel();
    factory.shutdown().await;
    env.shutdown().await;
    Ok(())
}
