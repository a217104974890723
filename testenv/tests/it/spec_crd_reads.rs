//! Custom resource checks C7–C9: reading custom objects (selectors, watch through another
//! version, cluster scope, Tables) and deleting them with their namespace, over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Custom resources").

use crate::common::crd::{
    install, namespaced_widgets, two_versions, wait_for, widget, widget_crd, widgets_in_namespace,
};
use crate::common::server::Server;
use crate::common::spec::rv;
use crate::common::{Watch, patch, req, request_full};
use serde_json::{Value, json};

/// C7: selectors and watch: label selectors, `metadata.name`/`metadata.namespace` field
/// selectors (no other field labels, no namespace for cluster-scoped ones), a watch through
/// another version with initial events and selector transitions.
#[tokio::test]
async fn c7_selectors_and_watch() {
    let env = Server::start("crd-c7").await;
    let (group, ns, base) = widgets_in_namespace(&env, two_versions).await;
    for (n, l) in [("a", "1"), ("b", "2")] {
        let mut w = widget(&group, n, json!({"color": "red"}));
        w["metadata"]["labels"] = json!({"tier": l});
        assert_eq!(req(&env, "POST", &base, Some(&w)).await.code, 201);
    }
    let names = |l: Value| -> Vec<String> {
        l["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(
        names(
            req(&env, "GET", &format!("{base}?labelSelector=tier%3D2"), None)
                .await
                .json()
        ),
        vec!["b"]
    );
    assert_eq!(
        names(
            req(
                &env,
                "GET",
                &format!("{base}?fieldSelector=metadata.name%3Da"),
                None
            )
            .await
            .json()
        ),
        vec!["a"]
    );
    let all = format!("/apis/{group}/v1/widgets?fieldSelector=metadata.namespace%3D{ns}");
    assert_eq!(
        names(req(&env, "GET", &all, None).await.json()),
        vec!["a", "b"]
    );
    let r = req(
        &env,
        "GET",
        &format!("{base}?fieldSelector=spec.color%3Dred"),
        None,
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (400, json!("field label not supported: spec.color"))
    );
    let r = req(&env, "GET", &format!("{base}?limit=1"), None)
        .await
        .json();
    assert_eq!(
        (
            names(r.clone()),
            r["metadata"]["remainingItemCount"].clone()
        ),
        (vec!["a".to_string()], json!(1))
    );
    // a watch of v1beta1 with initial events: the label selector's transitions
    let v1beta1 = format!("/apis/{group}/v1beta1/namespaces/{ns}/widgets");
    let mut w = Watch::open(&env, &format!("{v1beta1}?watch=true&labelSelector=tier%3D1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=30")).await;
    let e = w.next().await.expect("ADDED");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["metadata"]["name"].clone(),
            e["object"]["apiVersion"].clone()
        ),
        (
            json!("ADDED"),
            json!("a"),
            json!(format!("{group}/v1beta1"))
        )
    );
    let e = w.next().await.expect("BOOKMARK");
    assert_eq!(
        e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    patch(
        &env,
        &format!("{base}/a"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"tier": "3"}}}),
    )
    .await;
    patch(
        &env,
        &format!("{base}/b"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"tier": "1"}}}),
    )
    .await;
    let e = w.next().await.expect("left");
    assert_eq!(
        (e["type"].clone(), e["object"]["metadata"]["name"].clone()),
        (json!("DELETED"), json!("a"))
    );
    let e = w.next().await.expect("entered");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["metadata"]["name"].clone(),
            e["object"]["apiVersion"].clone()
        ),
        (
            json!("ADDED"),
            json!("b"),
            json!(format!("{group}/v1beta1"))
        )
    );
    // cluster-scoped custom resources: no namespace field label, no namespaced paths
    let cg = env.group("c");
    let mut things = widget_crd(&cg, "Cluster");
    things["metadata"]["name"] = json!(format!("widgets.{cg}"));
    install(&env, &things).await;
    let cbase = format!("/apis/{cg}/v1/widgets");
    assert_eq!(
        req(
            &env,
            "POST",
            &cbase,
            Some(&widget(&cg, "x", json!({"color": "red"})))
        )
        .await
        .code,
        201
    );
    let r = req(
        &env,
        "GET",
        &format!("{cbase}?fieldSelector=metadata.namespace%3Dx"),
        None,
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (400, json!("field label not supported: metadata.namespace"))
    );
    let r = req(
        &env,
        "GET",
        &format!("/apis/{cg}/v1/namespaces/{ns}/widgets"),
        None,
    )
    .await;
    assert_eq!(
        (r.code, r.body.as_slice()),
        (404, &b"404 page not found\n"[..])
    );
    let sc = req(&env, "GET", &format!("{cbase}/x/scale"), None)
        .await
        .json();
    assert_eq!(
        (sc["metadata"].get("namespace"), sc["spec"].clone()),
        (None, json!({"replicas": 1}))
    );
    let del = req(
        &env,
        "DELETE",
        &format!("{cbase}?fieldSelector=metadata.name%3Dx"),
        None,
    )
    .await
    .json();
    assert_eq!(
        (del["kind"].clone(), names(del)),
        (json!("WidgetList"), vec!["x".to_string()])
    );
    env.finish().await;
}

