//! The generated documents: their shape, every reference resolved, and — where the Go module
//! cache holds upstream's documents — the same paths, operations and schemas (descriptions
//! aside) as upstream's cut to the served paths.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::super::{filter, upstream};
use super::*;

fn ops(doc: &Value) -> BTreeSet<(String, String, String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if method == "parameters" {
                continue;
            }
            out.insert((
                path.clone(),
                method.clone(),
                op["operationId"].as_str().unwrap_or("").to_string(),
                op["x-kubernetes-group-version-kind"].to_string(),
            ));
        }
    }
    out
}

/// Every `$ref` names a definition of the document.
fn assert_resolved(doc: &Value, table: &str, prefix: &str) {
    let mut refs = BTreeSet::new();
    filter::refs(doc, &mut refs);
    for r in refs {
        let name = r.strip_prefix(prefix).unwrap_or_else(|| panic!("{r}"));
        assert!(doc.pointer(&format!("{table}/{name}")).is_some(), "{r}");
    }
}

fn without_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, x)| !(k.as_str() == "description" && x.is_string()))
                .map(|(k, x)| (k.clone(), without_descriptions(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_descriptions).collect()),
        _ => v.clone(),
    }
}

#[test]
fn apps_v1_document() {
    let served = ServedResources::default();
    let doc = v3("apis/apps/v1", &served).expect("apps/v1");
    assert_eq!(doc["openapi"], "3.0.0");
    assert_eq!(doc["info"]["version"], INFO_VERSION);
    assert_resolved(&doc, "/components/schemas", REF_PREFIX);
    let item = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
    assert_eq!(
        item["patch"]["operationId"],
        "patchAppsV1NamespacedDeployment"
    );
    assert_eq!(item["patch"]["tags"], json!(["apps_v1"]));
    assert_eq!(
        item["patch"]["x-kubernetes-group-version-kind"],
        json!({"group": "apps", "version": "v1", "kind": "Deployment"})
    );
    let scale = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
    assert_eq!(
        scale["put"]["x-kubernetes-group-version-kind"],
        json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
    );
    assert_eq!(
        doc["paths"]["/apis/apps/v1/"]["get"]["operationId"],
        "getAppsV1APIResources"
    );
    // the schemas are the generated definitions themselves
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        Some(&schemas["io.k8s.api.apps.v1.Deployment"]),
        catalog().raw("io.k8s.api.apps.v1.Deployment")
    );
    assert!(schemas.get("io.k8s.api.autoscaling.v1.Scale").is_some());
    assert!(schemas.get("io.k8s.api.core.v1.ConfigMap").is_none());
}

#[test]
fn core_subresources_and_discovery_documents() {
    let served = ServedResources::default();
    let core = v3("api/v1", &served).expect("api/v1");
    let all = ops(&core);
    let has = |path: &str, method: &str, id: &str| {
        all.iter()
            .any(|(p, m, i, _)| p == path && m == method && i == id)
    };
    assert!(has(
        "/api/v1/namespaces/{namespace}/pods/{name}/eviction",
        "post",
        "createCoreV1NamespacedPodEviction"
    ));
    assert!(has(
        "/api/v1/namespaces/{name}/finalize",
        "put",
        "replaceCoreV1NamespaceFinalize"
    ));
    assert!(has(
        "/api/v1/namespaces/{namespace}/configmaps",
        "get",
        "listCoreV1NamespacedConfigMap"
    ));
    assert!(has(
        "/api/v1/configmaps",
        "get",
        "listCoreV1ConfigMapForAllNamespaces"
    ));
    assert!(core["components"]["schemas"]["io.k8s.api.policy.v1.Eviction"].is_object());
    for (key, path, id) in [
        ("api", "/api/", "getCoreAPIVersions"),
        ("apis", "/apis/", "getAPIVersions"),
        ("version", "/version/", "getCodeVersion"),
        ("apis/apps", "/apis/apps/", "getAppsAPIGroup"),
        (
            "apis/apiregistration.k8s.io/v1",
            "/apis/apiregistration.k8s.io/v1/apiservices/{name}/status",
            "readApiregistrationV1APIServiceStatus",
        ),
    ] {
        let doc = v3(key, &served).unwrap_or_else(|| panic!("{key}"));
        let op = doc["paths"][path]
            .as_object()
            .and_then(|item| item.get("get"))
            .unwrap_or_else(|| panic!("{key}: {path}"));
        assert_eq!(op["operationId"], id, "{key}");
        assert_resolved(&doc, "/components/schemas", REF_PREFIX);
    }
    assert!(v3("apis/nope.example.com/v1", &served).is_none());
    assert!(v3("apis/nope.example.com", &served).is_none());
}

