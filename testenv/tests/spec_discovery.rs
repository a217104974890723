//! Spec §12 checks 1–6: URL layout and discovery (apiserver.md §1), over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

mod common;

use common::server::Server;
use common::spec::AGG_ACCEPT;
use common::{req, request_full};
use kcm_testenv::registry::GROUPS;
use serde_json::{Value, json};

#[tokio::test]
async fn checks_01_06_discovery() {
    let env = Server::start("discovery").await;
    let v = req(&env, "GET", "/version", None).await.json();
    for k in [
        "major",
        "minor",
        "emulationMajor",
        "emulationMinor",
        "minCompatibilityMajor",
        "minCompatibilityMinor",
        "gitVersion",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    ] {
        assert!(v[k].as_str().is_some_and(|s| !s.is_empty()), "{k}");
    }
    // empty in a kube-apiserver built from the Go modules without ldflags, as here
    assert!(v["gitCommit"].is_string());
    assert_eq!(
        (v["gitVersion"].clone(), v["minor"].clone()),
        (json!("v1.37.2"), json!("37"))
    );

    // legacy discovery, and the aggregated form when asked for: kube-apiserver serves it,
    // testenv does not (a client asking for it accepts plain JSON and falls back)
    let r = req(&env, "GET", "/api", None).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["kind"], "APIVersions");
    assert_eq!(r.json()["versions"], json!(["v1"]));
    let r = request_full(&env, "GET", "/api", "application/json", AGG_ACCEPT, b"").await;
    assert_eq!(r.code, 200);
    let aggregated = r
        .header("content-type")
        .unwrap_or("")
        .contains("as=APIGroupDiscoveryList");
    assert_eq!(aggregated, env.is_real());
    if aggregated {
        let l = r.json();
        assert_eq!(
            (
                l["kind"].clone(),
                l["items"][0]["versions"][0]["version"].clone()
            ),
            (json!("APIGroupDiscoveryList"), json!("v1"))
        );
    } else {
        assert_eq!(r.json()["kind"], "APIVersions");
    }

    // every built-in group of the generated table, in kube-apiserver's order, each with its
    // versions, the preferred first (other checks' CRD groups may follow on a real server)
    let apis = req(&env, "GET", "/apis", None).await.json();
    let groups: Vec<&Value> = apis["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter(|g| {
            !g["name"]
                .as_str()
                .unwrap_or("")
                .ends_with(".checks.kcm-rs.io")
        })
        .collect();
    let names: Vec<&str> = groups.iter().filter_map(|g| g["name"].as_str()).collect();
    let ours: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
    assert_eq!(names, ours);
    for (g, ours) in groups.iter().zip(GROUPS) {
        let versions: Vec<&str> = g["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["version"].as_str())
            .collect();
        assert_eq!(versions, ours.versions, "{}", ours.name);
        assert_eq!(g["preferredVersion"]["version"], ours.preferred());
    }
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
    // no handler at all: Go's plain 404; under a served API prefix: a Status
    let r = req(&env, "GET", "/nope", None).await;
    assert_eq!(
        (r.code, r.header("content-type"), r.body.as_slice()),
        (
            404,
            Some("text/plain; charset=utf-8"),
            b"404 page not found\n".as_slice()
        )
    );
    for path in ["/api/v1/nopes", "/apis/apps/v1/nopes", "/apis/apps/v2"] {
        let r = req(&env, "GET", path, None).await;
        assert_eq!(
            (
                r.code,
                r.json()["reason"].clone(),
                r.json()["message"].clone()
            ),
            (
                404,
                json!("NotFound"),
                json!("the server could not find the requested resource")
            ),
            "{path}"
        );
    }
    assert_eq!(req(&env, "GET", "/healthz", None).await.code, 200);
}
