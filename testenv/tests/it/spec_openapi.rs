//! OpenAPI v2 and v3 as kube-apiserver v1.37.2 publishes them (k8s.io/kube-openapi's
//! handler and handler3; the custom resources' documents of
//! staging/src/k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder/builder.go), over
//! real HTTP. kcm-testenv serves the built-in kinds' documents from k8s.io/kubernetes@v1.37.2 in
//! the Go module cache: without it these checks are skipped with a message. On a real
//! kube-apiserver with `KCM_SPEC_SERVER` (testenv/README.md).

use crate::common::crd::{install, namespaced_widgets};
use crate::common::server::Server;
use crate::common::{Resp, request_full, request_with};
use serde_json::{Value, json};

async fn get(env: &Server, path: &str, accept: &str) -> Resp {
    request_full(env, "GET", path, "application/json", accept, b"").await
}

fn module_present() -> bool {
    let home = std::env::var("HOME").unwrap_or_default();
    let mut roots: Vec<String> = ["GOMODCACHE"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .collect();
    roots.extend(std::env::var("GOPATH").ok().map(|p| format!("{p}/pkg/mod")));
    roots.push(format!("{home}/go/pkg/mod"));
    roots.iter().any(|r| {
        std::path::Path::new(r)
            .join("k8s.io/kubernetes@v1.37.2/api/openapi-spec/swagger.json")
            .is_file()
    })
}

fn hash_of(url: &str) -> &str {
    url.split("?hash=").nth(1).unwrap_or("")
}

#[tokio::test]
async fn openapi_v3_documents() {
    if !module_present() {
        eprintln!("[openapi] skipped: k8s.io/kubernetes@v1.37.2 is not in the Go module cache");
        return;
    }
    let env = Server::start("openapi3").await;
    let group = env.group("w");
    install(&env, &namespaced_widgets(&group)).await;

    // kube-apiserver publishes a new CRD's document a moment after it is established
    let crd_key = format!("apis/{group}/v1");
    let mut index = Value::Null;
    for _ in 0..100 {
        let r = get(&env, "/openapi/v3", "application/json").await;
        assert_eq!(
            (r.code, r.header("content-type")),
            (200, Some("text/plain; charset=utf-8"))
        );
        index = r.json();
        if index["paths"].get(&crd_key).is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for key in [
        "api",
        "api/v1",
        "apis",
        "apis/apps",
        "apis/apps/v1",
        "version",
        &format!("apis/{group}/v1"),
    ] {
        let url = index["paths"][key]["serverRelativeURL"]
            .as_str()
            .unwrap_or_else(|| panic!("{key} in {index}"));
        assert_eq!(url, format!("/openapi/v3/{key}?hash={}", hash_of(url)));
        assert_eq!(hash_of(url).len(), 128);
    }
    // a custom resources' group has no group document
    assert!(index["paths"].get(format!("apis/{group}")).is_none());

    let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .expect("url")
        .to_string();
    let r = get(&env, &url, "application/json").await;
    assert_eq!(r.code, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.header("etag").map(str::to_string),
        Some(format!("\"{}\"", hash_of(&url)))
    );
    assert_eq!(r.header("cache-control"), Some("public, immutable"));
    assert!(r.header("expires").is_some_and(|e| e.ends_with(" UTC")));
    assert!(!String::from_utf8_lossy(&r.body).contains("cbor"));
    let doc = r.json();
    assert_eq!(
        (&doc["openapi"], &doc["info"]),
        (
            &json!("3.0.0"),
            &json!({"title": "Kubernetes", "version": "1.37"})
        )
    );
    let d = &doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        d["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(patch["operationId"], "patchAppsV1NamespacedDeployment");
    assert!(
        patch["parameters"]
            .as_array()
            .is_some_and(|a| a.iter().any(|p| p["name"] == "fieldValidation"))
    );
    // no hash: not cacheable; another hash: redirected to the current one; the same ETag: 304
    let r = get(&env, "/openapi/v3/apis/apps/v1", "application/json").await;
    assert_eq!(
        (r.code, r.header("cache-control")),
        (200, Some("no-cache, private"))
    );
    let r = get(
        &env,
        "/openapi/v3/apis/apps/v1?hash=ABC",
        "application/json",
    )
    .await;
    assert_eq!((r.code, r.header("location")), (301, Some(url.as_str())));
    let etag = format!("\"{}\"", hash_of(&url));
    let r = request_with(
        &env,
        "GET",
        &url,
        "application/json",
        "application/json",
        &[("If-None-Match", &etag)],
        b"",
    )
    .await;
    assert_eq!((r.code, r.body.len()), (304, 0));
    let r = get(
        &env,
        "/openapi/v3/apis/nope.example.com/v1",
        "application/json",
    )
    .await;
    assert_eq!((r.code, r.body.len()), (404, 0));
    let r = get(&env, &url, "text/html").await;
    assert_eq!(
        (r.code, r.body.len(), r.header("vary")),
        (406, 0, Some("Accept"))
    );

    // the custom resource's document
    let url = index["paths"][format!("apis/{group}/v1")]["serverRelativeURL"]
        .as_str()
        .expect("crd url")
        .to_string();
    let doc = get(&env, &url, "application/json").await.json();
    assert_eq!(
        doc["info"],
        json!({"title": "Kubernetes CRD Swagger", "version": "v0.1.0"})
    );
    let reversed: Vec<&str> = group.split('.').rev().collect();
    let model = format!("{}.v1.Widget", reversed.join("."));
    let schemas = &doc["components"]["schemas"];
    let w = &schemas[&model];
    assert_eq!(
        w["x-kubernetes-group-version-kind"],
        json!([{"group": group, "kind": "Widget", "version": "v1"}])
    );
    assert_eq!(
        w["properties"]["metadata"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}])
    );
    assert_eq!(w["properties"]["kind"]["type"], "string");
    assert_eq!(
        w["properties"]["spec"]["properties"]["replicas"],
        json!({"type": "integer", "minimum": 0, "maximum": 10, "default": 1})
    );
    let list = &schemas[&format!("{model}List")];
    assert_eq!(list["required"], json!(["items"]));
    assert_eq!(
        list["properties"]["items"]["items"]["$ref"],
        format!("#/components/schemas/{model}")
    );
    for meta in [
        "ObjectMeta",
        "ListMeta",
        "Status",
        "Patch",
        "DeleteOptions",
        "ManagedFieldsEntry",
        "Time",
    ] {
        assert!(
            schemas
                .get(format!("io.k8s.apimachinery.pkg.apis.meta.v1.{meta}"))
                .is_some(),
            "{meta}"
        );
    }
    assert!(schemas.get("io.k8s.api.autoscaling.v1.Scale").is_some());
    let mut paths: Vec<&String> = doc["paths"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    paths.sort();
    let root = format!("/apis/{group}/v1");
    assert_eq!(
        paths,
        [
            format!("{root}/namespaces/{{namespace}}/widgets"),
            format!("{root}/namespaces/{{namespace}}/widgets/{{name}}"),
            format!("{root}/namespaces/{{namespace}}/widgets/{{name}}/scale"),
            format!("{root}/namespaces/{{namespace}}/widgets/{{name}}/status"),
            format!("{root}/widgets"),
        ]
        .iter()
        .collect::<Vec<_>>()
    );
    let item = &doc["paths"][format!("{root}/namespaces/{{namespace}}/widgets/{{name}}")];
    let names: Vec<&str> = item["patch"]["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["dryRun", "fieldManager", "fieldValidation", "force"]
    );
    assert_eq!(item["patch"]["x-kubernetes-action"], "patch");
    assert_eq!(
        item["get"]["x-kubernetes-group-version-kind"],
        json!({"group": group, "version": "v1", "kind": "Widget"})
    );
    env.finish().await;
}

#[tokio::test]
async fn openapi_v2_document() {
    if !module_present() {
        eprintln!("[openapi] skipped: k8s.io/kubernetes@v1.37.2 is not in the Go module cache");
        return;
    }
    let env = Server::start("openapi2").await;
    let group = env.group("w");
    install(&env, &namespaced_widgets(&group)).await;
    let reversed: Vec<&str> = group.split('.').rev().collect();
    let model = format!("{}.v1.Widget", reversed.join("."));
    // kube-apiserver merges a new CRD's definitions a moment after it is established
    let mut r = get(&env, "/openapi/v2", "application/json").await;
    for _ in 0..100 {
        if r.json()["definitions"].get(&model).is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        r = get(&env, "/openapi/v2", "application/json").await;
    }
    assert_eq!(
        (r.code, r.header("content-type")),
        (200, Some("application/json"))
    );
    let etag = r.header("etag").expect("etag").to_string();
    assert_eq!(etag.len(), 130);
    assert!(!String::from_utf8_lossy(&r.body).contains("cbor"));
    let doc = r.json();
    assert_eq!(
        (&doc["swagger"], &doc["info"]),
        (
            &json!("2.0"),
            &json!({"title": "Kubernetes", "version": "1.37"})
        )
    );
    assert!(
        doc["definitions"]
            .get("io.k8s.api.apps.v1.Deployment")
            .is_some()
    );
    assert!(
        doc["paths"]
            .get("/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
            .is_some()
    );
    let w = &doc["definitions"][&model];
    assert_eq!(
        w["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    // v2 has no defaults and no type for preserved fields
    assert_eq!(
        w["properties"]["spec"]["properties"]["replicas"],
        json!({"type": "integer", "minimum": 0, "maximum": 10})
    );
    assert_eq!(
        w["properties"]["spec"]["properties"]["extra"],
        json!({"x-kubernetes-preserve-unknown-fields": true})
    );
    assert!(
        doc["paths"]
            .get(format!(
                "/apis/{group}/v1/namespaces/{{namespace}}/widgets/{{name}}"
            ))
            .is_some()
    );
    // every reference resolves
    let text = serde_json::to_string(&doc).expect("json");
    for part in text.split("\"$ref\":\"#/definitions/").skip(1) {
        let name = part.split('"').next().unwrap_or("");
        assert!(doc["definitions"].get(name).is_some(), "{name}");
    }
    // a document that stays the same answers 304 (kube-apiserver may re-merge a new CRD once
    // more: take the ETag again until it holds)
    let mut etag = etag;
    let mut code = 0;
    for _ in 0..50 {
        let r = request_with(
            &env,
            "GET",
            "/openapi/v2",
            "application/json",
            "application/json",
            &[("If-None-Match", &etag)],
            b"",
        )
        .await;
        code = r.code;
        if code == 304 {
            break;
        }
        etag = r.header("etag").expect("etag").to_string();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(code, 304);
    let r = get(&env, "/openapi/v2", "text/html").await;
    assert_eq!((r.code, r.body.len()), (406, 0));
    // protobuf: kube-apiserver writes the document, kcm-testenv an empty one (it writes JSON
    // only; kubectl then leaves a List's validation to the server)
    let r = get(
        &env,
        "/openapi/v2",
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    )
    .await;
    assert_eq!(r.code, 200);
    assert_eq!(
        r.header("content-type"),
        Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    );
    assert_eq!(r.body.is_empty(), !env.is_real());
    env.finish().await;
}
