//! Custom resources on kcm-testenv, the way a controller's tests use them: start the API
//! server in-process, install a CRD and wait until it is Established, create an object and
//! read it back (schema defaults applied, unknown fields pruned), run a kube-runtime
//! controller that fills in its status, and see the result as any client would.
//!
//! ```sh
//! cargo run -p kcm-testenv --example custom_resource
//! ```

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcm_testenv::{TestEnv, TestEnvConfig};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube_runtime::controller::{Action, Controller};
use kube_runtime::wait::{await_condition, conditions};
use kube_runtime::watcher;
use serde_json::json;

/// The CRD: `Widget` in `example.com/v1`, with a schema and the status subresource.
fn crd() -> anyhow::Result<CustomResourceDefinition> {
    Ok(serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "color": {"type": "string", "enum": ["red", "green", "blue"]},
                        "replicas": {"type": "integer", "minimum": 0, "default": 1}}},
                    "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                }}},
            }],
        },
    }))?)
}

/// The controller: every Widget gets `status.phase: Ready`.
async fn reconcile(
    obj: Arc<DynamicObject>,
    api: Arc<Api<DynamicObject>>,
) -> Result<Action, kube::Error> {
    let name = obj.metadata.name.clone().unwrap_or_default();
    let status = json!({"status": {"phase": "Ready"}});
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    Ok(Action::await_change())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = TestEnv::start(TestEnvConfig::default()).await?;
    let client = env.client();

    // install the CRD; the server accepts its names and establishes it
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &crd()?).await?;
    let established = await_condition(
        crds,
        "widgets.example.com",
        conditions::is_crd_established(),
    );
    tokio::time::timeout(Duration::from_secs(10), established).await??;
    println!("CRD widgets.example.com established");

    // create a Widget and read it back: `replicas` defaulted, `bogus` pruned
    let ar = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let mut w = DynamicObject::new("w1", &ar);
    w.data = json!({"spec": {"color": "blue", "bogus": true}});
    api.create(&PostParams::default(), &w).await?;
    let got = api.get("w1").await?;
    println!("read back: spec {}", got.data["spec"]);
    assert_eq!(got.data["spec"], json!({"color": "blue", "replicas": 1}));

    // run the controller against the in-process server, as it would run in a cluster
    let controller = Controller::new_with(api.clone(), watcher::Config::default(), ar)
        .run(
            reconcile,
            |_, _, _| Action::requeue(Duration::from_millis(200)),
            Arc::new(api.clone()),
        )
        .for_each(|_| async {});
    let running = tokio::spawn(controller);
    let ready = await_condition(api.clone(), "w1", |o: Option<&DynamicObject>| {
        o.is_some_and(|o| o.data["status"]["phase"] == "Ready")
    });
    let w1 = tokio::time::timeout(Duration::from_secs(10), ready).await??;
    println!(
        "reconciled: status {}",
        w1.map(|o| o.data["status"].clone()).unwrap_or_default()
    );
    running.abort();
    env.shutdown().await;
    Ok(())
}