#[test]
fn every_built_in_key_has_a_document() {
    let served = ServedResources::default();
    for key in builtin_keys(&served) {
        let doc = v3(&key, &served).unwrap_or_else(|| panic!("{key}"));
        assert!(
            !doc["paths"].as_object().is_none_or(|p| p.is_empty()),
            "{key}"
        );
    }
}

#[test]
fn v2_form() {
    assert_eq!(
        to_v2(&json!({
            "properties": {
                "metadata": {"allOf": [{"$ref": "#/components/schemas/M"}], "default": {}},
                "items": {"items": {"$ref": "#/components/schemas/I"}, "type": "array"},
                "default": {"type": "string"},
            },
            "type": "object",
        })),
        json!({
            "properties": {
                "metadata": {"$ref": "#/definitions/M"},
                "items": {"items": {"$ref": "#/definitions/I"}, "type": "array"},
                "default": {"type": "string"},
            },
            "type": "object",
        })
    );
    assert_eq!(
        to_v2(&json!({"oneOf": [{"type": "string"}, {"type": "number"}]})),
        json!({"type": "string"})
    );
    let served = ServedResources::default();
    let doc = v2(&served);
    assert_eq!(doc["swagger"], "2.0");
    assert_resolved(&doc, "/definitions", V2_PREFIX);
    let d = &doc["definitions"]["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        d["properties"]["metadata"],
        json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"})
    );
    let post = &doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"];
    assert_eq!(post["operationId"], "createCoreV1NamespacedConfigMap");
    assert_eq!(post["parameters"][0]["in"], "body");
}

/// Upstream's documents, where the module cache has them, cut to the served paths as
/// kcm-testenv serves them: the generated ones have the same paths and operations (ids and
/// group-version-kinds), and schemas equal but for descriptions.
#[test]
fn agrees_with_upstreams_documents() {
    if upstream::spec_dir().is_none() {
        eprintln!("k8s.io/kubernetes@v1.37.2 is not in the Go module cache; skipping");
        return;
    }
    let served = ServedResources::default();
    for key in builtin_keys(&served) {
        let ours = v3(&key, &served).unwrap_or_else(|| panic!("{key}"));
        let module = upstream::v3(&key).unwrap_or_else(|| panic!("module {key}"));
        let theirs = filter::v3(&module, &served).unwrap_or_else(|| panic!("cut {key}"));
        // the connect subresources (exec, attach, port-forward, proxy) are left out
        let (ours_ops, mut theirs_ops) = (ops(&ours), ops(&theirs));
        theirs_ops.retain(|(_, _, id, _)| !id.starts_with("connect"));
        let only_ours: Vec<_> = ours_ops.difference(&theirs_ops).collect();
        let only_theirs: Vec<_> = theirs_ops.difference(&ours_ops).collect();
        assert!(
            only_ours.is_empty() && only_theirs.is_empty(),
            "{key}: only generated {only_ours:#?}\nonly upstream {only_theirs:#?}"
        );
        let names = |d: &Value| -> BTreeSet<String> {
            d["components"]["schemas"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let (a, b) = (names(&ours), names(&theirs));
        assert!(
            a == b,
            "{key}: only generated {:?}, only upstream {:?}",
            a.difference(&b).collect::<Vec<_>>(),
            b.difference(&a).collect::<Vec<_>>()
        );
        for (name, schema) in ours["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
        {
            assert_eq!(
                schema,
                &without_descriptions(&theirs["components"]["schemas"][name]),
                "{key}: {name}"
            );
        }
    }
    // the swagger document's definitions, as upstream's swagger.json has them
    let ours = v2(&served);
    let swagger = upstream::swagger().expect("swagger.json");
    let theirs = filter::v2(&swagger, &served);
    for (name, d) in ours["definitions"].as_object().into_iter().flatten() {
        let mut want = without_descriptions(&theirs["definitions"][name]);
        let mut got = d.clone();
        // the meta types list every group-version: upstream's v2 and v3 registries differ
        if name.starts_with("io.k8s.apimachinery.pkg.apis.meta.v1.") {
            want.as_object_mut()
                .map(|m| m.remove("x-kubernetes-group-version-kind"));
            got.as_object_mut()
                .map(|m| m.remove("x-kubernetes-group-version-kind"));
        }
        assert_eq!(got, want, "{name}");
    }
}
