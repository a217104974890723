//! kube-client against the server: create, list, watch, watcher with 410 relist. On a real
//! kube-apiserver with `KCM_SPEC_SERVER` (see testenv/README.md); the compaction checks need
//! testenv's controls and are skipped there.

use crate::common::server::Server;
use crate::common::spec::NO_SCHEDULER;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

fn pod(name: &str, app: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"schedulerName": NO_SCHEDULER, "containers": [{"name": "c", "image": "nginx"}]}
    }))
    .expect("pod")
}

#[tokio::test]
async fn create_list_watch_pods() {
    let env = Server::start("kube-client").await;
    let ns = env.ns("pods").await;
    let pods: Api<Pod> = Api::namespaced(env.client(), &ns);
    let created = pods
        .create(&PostParams::default(), &pod("a", "web"))
        .await
        .expect("create");
    assert_eq!(created.metadata.generation, Some(1));
    assert_eq!(
        created.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Pending")
    );
    let list = pods.list(&ListParams::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);
    let list_rv = list.metadata.resource_version.clone().expect("rv");
    let mut stream = pods
        .watch(&WatchParams::default().timeout(30), &list_rv)
        .await
        .expect("watch")
        .boxed();
    pods.create(&PostParams::default(), &pod("b", "web"))
        .await
        .expect("create b");
    match stream.try_next().await.expect("event") {
        Some(WatchEvent::Added(p)) => assert_eq!(p.metadata.name.as_deref(), Some("b")),
        other => panic!("unexpected {other:?}"),
    }
    pods.delete("b", &Default::default()).await.expect("delete");
    // the deletion timestamp is written first (MODIFIED), then the pod goes
    match stream.try_next().await.expect("event") {
        Some(WatchEvent::Modified(p)) => assert!(p.metadata.deletion_timestamp.is_some()),
        other => panic!("unexpected {other:?}"),
    }
    match stream.try_next().await.expect("event") {
        Some(WatchEvent::Deleted(p)) => {
            let rv: u64 = p
                .metadata
                .resource_version
                .as_deref()
                .and_then(|r| r.parse().ok())
                .expect("rv");
            assert!(rv > list_rv.parse::<u64>().expect("num"));
        }
        other => panic!("unexpected {other:?}"),
    }
    env.finish().await;
}

#[tokio::test]
async fn watch_from_compacted_revision_gets_410() {
    let server = Server::start("kube-client-410").await;
    // a real server replays from etcd back to its last compaction (every 5 minutes)
    let Some(env) = server.testenv_only("watch from a compacted revision (compact)") else {
        return;
    };
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &pod("a", "web"))
        .await
        .expect("create");
    env.compact();
    let mut stream = pods
        .watch(&WatchParams::default().timeout(30), "1")
        .await
        .expect("watch")
        .boxed();
    match stream.try_next().await {
        Ok(Some(WatchEvent::Error(e))) => {
            assert_eq!(e.code, 410);
            assert!(
                e.message.starts_with("too old resource version: 1 ("),
                "{}",
                e.message
            );
        }
        Err(kube::Error::Api(e)) => assert_eq!(e.code, 410),
        other => panic!("unexpected {other:?}"),
    }
    server.finish().await;
}

#[tokio::test]
async fn open_watch_keeps_going_through_a_compaction() {
    let server = Server::start("kube-client-open-watch").await;
    // kube-apiserver's watch cache keeps serving its watchers when etcd compacts
    let Some(env) = server.testenv_only("open watch through a compaction (compact)") else {
        return;
    };
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let created = pods
        .create(&PostParams::default(), &pod("a", "web"))
        .await
        .expect("create");
    let from = created.metadata.resource_version.expect("rv");
    let mut stream = pods
        .watch(&WatchParams::default().timeout(30), &from)
        .await
        .expect("watch")
        .boxed();
    env.compact();
    pods.create(&PostParams::default(), &pod("b", "web"))
        .await
        .expect("create after the compaction");
    match stream.try_next().await {
        Ok(Some(WatchEvent::Added(p))) => assert_eq!(p.metadata.name.as_deref(), Some("b")),
        other => panic!("the open watch should see b, got {other:?}"),
    }
    server.finish().await;
}

async fn watcher_relists_after_compaction(streaming: bool) {
    use kube_runtime::watcher::{self, Event};
    let server = Server::start("kube-client-relist").await;
    let Some(env) = server.testenv_only("watcher relist after a compaction (compact)") else {
        return;
    };
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &pod("a", "web"))
        .await
        .expect("create");
    let cfg = if streaming {
        watcher::Config::default().streaming_lists()
    } else {
        watcher::Config::default()
    };
    let mut w = watcher::watcher(pods.clone(), cfg).boxed();
    let mut seen_init_done = 0;
    let mut applied = Vec::new();
    while seen_init_done < 1 {
        match w.try_next().await.expect("watcher ok") {
            Some(Event::InitApply(p)) => applied.push(p.metadata.name.unwrap_or_default()),
            Some(Event::InitDone) => seen_init_done += 1,
            Some(_) => {}
            None => panic!("watcher ended"),
        }
    }
    assert_eq!(applied, vec!["a".to_string()]);
    // force history loss while the watcher is connected: it must relist
    pods.create(&PostParams::default(), &pod("b", "web"))
        .await
        .expect("create b");
    loop {
        if let Some(Event::Apply(p)) = w.try_next().await.expect("watcher ok")
            && p.metadata.name.as_deref() == Some("b")
        {
            break;
        }
    }
    // The compaction, then a dropped watch: the resume from a compacted revision gets 410.
    env.compact();
    env.drop_watches();
    pods.create(&PostParams::default(), &pod("c", "web"))
        .await
        .expect("create c");
    let mut relisted = false;
    loop {
        match w.next().await {
            Some(Ok(Event::Init)) => relisted = true,
            Some(Ok(Event::InitApply(p))) | Some(Ok(Event::Apply(p)))
                if p.metadata.name.as_deref() == Some("c") =>
            {
                break;
            }
            Some(Ok(_)) => {}
            // the watcher reports the 410 as an error and then relists
            Some(Err(_)) => {}
            None => panic!("watcher ended"),
        }
    }
    assert!(relisted, "the watcher must relist after the compaction");
    server.finish().await;
}

#[tokio::test]
async fn watcher_list_watch_relists_on_410() {
    watcher_relists_after_compaction(false).await;
}

#[tokio::test]
async fn watcher_streaming_list_relists_on_410() {
    watcher_relists_after_compaction(true).await;
}
