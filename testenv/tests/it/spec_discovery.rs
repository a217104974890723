//! Spec checks 1–6 (README.md, "Agreement with kube-apiserver v1.37.2"): URL layout and
//! discovery, over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

use crate::common::crd::{CRDS, install, two_versions};
use crate::common::server::Server;
use crate::common::spec::AGG_ACCEPT;
use crate::common::{Resp, req, request_full, request_with};
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

    // legacy discovery; the aggregated form is checked by `aggregated_discovery_*` below
    let r = req(&env, "GET", "/api", None).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["kind"], "APIVersions");
    assert_eq!(r.json()["versions"], json!(["v1"]));
    assert_eq!(r.header("cache-control"), Some("no-cache, private"));

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
    // built-in resources and subresources by name, as the installer lists them
    let names: Vec<&str> = apps["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
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
    // kcm-testenv writes an empty document in protobuf (spec_openapi.rs has the documents)
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

const AGG_V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const AGG_V2BETA1: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

async fn get_accept(env: &Server, path: &str, accept: &str) -> Resp {
    request_full(env, "GET", path, "application/json", accept, b"").await
}

fn find<'a>(items: &'a Value, key: &str, name: &str) -> &'a Value {
    items
        .as_array()
        .and_then(|a| a.iter().find(|e| e[key] == name))
        .unwrap_or_else(|| panic!("{name} in {items}"))
}

/// `/api` and `/apis` as `APIGroupDiscoveryList`s (staging/src/k8s.io/apiserver/pkg/endpoints/
/// discovery/aggregated/handler.go): the headers, the core group, apps/v1's deployments with
/// their subresources, and the 304 for a matching `If-None-Match`.
#[tokio::test]
async fn aggregated_discovery_documents() {
    let env = Server::start("aggdisc").await;
    let r = get_accept(&env, "/api", AGG_ACCEPT).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.header("content-type"), Some(AGG_V2));
    assert_eq!(r.header("vary"), Some("Accept"));
    assert_eq!(r.header("cache-control"), Some("public"));
    let etag = r.header("etag").expect("etag").to_string();
    assert!(
        etag.len() == 130
            && etag.starts_with('"')
            && etag[1..129]
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
        "{etag}"
    );
    let l = r.json();
    assert_eq!(
        (&l["kind"], &l["apiVersion"], &l["metadata"]),
        (
            &json!("APIGroupDiscoveryList"),
            &json!("apidiscovery.k8s.io/v2"),
            &json!({})
        )
    );
    let items = l["items"].as_array().expect("items");
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["metadata"], json!({}));
    let v1 = &items[0]["versions"][0];
    assert_eq!(
        (&v1["version"], &v1["freshness"]),
        (&json!("v1"), &json!("Current"))
    );
    let names: Vec<&str> = v1["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["resource"].as_str())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    let pods = find(&v1["resources"], "resource", "pods");
    assert_eq!(
        (
            &pods["responseKind"],
            &pods["scope"],
            &pods["singularResource"],
            &pods["shortNames"],
            &pods["categories"]
        ),
        (
            &json!({"group": "", "version": "", "kind": "Pod"}),
            &json!("Namespaced"),
            &json!("pod"),
            &json!(["po"]),
            &json!(["all"])
        )
    );
    let status = find(&pods["subresources"], "subresource", "status");
    assert_eq!(
        status,
        &json!({"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Pod"}, "verbs": ["get", "patch", "update"]})
    );
    let ns = find(&v1["resources"], "resource", "namespaces");
    assert_eq!(
        (&ns["scope"], &ns["verbs"]),
        (
            &json!("Cluster"),
            &json!([
                "create", "delete", "get", "list", "patch", "update", "watch"
            ])
        )
    );

    // the same document again: 304, no body, the same ETag
    let r = request_with(
        &env,
        "GET",
        "/api",
        "application/json",
        AGG_ACCEPT,
        &[("If-None-Match", &etag)],
        b"",
    )
    .await;
    assert_eq!((r.code, r.body.len()), (304, 0));
    assert_eq!(r.header("etag"), Some(etag.as_str()));

    let r = get_accept(&env, "/apis", AGG_V2).await;
    assert_eq!(r.header("content-type"), Some(AGG_V2));
    let l = r.json();
    // every built-in group, in kube-apiserver's order (other checks' CRD groups may follow)
    let ours: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
    let names: Vec<&str> = l["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["metadata"]["name"].as_str())
        .filter(|n| !n.ends_with(".checks.kcm-rs.io"))
        .collect();
    assert_eq!(names, ours);
    let apps = items_group(&l, "apps");
    assert_eq!(apps["metadata"], json!({"name": "apps"}));
    let d = find(&apps["versions"][0]["resources"], "resource", "deployments");
    assert_eq!(
        d,
        &json!({
            "resource": "deployments",
            "responseKind": {"group": "", "version": "", "kind": "Deployment"},
            "scope": "Namespaced",
            "singularResource": "deployment",
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
            "shortNames": ["deploy"],
            "categories": ["all"],
            "subresources": [
                {"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]},
                {"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Deployment"}, "verbs": ["get", "patch", "update"]},
            ],
        })
    );
    let crds = find(
        &items_group(&l, "apiextensions.k8s.io")["versions"][0]["resources"],
        "resource",
        "customresourcedefinitions",
    );
    assert_eq!(crds["shortNames"], json!(["crd", "crds"]));
    assert_eq!(crds["categories"], json!(["api-extensions"]));
    env.finish().await;
}

