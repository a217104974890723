//! CRD fixtures of the custom resource checks (`spec_crd_*.rs`): a Widget CRD in a group of
//! the check's own, installed and waited for until Established and in discovery.

use std::time::Duration;

use serde_json::{Value, json};

use super::req;
use super::server::Server;

pub const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The Widget schema: spec (replicas with a default and bounds, a color enum, a name
/// pattern, free-form `extra`), status (replicas, selector, conditions).
pub fn widget_schema() -> Value {
    json!({"type": "object", "properties": {
        "spec": {"type": "object", "required": ["color"], "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
            "size": {"type": "string", "default": "M"},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        }},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "selector": {"type": "string"},
            "phase": {"type": "string"},
        }},
    }})
}

/// A Widget CRD in `group` (`Namespaced` or `Cluster`), one version `v1` with the status and
/// scale subresources and a printer column.
pub fn widget_crd(group: &str, scope: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wdg"], "categories": ["kcm-checks"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": widget_schema()},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [{"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                                             {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}],
            }],
        },
    })
}

/// Poll `path` (up to 30 s) until `done` holds for its 200 body; the last body.
pub async fn wait_for(srv: &Server, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..300 {
        let r = req(srv, "GET", path, None).await;
        if r.code == 200 {
            last = r.json();
            if done(&last) {
                return last;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{path} never got there: {last}");
}

/// Whether a CRD condition is True.
pub fn condition(crd: &Value, kind: &str) -> bool {
    crd["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// Create a CRD (tracked for deletion), wait until it is Established and its first served
/// version is in discovery; the created object.
pub async fn install(srv: &Server, crd: &Value) -> Value {
    let name = crd["metadata"]["name"].as_str().expect("name").to_string();
    srv.track_crd(&name);
    let r = req(srv, "POST", CRDS, Some(crd)).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    wait_for(srv, &format!("{CRDS}/{name}"), |c| {
        condition(c, "Established")
    })
    .await;
    let group = crd["spec"]["group"].as_str().expect("group");
    let version = crd["spec"]["versions"][0]["name"]
        .as_str()
        .expect("version");
    let plural = crd["spec"]["names"]["plural"]
        .as_str()
        .expect("plural")
        .to_string();
    wait_for(srv, &format!("/apis/{group}/{version}"), |l| {
        l["resources"]
            .as_array()
            .is_some_and(|a| a.iter().any(|e| e["name"] == plural.as_str()))
    })
    .await;
    r.json()
}

/// The usual start of a check: a group of its own with the CRD `make(group)` installed, and a
/// namespace; `(group, namespace, the namespace's widgets path)`.
pub async fn widgets_in_namespace(
    env: &Server,
    make: fn(&str) -> Value,
) -> (String, String, String) {
    let group = env.group("w");
    let ns = env.ns("n").await;
    install(env, &make(&group)).await;
    let base = format!("/apis/{group}/v1/namespaces/{ns}/widgets");
    (group, ns, base)
}

/// The Widget resource for kube's dynamic API (`Api<DynamicObject>`).
pub fn widgets(group: &str) -> kube::api::ApiResource {
    kube::api::ApiResource {
        group: group.to_string(),
        version: "v1".into(),
        api_version: format!("{group}/v1"),
        kind: "Widget".into(),
        plural: "widgets".into(),
    }
}

/// The Widget CRD, namespaced.
pub fn namespaced_widgets(group: &str) -> Value {
    widget_crd(group, "Namespaced")
}

/// A Widget object.
pub fn widget(group: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{group}/v1"), "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

/// The Widget CRD with a second, deprecated version `v1beta1` that keeps unknown fields.
pub fn two_versions(group: &str) -> Value {
    let mut crd = widget_crd(group, "Namespaced");
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(json!({"name": "v1beta1", "served": true, "storage": false, "deprecated": true,
                     "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}));
    crd
}
