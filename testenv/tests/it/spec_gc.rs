//! Garbage collection and namespace deletion of custom resources, as a client observes them: on
//! an embedded TestEnv with the simulated garbage collector and namespace controller, or on a
//! real kube-apiserver with `KCM_SPEC_SERVER` (see testenv/README.md), where
//! kube-controller-manager's own controllers do the work.

use crate::common::crd::{install, wait_for};
use crate::common::server::Server;
use crate::common::{patch, req};
use kcm_testenv::sim::{SimConfig, SimHandle, Simulation};
use serde_json::{Value, json};

const HOLD: &str = "example.com/hold";

fn crd(group: &str, kind: &str) -> Value {
    let plural = format!("{}s", kind.to_lowercase());
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]},
    })
}

/// The simulated garbage collector and namespace controller on TestEnv (the server's built-in
/// namespace cleanup off, as with `TestCluster`); nothing on a real server.
async fn controllers(env: &Server) -> Option<SimHandle> {
    let testenv = env.env()?;
    testenv
        .server()
        .namespace_cleanup
        .store(false, std::sync::atomic::Ordering::Relaxed);
    let config = SimConfig {
        kubelet: false,
        scheduler: false,
        ..SimConfig::default()
    };
    Some(
        Simulation::start(testenv.client(), config)
            .await
            .expect("simulation"),
    )
}

fn owned(group: &str, kind: &str, name: &str, owner: &Value, block: bool, fins: &[&str]) -> Value {
    let mut obj = json!({
        "apiVersion": format!("{group}/v1"), "kind": kind,
        "metadata": {"name": name, "ownerReferences": [{
            "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": block,
        }]},
        "spec": {},
    });
    if !fins.is_empty() {
        obj["metadata"]["finalizers"] = json!(fins);
    }
    obj
}

#[tokio::test]
async fn custom_resources_are_collected_with_every_propagation_policy() {
    let env = Server::start("gc").await;
    let sim = controllers(&env).await;
    let group = env.group("g");
    install(&env, &crd(&group, "Widget")).await;
    install(&env, &crd(&group, "Gadget")).await;
    let ns = env.ns("n").await;
    let widgets = format!("/apis/{group}/v1/namespaces/{ns}/widgets");
    let gadgets = format!("/apis/{group}/v1/namespaces/{ns}/gadgets");
    let create = |path: String, body: Value| {
        let env = &env;
        async move {
            let r = req(env, "POST", &path, Some(&body)).await;
            assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
            r.json()
        }
    };
    let widget = |name: &str| json!({"apiVersion": format!("{group}/v1"), "kind": "Widget", "metadata": {"name": name}, "spec": {}});

    // Background: the owner goes at once, its dependent after it.
    let owner = create(widgets.clone(), widget("bg")).await;
    create(
        gadgets.clone(),
        owned(&group, "Gadget", "bg", &owner, true, &[]),
    )
    .await;
    let r = req(
        &env,
        "DELETE",
        &format!("{widgets}/bg"),
        Some(&json!({"propagationPolicy": "Background"})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["status"].clone()),
        (200, json!("Success"))
    );
    assert!(
        env.wait_gone(&format!("{gadgets}/bg"), 600).await,
        "dependent collected"
    );

    // Foreground: the owner waits with foregroundDeletion while its blocking dependent is held.
    let owner = create(widgets.clone(), widget("fg")).await;
    create(
        gadgets.clone(),
        owned(&group, "Gadget", "fg", &owner, true, &[HOLD]),
    )
    .await;
    let r = req(
        &env,
        "DELETE",
        &format!("{widgets}/fg"),
        Some(&json!({"propagationPolicy": "Foreground"})),
    )
    .await;
    assert_eq!(
        r.json()["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    wait_for(&env, &format!("{gadgets}/fg"), |g| {
        g["metadata"]["deletionTimestamp"].is_string()
    })
    .await;
    let waiting = req(&env, "GET", &format!("{widgets}/fg"), None).await;
    assert_eq!(
        waiting.code, 200,
        "the owner waits for its blocking dependent"
    );
    let release = json!({"metadata": {"finalizers": null}});
    patch(
        &env,
        &format!("{gadgets}/fg"),
        "application/merge-patch+json",
        &release,
    )
    .await;
    assert!(
        env.wait_gone(&format!("{widgets}/fg"), 600).await,
        "owner gone after its dependent"
    );

    // Orphan: the dependent stays, without its reference.
    let owner = create(widgets.clone(), widget("or")).await;
    create(
        gadgets.clone(),
        owned(&group, "Gadget", "or", &owner, true, &[]),
    )
    .await;
    req(
        &env,
        "DELETE",
        &format!("{widgets}/or"),
        Some(&json!({"propagationPolicy": "Orphan"})),
    )
    .await;
    assert!(
        env.wait_gone(&format!("{widgets}/or"), 600).await,
        "orphaning owner gone"
    );
    let kept = req(&env, "GET", &format!("{gadgets}/or"), None)
        .await
        .json();
    assert_eq!(kept["metadata"]["ownerReferences"], Value::Null, "{kept}");
    assert_eq!(kept["metadata"]["deletionTimestamp"], Value::Null);

    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    env.finish().await;
}

#[tokio::test]
async fn a_namespace_held_by_custom_content_reports_it_in_its_conditions() {
    let env = Server::start("nsdel").await;
    let sim = controllers(&env).await;
    let group = env.group("g");
    install(&env, &crd(&group, "Widget")).await;
    let ns = env.ns("n").await;
    let widgets = format!("/apis/{group}/v1/namespaces/{ns}/widgets");
    let body = json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
                      "metadata": {"name": "held", "finalizers": [HOLD]}, "spec": {}});
    assert_eq!(req(&env, "POST", &widgets, Some(&body)).await.code, 201);
    req(&env, "DELETE", &format!("/api/v1/namespaces/{ns}"), None).await;
    let path = format!("/api/v1/namespaces/{ns}");
    let terminating = wait_for(&env, &path, |n| {
        n["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "NamespaceFinalizersRemaining" && c["status"] == "True")
        })
    })
    .await;
    let conditions: Vec<Value> = terminating["status"]["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| json!([c["type"], c["status"], c["reason"], c["message"]]))
        .collect();
    assert_eq!(
        conditions,
        [
            json!([
                "NamespaceDeletionDiscoveryFailure",
                "False",
                "ResourcesDiscovered",
                "All resources successfully discovered"
            ]),
            json!([
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed"
            ]),
            json!([
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization"
            ]),
            json!([
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                format!("Some resources are remaining: widgets.{group} has 1 resource instances")
            ]),
            json!([
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                format!(
                    "Some content in the namespace has finalizers remaining: {HOLD} in 1 resource instances"
                )
            ]),
        ]
    );
    assert_eq!(terminating["status"]["phase"], "Terminating");
    let release = json!({"metadata": {"finalizers": null}});
    patch(
        &env,
        &format!("{widgets}/held"),
        "application/merge-patch+json",
        &release,
    )
    .await;
    assert!(
        env.wait_gone(&path, 600).await,
        "namespace gone once its content is"
    );

    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    env.finish().await;
}
