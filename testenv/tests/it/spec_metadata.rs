//! Metadata-only answers (`as=PartialObjectMetadata` and `as=PartialObjectMetadataList` of
//! `meta.k8s.io` v1 and v1beta1) on get, list, watch, create and patch, built-in and custom
//! resources, and the 406s of wrong combinations (upstream
//! staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go), over real HTTP. On an
//! embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (testenv/README.md).

use crate::common::crd::{install, namespaced_widgets, wait_for, widget};
use crate::common::server::Server;
use crate::common::spec::deployment;
use crate::common::{Watch, req, request_full};
use serde_json::{Value, json};

const POM: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const POM_BETA: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1";
const POML: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

async fn get(env: &Server, path: &str, accept: &str) -> (u16, Option<String>, Value) {
    let r = request_full(env, "GET", path, "application/json", accept, b"").await;
    let ct = r.header("content-type").map(str::to_string);
    (r.code, ct, r.json())
}

fn lease(name: &str) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
           "metadata": {"name": name, "labels": {"app": "meta"}, "annotations": {"a": "b"}},
           "spec": {"holderIdentity": "me"}})
}

fn message(v: &Value) -> &str {
    v["message"].as_str().unwrap_or("")
}

/// GET, list, create and patch of Leases in the metadata views, and the 406s.
#[tokio::test]
async fn metadata_views_of_a_builtin_kind() {
    let env = Server::start("metaviews").await;
    let ns = env.ns("m").await;
    let base = format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases");
    let full = req(&env, "POST", &base, Some(&lease("a"))).await.json();
    req(&env, "POST", &base, Some(&lease("b"))).await;

    // the object's whole metadata and nothing else; application/json
    let (code, ct, v) = get(&env, &format!("{base}/a"), POM).await;
    assert_eq!((code, ct.as_deref()), (200, Some("application/json")));
    assert_eq!(
        v,
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]})
    );
    let (_, _, v) = get(&env, &format!("{base}/a"), POM_BETA).await;
    assert_eq!(v["apiVersion"], "meta.k8s.io/v1beta1");
    // a clause kube-apiserver cannot convert to is passed over
    let (code, _, v) = get(
        &env,
        &format!("{base}/a"),
        &format!("application/json;as=Bogus;g=meta.k8s.io;v=v1, {POM}"),
    )
    .await;
    assert_eq!(
        (code, v["kind"].clone()),
        (200, json!("PartialObjectMetadata"))
    );

    let (code, _, l) = get(&env, &format!("{base}?labelSelector=app%3Dmeta"), POML).await;
    assert_eq!(code, 200);
    assert_eq!(
        (&l["kind"], &l["apiVersion"]),
        (
            &json!("PartialObjectMetadataList"),
            &json!("meta.k8s.io/v1")
        )
    );
    assert!(l["metadata"]["resourceVersion"].is_string());
    assert!(l["metadata"].get("continue").is_none());
    let items = l["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert_eq!(
        items[0],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]})
    );
    let (_, _, page) = get(&env, &format!("{base}?limit=1"), POML).await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1));
    assert!(
        page["metadata"]["continue"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    );
    assert_eq!(page["metadata"]["remainingItemCount"], 1);
    // no items: null, as upstream's nil slice
    let empty = env.ns("empty").await;
    let (_, _, l) = get(
        &env,
        &format!("/apis/coordination.k8s.io/v1/namespaces/{empty}/leases"),
        POML,
    )
    .await;
    assert_eq!(l["items"], Value::Null);

    // wrong combinations are 406s naming upstream's internal types
    let (code, _, v) = get(&env, &format!("{base}/a"), POML).await;
    assert_eq!(
        (code, message(&v)),
        (
            406,
            "you requested PartialObjectMetadataList, but the requested object is not a list (*coordination.Lease)"
        )
    );
    let (code, _, v) = get(&env, &base, POM).await;
    assert_eq!(
        (code, message(&v)),
        (
            406,
            "you requested PartialObjectMetadata, but the requested object is a list (*coordination.LeaseList)"
        )
    );
    let (code, _, v) = get(&env, &base, "application/json;as=Bogus;g=meta.k8s.io;v=v1").await;
    assert_eq!(
        (code, message(&v), v.get("details")),
        (
            406,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            None
        )
    );

    // writes answer in the view asked for; the write happens even when the view cannot
    let body = serde_json::to_vec(&lease("c")).expect("json");
    let r = request_full(&env, "POST", &base, "application/json", POM, &body).await;
    assert_eq!(
        (r.code, r.json()["kind"].clone()),
        (201, json!("PartialObjectMetadata"))
    );
    let body = serde_json::to_vec(&lease("d")).expect("json");
    let r = request_full(&env, "POST", &base, "application/json", POML, &body).await;
    assert_eq!(
        (r.code, message(&r.json()).to_string()),
        (406, "you requested PartialObjectMetadataList, but the requested object is not a list (*coordination.Lease)".to_string())
    );
    assert_eq!(req(&env, "GET", &format!("{base}/d"), None).await.code, 200);
    let r = request_full(
        &env,
        "PATCH",
        &format!("{base}/a"),
        "application/merge-patch+json",
        POM,
        br#"{"metadata":{"labels":{"x":"y"}}}"#,
    )
    .await;
    let v = r.json();
    assert_eq!(
        (r.code, &v["kind"], &v["metadata"]["labels"]["x"]),
        (200, &json!("PartialObjectMetadata"), &json!("y"))
    );
    assert!(v.get("spec").is_none());

    // a subresource's own type: the Scale of a Deployment
    let deploys = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let r = req(
        &env,
        "POST",
        &deploys,
        Some(&deployment("d", json!({"app": "web"}))),
    )
    .await;
    assert_eq!(r.code, 201);
    let (code, _, v) = get(&env, &format!("{deploys}/d/scale"), POML).await;
    assert_eq!(
        (code, message(&v)),
        (
            406,
            "you requested PartialObjectMetadataList, but the requested object is not a list (*autoscaling.Scale)"
        )
    );
    let (code, _, v) = get(&env, &format!("{deploys}/d/scale"), POM).await;
    assert_eq!(
        (code, &v["kind"], &v["metadata"]["name"]),
        (200, &json!("PartialObjectMetadata"), &json!("d"))
    );

    // Tables are plain application/json too
    let (code, ct, t) = get(&env, &base, "application/json;as=Table;g=meta.k8s.io;v=v1").await;
    assert_eq!(
        (code, ct.as_deref(), t["kind"].clone()),
        (200, Some("application/json"), json!("Table"))
    );
    env.finish().await;
}

