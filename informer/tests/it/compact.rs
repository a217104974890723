//! `Compact<Pod>` in a shared informer over real HTTP: listed, watched and selected like `Pod`,
//! and decoding back to exactly what the API server holds.

use crate::common;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::{NS, cluster, run_synced};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_informer::{Compact, InformerOptions, Selector, SharedIndexInformer};
use kube::api::{Api, Patch, PatchParams, PostParams};

fn pod(name: &str, app: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("nginx:1.27".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_pods_are_listed_watched_selected_and_decoded() {
    let cluster = cluster().await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NS);
    for (name, app) in [("web-1", "web"), ("db-1", "db")] {
        pods.create(&PostParams::default(), &pod(name, app))
            .await
            .expect("create");
    }
    let informer = SharedIndexInformer::<Compact<Pod>>::new(
        cluster.client(),
        InformerOptions::default().namespace(NS),
    );
    let cancel = run_synced(&informer, Duration::from_secs(30)).await;
    let lister = informer.lister();
    let web = lister
        .namespaced(NS)
        .list(&Selector::parse("app=web").expect("selector"));
    assert_eq!(web.len(), 1);
    let listed = web[0].decode().expect("decode");
    assert_eq!(listed, pods.get("web-1").await.expect("get"), "list path");

    // A watched update arrives compact and decodes to the server's object.
    pods.patch(
        "db-1",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"activeDeadlineSeconds": 30}})),
    )
    .await
    .expect("patch");
    let server = pods.get("db-1").await.expect("get");
    common::eventually("the update is watched", || {
        lister
            .get(NS, "db-1")
            .and_then(|c| c.decode().ok())
            .is_some_and(|p| p == server)
    })
    .await;
    cancel.cancel();
}
