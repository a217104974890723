//! A projected type: a compact Pod holding only the fields a controller reads, deserialized
//! straight from the wire into the informer's cache.

use crate::common;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::common::{NS, cluster, run_synced};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_informer::{EventHandlerFns, InformerOptions, Selector, SharedIndexInformer};
use kube::api::{Api, PostParams};
use parking_lot::Mutex;
use serde::Deserialize;

/// The fields of a Pod a ReplicaSet-like controller reads; everything else is skipped by serde.
#[derive(Clone, Debug, Deserialize)]
struct PodLite {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: PodLiteSpec,
    #[serde(default)]
    status: Option<PodLiteStatus>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodLiteSpec {
    #[serde(default)]
    node_name: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
struct PodLiteStatus {
    #[serde(default)]
    phase: Option<String>,
}

impl k8s_openapi::Resource for PodLite {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for PodLite {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

fn pod(name: &str, app: &str, node: Option<&str>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            annotations: Some(BTreeMap::from([("big".to_string(), "x".repeat(2048))])),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            node_name: node.map(str::to_owned),
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
async fn projected_pod_type_is_watched_cached_and_listed() {
    let cluster = cluster().await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NS);
    pods.create(&PostParams::default(), &pod("web-1", "web", Some("node-a")))
        .await
        .expect("create");
    pods.create(&PostParams::default(), &pod("db-1", "db", None))
        .await
        .expect("create");

    let informer = SharedIndexInformer::<PodLite>::new(
        cluster.client(),
        InformerOptions::default().namespace(NS),
    );
    // Drop even the annotations: a projected type plus a transform keeps only what is read.
    informer
        .set_transform(|mut p: PodLite| {
            p.metadata.annotations = None;
            p.metadata.managed_fields = None;
            p
        })
        .expect("transform");
    let added = Arc::new(Mutex::new(Vec::new()));
    let a = Arc::clone(&added);
    informer
        .add_event_handler(EventHandlerFns::new().on_add(move |p: &Arc<PodLite>, _| {
            a.lock().push(p.metadata.name.clone().unwrap_or_default());
        }))
        .expect("handler");
    let cancel = run_synced(&informer, Duration::from_secs(30)).await;

    let lister = informer.lister();
    let web = lister
        .namespaced(NS)
        .list(&Selector::parse("app=web").expect("selector"));
    assert_eq!(web.len(), 1);
    assert_eq!(web[0].spec.node_name.as_deref(), Some("node-a"));
    assert!(web[0].metadata.annotations.is_none());
    let db = lister.get(NS, "db-1").expect("db cached");
    assert_eq!(db.spec.node_name, None);
    let _phase = db.status.as_ref().and_then(|s| s.phase.clone());
    common::eventually("handler saw both pods", || added.lock().len() == 2).await;

    pods.create(&PostParams::default(), &pod("web-2", "web", Some("node-b")))
        .await
        .expect("create");
    common::eventually("live add of a projected pod", || {
        lister.get(NS, "web-2").is_some()
    })
    .await;
    cancel.cancel();
}