/// Watches in the metadata view: events and bookmarks as `PartialObjectMetadata`; asked as a
/// list, no event can be written and the stream ends at the first one.
#[tokio::test]
async fn metadata_watches() {
    let env = Server::start("metawatch").await;
    let ns = env.ns("m").await;
    let base = format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases");
    let full = req(&env, "POST", &base, Some(&lease("a"))).await.json();
    let q = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5";
    let mut w = Watch::open_accept(&env, &format!("{base}?{q}"), POM).await;
    assert_eq!(
        (
            w.code,
            w.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| v.as_str())
        ),
        (200, Some("application/json"))
    );
    let ev = w.next().await.expect("ADDED");
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(
        ev["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]})
    );
    let ev = w.next().await.expect("BOOKMARK");
    assert_eq!(ev["type"], "BOOKMARK");
    assert_eq!(
        (
            &ev["object"]["kind"],
            &ev["object"]["apiVersion"],
            &ev["object"]["metadata"]["annotations"]
        ),
        (
            &json!("PartialObjectMetadata"),
            &json!("meta.k8s.io/v1"),
            &json!({"k8s.io/initial-events-end": "true"})
        )
    );
    req(&env, "DELETE", &format!("{base}/a"), None).await;
    let ev = w.next().await.expect("DELETED");
    assert_eq!(
        (&ev["type"], &ev["object"]["kind"]),
        (&json!("DELETED"), &json!("PartialObjectMetadata"))
    );

    // as a list: 200, then the stream ends without an event once there is one to send
    req(&env, "POST", &base, Some(&lease("b"))).await;
    let mut w = Watch::open_accept(
        &env,
        &format!("{base}?watch=1&resourceVersion=0&timeoutSeconds=5"),
        POML,
    )
    .await;
    assert_eq!(w.code, 200);
    let started = std::time::Instant::now();
    assert_eq!(w.next_raw().await, None);
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
    env.finish().await;
}

/// A custom resource's metadata views: the same shapes, upstream's unstructured types in the
/// 406s, and a list with no items.
#[tokio::test]
async fn metadata_views_of_a_custom_resource() {
    let env = Server::start("metacr").await;
    let group = env.group("w");
    let ns = env.ns("m").await;
    install(&env, &namespaced_widgets(&group)).await;
    let base = format!("/apis/{group}/v1/namespaces/{ns}/widgets");
    // a real server answers 429 while the new resource's storage initializes
    wait_for(&env, &base, |_| true).await;
    let (_, _, l) = get(&env, &base, POML).await;
    assert_eq!(
        (&l["kind"], &l["items"]),
        (&json!("PartialObjectMetadataList"), &Value::Null),
        "{l}"
    );
    assert!(l["metadata"].get("continue").is_none());
    let full = req(
        &env,
        "POST",
        &base,
        Some(&widget(&group, "w1", json!({"color": "red"}))),
    )
    .await
    .json();
    let (code, _, v) = get(&env, &format!("{base}/w1"), POM).await;
    assert_eq!(
        (code, v),
        (
            200,
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]})
        )
    );
    let (code, _, v) = get(&env, &base, POM).await;
    assert_eq!(
        (code, message(&v)),
        (
            406,
            "you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)"
        )
    );
    // an unstructured object passes upstream's list check and fails listing its items
    let (code, _, v) = get(&env, &format!("{base}/w1"), POML).await;
    assert_eq!(
        (code, message(&v), v.get("reason")),
        (500, "content is not a list", None)
    );
    // custom resources have no protobuf form of their own; the metadata views do
    // (the 406 itself is protobuf on kube-apiserver, JSON on kcm-testenv: it writes no protobuf)
    let r = request_full(
        &env,
        "GET",
        &base,
        "application/json",
        "application/vnd.kubernetes.protobuf",
        b"",
    )
    .await;
    assert_eq!(r.code, 406);
    assert!(String::from_utf8_lossy(&r.body).contains(
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    ));
    env.finish().await;
}
