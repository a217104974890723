//! An injected `conflict` comes with a concurrent change (resourceVersion moves, watchers see a
//! MODIFIED event) as on a real cluster; `conflict-bare` changes nothing.

use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kcm_testenv::TestCluster;
use kcm_testenv::faults::{FaultInjector, FaultKind, FaultSpec};
use kube::Api;
use kube::api::{ObjectMeta, PostParams, WatchEvent, WatchParams};

fn pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("nginx:1".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    }
}

/// Updates `name` once under `spec`; returns the error code, the resourceVersions before and
/// after, and the watch events seen for it from the version before.
async fn conflicting_update(spec: &str, name: &str) -> (u16, String, String, Vec<String>) {
    let injector = Arc::new(FaultInjector::new(FaultSpec::parse(spec).expect("spec"), 3));
    let cluster = TestCluster::builder()
        .faults(injector.clone())
        .start()
        .await
        .expect("test cluster");
    let api: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let created = api
        .create(&PostParams::default(), &pod(name))
        .await
        .expect("create is not an update");
    let before = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    let params = WatchParams::default().fields(&format!("metadata.name={name}"));
    let mut watch = api.watch(&params, &before).await.expect("watch").boxed();

    let code = match api.replace(name, &PostParams::default(), &created).await {
        Err(kube::Error::Api(s)) => s.code,
        other => panic!("expected a conflict, got {other:?}"),
    };
    let after = api
        .get(name)
        .await
        .expect("get")
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut events = Vec::new();
    while let Ok(Ok(Some(ev))) =
        tokio::time::timeout(Duration::from_millis(300), watch.try_next()).await
    {
        match ev {
            WatchEvent::Modified(cm) => events.push(format!(
                "MODIFIED {}",
                cm.metadata.resource_version.unwrap_or_default()
            )),
            WatchEvent::Bookmark(_) => {}
            other => events.push(format!("{other:?}")),
        }
    }
    assert_eq!(
        injector.count(FaultKind::Conflict) + injector.count(FaultKind::BareConflict),
        1
    );
    cluster.shutdown().await;
    (code, before, after, events)
}

#[tokio::test]
async fn injected_conflict_comes_with_a_concurrent_change() {
    let (code, before, after, events) = conflicting_update("conflict=1@update:pods", "p").await;
    assert_eq!(code, 409);
    assert_ne!(before, after, "another client changed the object first");
    assert_eq!(events, vec![format!("MODIFIED {after}")]);
}

#[tokio::test]
async fn bare_conflict_changes_nothing() {
    let (code, before, after, events) =
        conflicting_update("conflict-bare=1@update:pods", "p").await;
    assert_eq!(code, 409);
    assert_eq!(before, after);
    assert!(events.is_empty(), "{events:?}");
}
