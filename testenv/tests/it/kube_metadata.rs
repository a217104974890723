//! kube-rs 5.0's metadata-only API against the server: `Api::get_metadata`, `list_metadata`,
//! `patch_metadata`, `watch_metadata` and kube-runtime's `metadata_watcher`, on a built-in kind
//! (Leases) and a custom resource. On a real kube-apiserver with `KCM_SPEC_SERVER`
//! (testenv/README.md).

use std::time::Duration;

use crate::common::crd::{install, namespaced_widgets, widget};
use crate::common::server::Server;
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
    WatchEvent, WatchParams,
};
use kube::core::PartialObjectMeta;
use kube_runtime::watcher;
use serde_json::json;

fn lease(name: &str) -> Lease {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": "meta"}},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
    }))
    .expect("lease")
}

#[tokio::test]
async fn metadata_api_on_a_builtin_kind() {
    let env = Server::start("kubemeta").await;
    let ns = env.ns("m").await;
    let leases: Api<Lease> = Api::namespaced(env.client(), &ns);
    let created = leases
        .create(&PostParams::default(), &lease("a"))
        .await
        .expect("create");
    leases
        .create(&PostParams::default(), &lease("b"))
        .await
        .expect("create b");

    let m: PartialObjectMeta<Lease> = leases.get_metadata("a").await.expect("get_metadata");
    assert_eq!(m.metadata, created.metadata);
    assert_eq!(
        (m.types
            .as_ref()
            .map(|t| (t.kind.as_str(), t.api_version.as_str()))),
        Some(("PartialObjectMetadata", "meta.k8s.io/v1"))
    );

    let list = leases
        .list_metadata(&ListParams::default().labels("app=meta"))
        .await
        .expect("list_metadata");
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|i| i.metadata.name.clone())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert!(list.metadata.resource_version.is_some());
    let page = leases
        .list_metadata(&ListParams::default().limit(1))
        .await
        .expect("first page");
    assert_eq!(page.items.len(), 1);
    assert!(
        page.metadata
            .continue_
            .as_deref()
            .is_some_and(|c| !c.is_empty())
    );
    let other: Api<Lease> = Api::namespaced(env.client(), &env.ns("empty").await);
    assert!(
        other
            .list_metadata(&ListParams::default())
            .await
            .expect("empty list")
            .items
            .is_empty()
    );

    let patched = leases
        .patch_metadata(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"patched": "yes"}}})),
        )
        .await
        .expect("patch_metadata");
    assert_eq!(
        patched
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("patched"))
            .map(String::as_str),
        Some("yes")
    );
    // the object itself kept its spec
    let full = leases.get("a").await.expect("get");
    assert_eq!(
        full.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("me")
    );

    // watch_metadata: a change to the object arrives as PartialObjectMetadata
    let rv = list.metadata.resource_version.clone().unwrap_or_default();
    let mut events = leases
        .watch_metadata(&WatchParams::default().timeout(10), &rv)
        .await
        .expect("watch_metadata")
        .boxed();
    leases
        .delete("b", &Default::default())
        .await
        .expect("delete b");
    let mut seen = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event in time")
    {
        match ev.expect("event") {
            WatchEvent::Modified(o) => seen.push(("MODIFIED", o.metadata.name.unwrap_or_default())),
            WatchEvent::Deleted(o) => {
                seen.push(("DELETED", o.metadata.name.unwrap_or_default()));
                break;
            }
            _ => {}
        }
    }
    assert!(seen.contains(&("MODIFIED", "a".to_string())), "{seen:?}");
    assert_eq!(seen.last(), Some(&("DELETED", "b".to_string())));
    env.finish().await;
}

#[tokio::test]
async fn metadata_watcher_on_a_custom_resource() {
    let env = Server::start("kubemetacr").await;
    let group = env.group("w");
    let ns = env.ns("m").await;
    install(&env, &namespaced_widgets(&group)).await;
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(&group, "v1", "Widget"),
        "widgets",
    );
    let widgets: Api<DynamicObject> = Api::namespaced_with(env.client(), &ns, &ar);
    let w = widget(&group, "w1", json!({"color": "red"}));
    let obj: DynamicObject = serde_json::from_value(w).expect("widget");
    widgets
        .create(&PostParams::default(), &obj)
        .await
        .expect("create");

    let m = widgets.get_metadata("w1").await.expect("get_metadata");
    assert_eq!(m.metadata.name.as_deref(), Some("w1"));
    // kube-runtime 5.0's metadata_watcher (deprecated there for the form below, still used)
    #[allow(deprecated)]
    let stream = watcher::metadata_watcher(widgets.clone(), watcher::Config::default());
    let mut stream = stream.boxed();
    let mut names = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("an event in time")
        .expect("watcher")
    {
        match ev {
            watcher::Event::InitApply(o) => names.push(o.metadata.name.unwrap_or_default()),
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
    assert_eq!(names, ["w1"]);
    let w2: DynamicObject =
        serde_json::from_value(widget(&group, "w2", json!({"color": "blue"}))).expect("widget");
    widgets
        .create(&PostParams::default(), &w2)
        .await
        .expect("create w2");
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("an event in time")
            .expect("watcher")
            .expect("open stream");
        if let watcher::Event::Apply(o) = ev {
            assert_eq!(o.metadata.name.as_deref(), Some("w2"));
            break;
        }
    }
    // the same through `Api<PartialObjectMeta<K>>`, which asks for metadata on every request
    let partial: Api<PartialObjectMeta<DynamicObject>> =
        Api::namespaced_with(env.client(), &ns, &ar);
    let mut stream = watcher::watcher(partial, watcher::Config::default()).boxed();
    let mut names = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("an event in time")
        .expect("watcher")
    {
        match ev {
            watcher::Event::InitApply(o) => names.push(o.metadata.name.unwrap_or_default()),
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
    assert_eq!(names, ["w1", "w2"]);
    env.finish().await;
}
