//! Spec §12 checks 1–6: URL layout and discovery (apiserver.md §1), over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

mod common;

use common::server::Server;
use common::spec::AGG_ACCEPT;
use common::{req, request_full};
use serde_json::{Value, json};

#[tokio::test]
async fn checks_01_06_discovery() {
    let env = Server::start("discovery").await;
    let v = req(&env, "GET", "/version", None).await.json();
    for k in [
        "major",
        "minor",
        "gitVersion",
        "gitCommit",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    ] {
        assert!(v[k].as_str().is_some_and(|s| !s.is_empty()), "{k}");
    }
    let r = request_full(&env, "GET", "/api", "application/json", AGG_ACCEPT, b"").await;
    assert_eq!(r.code, 200);
    assert!(
        !r.header("content-type")
            .unwrap_or("")
            .contains("as=APIGroupDiscoveryList")
    );
    assert_eq!(r.json()["kind"], "APIVersions");
    assert_eq!(r.json()["versions"], json!(["v1"]));
    let apis = req(&env, "GET", "/apis", None).await.json();
    let names: Vec<&str> = apis["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(names, vec!["apps", "coordination.k8s.io", "events.k8s.io"]);
    assert!(
        apis["groups"]
            .as_array()
            .expect("g")
            .iter()
            .all(|g| g["preferredVersion"]["version"] == "v1")
    );
    let apps = req(&env, "GET", "/apis/apps/v1", None).await.json();
    let find = |l: &Value, n: &str| {
        l["resources"]
            .as_array()
            .and_then(|a| a.iter().find(|e| e["name"] == n).cloned())
            .expect(n)
    };
    let d = find(&apps, "deployments");
    assert_eq!(
        (
            d["namespaced"].clone(),
            d["kind"].clone(),
            d["shortNames"].clone(),
            d["categories"].clone()
        ),
        (
            json!(true),
            json!("Deployment"),
            json!(["deploy"]),
            json!(["all"])
        )
    );
    assert_eq!(d["verbs"].as_array().map(Vec::len), Some(8));
    let s = find(&apps, "deployments/scale");
    assert_eq!(
        (
            s["group"].clone(),
            s["version"].clone(),
            s["kind"].clone(),
            s["verbs"].clone()
        ),
        (
            json!("autoscaling"),
            json!("v1"),
            json!("Scale"),
            json!(["get", "patch", "update"])
        )
    );
    assert_eq!(find(&apps, "replicasets")["shortNames"], json!(["rs"]));
    let core = req(&env, "GET", "/api/v1", None).await.json();
    assert_eq!(find(&core, "pods")["shortNames"], json!(["po"]));
    assert_eq!(find(&core, "pods")["categories"], json!(["all"]));
    find(&core, "pods/status");
    assert_eq!(find(&core, "namespaces")["namespaced"], json!(false));
    assert_eq!(find(&core, "events")["shortNames"], json!(["ev"]));
    let r = request_full(
        &env,
        "GET",
        "/openapi/v2",
        "application/json",
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        b"",
    )
    .await;
    assert_eq!(r.code, 200);
    let r = req(&env, "GET", "/nope", None).await;
    assert_eq!(
        (r.code, r.json()["reason"].clone()),
        (404, json!("NotFound"))
    );
    assert_eq!(req(&env, "GET", "/healthz", None).await.code, 200);
}
