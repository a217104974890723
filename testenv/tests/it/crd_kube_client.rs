//! Custom resources through kube-client and kube-runtime, as a controller's tests use them: a
//! typed CRD is installed and awaited, objects are `DynamicObject`s, a kube-runtime
//! `Controller` reconciles them and the test asserts on what a client sees. On a real
//! kube-apiserver with `KCM_SPEC_SERVER` (see testenv/README.md).

use std::sync::Arc;
use std::time::Duration;

use crate::common::crd::{widget_crd, widgets};
use crate::common::server::Server;
use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube_runtime::controller::{Action, Controller};
use kube_runtime::wait::{await_condition, conditions};
use kube_runtime::watcher;
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct ReconcileError(#[from] kube::Error);

/// The controller under test: every Widget gets `status.phase: Ready` and
/// `status.replicas` equal to its spec's.
async fn reconcile(
    obj: Arc<DynamicObject>,
    api: Arc<Api<DynamicObject>>,
) -> Result<Action, ReconcileError> {
    let name = obj.metadata.name.clone().unwrap_or_default();
    let replicas = obj.data["spec"]["replicas"].as_i64().unwrap_or(0);
    let status = json!({"status": {"phase": "Ready", "replicas": replicas}});
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    Ok(Action::await_change())
}

#[tokio::test]
async fn a_kube_runtime_controller_reconciles_custom_resources() {
    let env = Server::start("crd-kube").await;
    let client = env.client();
    let group = env.group("w");
    let ns = env.ns("n").await;

    // install the CRD and wait until it is Established
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition =
        serde_json::from_value(widget_crd(&group, "Namespaced")).expect("crd");
    let name = format!("widgets.{group}");
    env.track_crd(&name);
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("create CRD");
    let established = await_condition(crds.clone(), &name, conditions::is_crd_established());
    tokio::time::timeout(Duration::from_secs(30), established)
        .await
        .expect("established in time")
        .expect("watch");

    // objects are DynamicObjects of the Widget resource
    let ar = widgets(&group);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &ar);
    let mut w = DynamicObject::new("first", &ar).within(&ns);
    w.data = json!({"spec": {"color": "red", "replicas": 3}});
    let created = api
        .create(&PostParams::default(), &w)
        .await
        .expect("create");
    assert_eq!(created.data["spec"]["size"], "M", "schema default");
    assert_eq!(created.metadata.generation, Some(1));

    // run the controller under test against the server, as it would run in a cluster
    let shared = Arc::new(api.clone());
    let controller = Controller::new_with(api.clone(), watcher::Config::default(), ar.clone())
        .run(
            reconcile,
            |_, _: &ReconcileError, _| Action::requeue(Duration::from_millis(200)),
            shared,
        )
        .for_each(|_| async {});
    let running = tokio::spawn(controller);

    // ... and assert on what a client sees
    let mut second = DynamicObject::new("second", &ar).within(&ns);
    second.data = json!({"spec": {"color": "blue", "replicas": 5}});
    api.create(&PostParams::default(), &second)
        .await
        .expect("create second");
    for name in ["first", "second"] {
        let ready = await_condition(api.clone(), name, |o: Option<&DynamicObject>| {
            o.is_some_and(|o| o.data["status"]["phase"] == "Ready")
        });
        let got = tokio::time::timeout(Duration::from_secs(30), ready)
            .await
            .expect("reconciled in time")
            .expect("watch")
            .expect("object");
        assert_eq!(got.data["status"]["replicas"], got.data["spec"]["replicas"]);
        // the status subresource does not move the generation
        assert_eq!(got.metadata.generation, Some(1));
    }
    let list = api
        .list(&ListParams::default().fields("metadata.name=second"))
        .await
        .expect("list");
    assert_eq!(list.items.len(), 1);
    if let Some(te) = env.testenv_only("testenv's request counters") {
        assert!(te.counters().watch_events("widgets") > 0);
        assert!(te.counters().count("patch", "widgets/status") >= 2);
    }
    running.abort();
    env.finish().await;
}