/// C8: server-side Tables (`kubectl get`): the name, the CRD's printer columns, typed cells.
#[tokio::test]
async fn c8_tables() {
    let env = Server::start("crd-c8").await;
    let (group, _, base) = widgets_in_namespace(&env, namespaced_widgets).await;
    req(
        &env,
        "POST",
        &base,
        Some(&widget(&group, "a", json!({"color": "red", "replicas": 2}))),
    )
    .await;
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let t = request_full(&env, "GET", &base, "application/json", accept, b"")
        .await
        .json();
    let cols: Vec<(Value, Value)> = t["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (c["name"].clone(), c["type"].clone()))
        .collect();
    assert_eq!(
        cols,
        vec![
            (json!("Name"), json!("string")),
            (json!("Color"), json!("string")),
            (json!("Replicas"), json!("integer"))
        ]
    );
    assert_eq!(t["rows"][0]["cells"], json!(["a", "red", 2]));
    assert_eq!(
        t["columnDefinitions"][1]["description"],
        "Custom resource definition column (in JSONPath format): .spec.color"
    );
    let crd = request_full(
        &env,
        "GET",
        &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}"),
        "application/json",
        accept,
        b"",
    )
    .await
    .json();
    let cells = &crd["rows"][0]["cells"];
    assert_eq!(
        (
            cells[0].clone(),
            cells[1].clone(),
            cells[2].clone(),
            cells[4].clone(),
            cells[5].clone(),
            cells[6].clone(),
            cells[7].clone()
        ),
        (
            json!(format!("widgets.{group}")),
            json!("Namespaced"),
            json!("v1(storage)"),
            json!(group),
            json!("Widget"),
            json!("wdg"),
            json!(true)
        )
    );
    env.finish().await;
}

/// C9: deleting a namespace deletes its custom resources.
#[tokio::test]
async fn c9_namespace_deletion() {
    let env = Server::start("crd-c9").await;
    let (group, ns, base) = widgets_in_namespace(&env, namespaced_widgets).await;
    req(
        &env,
        "POST",
        &base,
        Some(&widget(&group, "a", json!({"color": "red"}))),
    )
    .await;
    let before = rv(&req(&env, "GET", &base, None).await.json());
    assert!(before > 0);
    assert_eq!(
        req(&env, "DELETE", &format!("/api/v1/namespaces/{ns}"), None)
            .await
            .code,
        200
    );
    let all = format!("/apis/{group}/v1/widgets?fieldSelector=metadata.namespace%3D{ns}");
    wait_for(&env, &all, |l| {
        l["items"].as_array().is_some_and(Vec::is_empty)
    })
    .await;
    assert!(
        env.wait_gone(&format!("/api/v1/namespaces/{ns}"), 600)
            .await,
        "the namespace stays"
    );
    env.finish().await;
}
