//! The idiomatic kube-runtime controller: it owns objects it writes with server-side apply
//! (`Patch::Apply` with its own field manager), and applies its custom resource's status the
//! same way. On a real kube-apiserver with `KCM_SPEC_SERVER` (see testenv/README.md).

use std::sync::Arc;
use std::time::Duration;

use crate::common::crd::{install, widget_crd, widgets};
use crate::common::server::Server;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use kube_runtime::controller::{Action, Controller};
use kube_runtime::wait::await_condition;
use kube_runtime::watcher;
use serde_json::json;

const MANAGER: &str = "widget-controller";

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct ReconcileError(#[from] kube::Error);

struct Ctx {
    client: Client,
    ar: ApiResource,
    config_maps: bool,
}

/// Every Widget gets a ConfigMap `<name>-config` holding its color (owned, applied) and a
/// status with the phase `Ready` (applied through the status subresource).
async fn reconcile(w: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let ns = w.namespace().unwrap_or_default();
    let name = w.name_any();
    let params = PatchParams::apply(MANAGER).force();
    if ctx.config_maps {
        let owner = w
            .controller_owner_ref(&ctx.ar)
            .map(|o| serde_json::to_value(o).unwrap_or_default());
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("{name}-config"), "ownerReferences": [owner]},
            "data": {"color": w.data["spec"]["color"]}});
        let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
        cms.patch(&format!("{name}-config"), &params, &Patch::Apply(&cm))
            .await?;
    }
    let status = json!({"apiVersion": ctx.ar.api_version, "kind": "Widget",
        "metadata": {"name": name}, "status": {"phase": "Ready", "replicas": w.data["spec"]["replicas"]}});
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &ns, &ctx.ar);
    api.patch_status(&name, &params, &Patch::Apply(&status))
        .await?;
    Ok(Action::await_change())
}

async fn run(env: &Server, config_maps: bool) {
    let client = env.client();
    let group = env.group("w");
    let ns = env.ns("n").await;
    install(env, &widget_crd(&group, "Namespaced")).await;
    let ar = widgets(&group);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &ar);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        ar: ar.clone(),
        config_maps,
    });
    let mut controller = Controller::new_with(api.clone(), watcher::Config::default(), ar.clone());
    if config_maps {
        controller = controller.owns(cms.clone(), watcher::Config::default());
    }
    let running = tokio::spawn(
        controller
            .run(
                reconcile,
                |_, _: &ReconcileError, _| Action::requeue(Duration::from_millis(200)),
                ctx,
            )
            .for_each(|_| async {}),
    );
    let mut w = DynamicObject::new("w", &ar).within(&ns);
    w.data = json!({"spec": {"color": "red", "replicas": 2}});
    api.create(&PostParams::default(), &w)
        .await
        .expect("create");
    let ready = await_condition(api.clone(), "w", |o: Option<&DynamicObject>| {
        o.is_some_and(|o| o.data["status"]["phase"] == "Ready")
    });
    let got = tokio::time::timeout(Duration::from_secs(30), ready)
        .await
        .expect("reconciled in time")
        .expect("watch")
        .expect("object");
    // the status is the controller's, applied through the status subresource
    let entry = got
        .meta()
        .managed_fields
        .iter()
        .flatten()
        .find(|e| e.manager.as_deref() == Some(MANAGER))
        .expect("the controller's managedFields entry");
    assert_eq!(
        (entry.operation.as_deref(), entry.subresource.as_deref()),
        (Some("Apply"), Some("status"))
    );
    if config_maps {
        let has = |color: &'static str| {
            move |c: Option<&ConfigMap>| {
                c.and_then(|c| c.data.as_ref())
                    .and_then(|d| d.get("color"))
                    .is_some_and(|v| v == color)
            }
        };
        let cm = tokio::time::timeout(
            Duration::from_secs(30),
            await_condition(cms.clone(), "w-config", has("red")),
        )
        .await
        .expect("ConfigMap in time")
        .expect("watch")
        .expect("ConfigMap");
        assert_eq!(
            cm.owner_references()[0].uid,
            got.uid().unwrap_or_default(),
            "owned by the Widget"
        );
        // a change of the Widget reaches the ConfigMap
        api.patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"color": "blue"}})),
        )
        .await
        .expect("patch");
        tokio::time::timeout(
            Duration::from_secs(30),
            await_condition(cms.clone(), "w-config", has("blue")),
        )
        .await
        .expect("updated in time")
        .expect("watch");
        // a deleted ConfigMap is applied again (the controller watches what it owns)
        cms.delete("w-config", &DeleteParams::default())
            .await
            .expect("delete");
        tokio::time::timeout(
            Duration::from_secs(30),
            await_condition(cms.clone(), "w-config", has("blue")),
        )
        .await
        .expect("recreated in time")
        .expect("watch");
    }
    running.abort();
}

#[tokio::test]
async fn a_kube_runtime_controller_applies_status() {
    let env = Server::start("apply-ctrl").await;
    run(&env, false).await;
    env.finish().await;
}

#[tokio::test]
async fn a_kube_runtime_controller_owns_configmaps_it_applies() {
    let env = Server::start("apply-cm").await;
    run(&env, true).await;
    env.finish().await;
}