fn items_group<'a>(l: &'a Value, name: &str) -> &'a Value {
    l["items"]
        .as_array()
        .and_then(|a| a.iter().find(|g| g["metadata"]["name"] == name))
        .unwrap_or_else(|| panic!("group {name}"))
}

/// Which document an `Accept` header gets from `/api` and `/apis`: the aggregated one when a
/// clause names v2 (v2beta1 is removed in v1.37), else legacy discovery, else a 406 — from
/// go-restful for `/api` (`406: Not Acceptable…`), from apiserver's negotiation for `/apis`
/// and for a clause naming a conversion legacy discovery does not know.
#[tokio::test]
async fn aggregated_discovery_negotiation() {
    let env = Server::start("aggneg").await;
    let kind = |r: &Resp| r.json()["kind"].as_str().unwrap_or("").to_string();
    for path in ["/api", "/apis"] {
        let legacy = if path == "/api" {
            "APIVersions"
        } else {
            "APIGroupList"
        };
        for (accept, want) in [
            (AGG_ACCEPT, "APIGroupDiscoveryList"),
            (AGG_V2, "APIGroupDiscoveryList"),
            (
                &format!("application/json, {AGG_V2}") as &str,
                "APIGroupDiscoveryList",
            ),
            (
                &format!("{AGG_V2};profile=nopeer") as &str,
                "APIGroupDiscoveryList",
            ),
            (&format!("{AGG_V2BETA1},application/json") as &str, legacy),
            ("application/json", legacy),
            ("*/*", legacy),
            ("", legacy),
        ] {
            let r = get_accept(&env, path, accept).await;
            assert_eq!(
                (r.code, kind(&r)),
                (200, want.to_string()),
                "{path} {accept:?}"
            );
        }
        let r = get_accept(&env, path, AGG_V2BETA1).await;
        assert_eq!(
            (
                r.code,
                r.json()["message"].clone(),
                r.json().get("details").cloned()
            ),
            (
                406,
                json!(
                    "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
                ),
                None
            ),
            "{path}"
        );
        let r = get_accept(&env, path, "application/yaml").await;
        assert_eq!(
            (r.code, r.header("content-type")),
            (200, Some("application/yaml")),
            "{path}"
        );
        let y: Value = serde_yaml::from_slice(&r.body).expect("yaml");
        assert_eq!(y["kind"], legacy);
    }
    let r = get_accept(&env, "/api", "text/html").await;
    assert_eq!(
        (
            r.code,
            r.json()["message"].clone(),
            r.json()["details"].clone()
        ),
        (
            406,
            json!(
                "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
            ),
            json!({})
        )
    );
    let r = get_accept(&env, "/apis", "text/html").await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            406,
            json!(
                "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
            )
        )
    );
    // the 406 itself is written in the media type asked for
    let r = get_accept(&env, "/version", "application/yaml").await;
    let status: Value = serde_yaml::from_slice(&r.body).expect("yaml Status");
    assert_eq!(
        (r.code, r.header("content-type"), status["message"].clone()),
        (
            406,
            Some("application/yaml"),
            json!("406: Not Acceptable\n\nAvailable representations: application/json")
        )
    );
    env.finish().await;
}

/// A CRD's group in aggregated discovery (staging/src/k8s.io/apiextensions-apiserver/pkg/
/// apiserver/customresource_discovery_controller.go): after the built-in groups, versions by
/// priority, `responseKind` with the group and version, the CRD handler's verb order, status
/// before scale; gone once the CRD is.
#[tokio::test]
async fn aggregated_discovery_custom_resources() {
    let env = Server::start("aggcrd").await;
    let group = env.group("w");
    let crd = two_versions(&group);
    install(&env, &crd).await;
    let l = get_accept(&env, "/apis", AGG_V2).await.json();
    let names: Vec<&str> = l["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["metadata"]["name"].as_str())
        .collect();
    let at = names
        .iter()
        .position(|n| *n == group)
        .expect("the CRD's group");
    assert!(
        at > names
            .iter()
            .position(|n| *n == "coordination.k8s.io")
            .expect("coordination")
    );
    let g = items_group(&l, &group);
    let versions: Vec<&str> = g["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["version"].as_str())
        .collect();
    assert_eq!(versions, ["v1", "v1beta1"]);
    let w = &g["versions"][0]["resources"][0];
    assert_eq!(
        w,
        &json!({
            "resource": "widgets",
            "responseKind": {"group": group, "version": "v1", "kind": "Widget"},
            "scope": "Namespaced",
            "singularResource": "widget",
            "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
            "shortNames": ["wdg"],
            "categories": ["kcm-checks"],
            "subresources": [
                {"subresource": "status", "responseKind": {"group": group, "version": "v1", "kind": "Widget"}, "verbs": ["get", "patch", "update"]},
                {"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]},
            ],
        })
    );
    assert_eq!(
        g["versions"][1]["resources"][0]["responseKind"],
        json!({"group": group, "version": "v1beta1", "kind": "Widget"})
    );
    assert_eq!(g["versions"][1]["freshness"], "Current");

    let name = format!("widgets.{group}");
    let r = req(&env, "DELETE", &format!("{CRDS}/{name}"), None).await;
    assert_eq!(r.code, 200);
    let mut gone = false;
    for _ in 0..300 {
        let l = get_accept(&env, "/apis", AGG_V2).await.json();
        if l["items"]
            .as_array()
            .is_some_and(|a| a.iter().all(|g| g["metadata"]["name"] != group.as_str()))
        {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(gone, "{group} still in aggregated discovery");
    env.finish().await;
}
