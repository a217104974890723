//! Custom resource checks C5–C6: custom objects (schema defaulting, pruning and validation,
//! versions, status and scale subresources, patches), over real HTTP. They run on an embedded TestEnv, or on a real kube-apiserver
//! with `KCM_SPEC_SERVER` (see testenv/README.md, "Custom resources").

use crate::common::crd::{namespaced_widgets, two_versions, widget, widgets_in_namespace};
use crate::common::server::Server;
use crate::common::{patch, req, request_full};
use serde_json::{Value, json};

fn causes(s: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = s["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let f = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (f("field"), f("reason"), f("message"))
        })
        .collect();
    out.sort();
    out
}

fn cause(field: &str, reason: &str, message: &str) -> (String, String, String) {
    (field.into(), reason.into(), message.into())
}

/// C5: create and read: defaults, pruning with a warning (or 400 when strict), the schema's
/// errors, the type a body must name, lists, another version's view with its warning.
#[tokio::test]
async fn c5_schema_defaulting_pruning_validation() {
    let env = Server::start("crd-c5").await;
    let (group, ns, base) = widgets_in_namespace(&env, two_versions).await;
    let mut a = widget(
        &group,
        "a",
        json!({"color": "red", "bogus": 1, "extra": {"free": {"deep": true}}}),
    );
    a["status"] = json!({"replicas": 3});
    let r = req(&env, "POST", &base, Some(&a)).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.header("warning"),
        Some("299 - \"unknown field \\\"spec.bogus\\\"\"")
    );
    let got = r.json();
    // defaults applied, unknown fields pruned (not under preserve-unknown-fields), no status
    assert_eq!(
        got["spec"],
        json!({"color": "red", "replicas": 1, "size": "M", "extra": {"free": {"deep": true}}})
    );
    assert_eq!(got.get("status"), None);
    assert_eq!(got["metadata"]["generation"], 1);
    let r = req(
        &env,
        "POST",
        &format!("{base}?fieldValidation=Strict"),
        Some(&widget(&group, "b", json!({"color": "red", "bogus": 1}))),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!(
                "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.bogus\""
            )
        )
    );
    let bad = widget(
        &group,
        "c",
        json!({"color": "pink", "replicas": "x", "name": "ABC", "tags": ["a", "a"]}),
    );
    let r = req(&env, "POST", &base, Some(&bad)).await;
    assert_eq!(r.code, 422);
    let s = r.json();
    assert_eq!(s["details"]["kind"], "Widget");
    assert_eq!(
        causes(&s),
        vec![
            cause(
                ".spec.replicas",
                "FieldValueInvalid",
                "Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected int64"
            ),
            cause(
                "spec.color",
                "FieldValueNotSupported",
                "Unsupported value: \"pink\": supported values: \"red\", \"green\", \"blue\""
            ),
            cause(
                "spec.name",
                "FieldValueInvalid",
                "Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"
            ),
            cause(
                "spec.replicas",
                "FieldValueTypeInvalid",
                "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
            ),
            cause(
                "spec.tags[1]",
                "FieldValueDuplicate",
                "Duplicate value: \"a\""
            ),
        ]
    );
    let r = req(
        &env,
        "POST",
        &base,
        Some(&widget(&group, "d", json!({"replicas": 11}))),
    )
    .await;
    assert_eq!(
        causes(&r.json()),
        vec![
            cause("spec.color", "FieldValueRequired", "Required value"),
            cause(
                "spec.replicas",
                "FieldValueInvalid",
                "Invalid value: 11: spec.replicas in body should be less than or equal to 10"
            ),
        ]
    );
    // an unstructured body must name its type; another kind is a validation error
    let r = req(
        &env,
        "POST",
        &base,
        Some(&json!({"kind": "Widget", "metadata": {"name": "e"}, "spec": {"color": "red"}})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!(format!(
                "the API version in the data () does not match the expected API version ({group}/v1)"
            ))
        )
    );
    let raw = format!("{{\"apiVersion\":\"{group}/v1\",\"metadata\":{{\"name\":\"f\"}}}}");
    let r = request_full(
        &env,
        "POST",
        &base,
        "application/json",
        "application/json",
        raw.as_bytes(),
    )
    .await;
    let want = format!(
        "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{raw}' ({} ...)",
        &raw[..30]
    );
    assert_eq!((r.code, r.json()["message"].clone()), (400, json!(want)));
    let mut gadget = widget(&group, "g", json!({"color": "red"}));
    gadget["kind"] = json!("Gadget");
    let r = req(&env, "POST", &base, Some(&gadget)).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(format!(
                "Gadget.{group} \"g\" is invalid: kind: Invalid value: \"Gadget\": must be Widget"
            ))
        )
    );
    // lists carry the list kind and an empty continue token
    let l = req(&env, "GET", &base, None).await.json();
    assert_eq!(
        (l["kind"].clone(), l["metadata"]["continue"].clone()),
        (json!("WidgetList"), json!(""))
    );
    assert_eq!(l["items"].as_array().map(Vec::len), Some(1));
    // another served version: the same object, its apiVersion, and the deprecation warning
    let v1beta1 = format!("/apis/{group}/v1beta1/namespaces/{ns}/widgets");
    let r = req(&env, "GET", &format!("{v1beta1}/a"), None).await;
    assert_eq!(
        r.header("warning"),
        Some(
            format!("299 - \"{group}/v1beta1 Widget is deprecated; use {group}/v1 Widget\"")
                .as_str()
        )
    );
    let b = r.json();
    assert_eq!(
        (b["apiVersion"].clone(), b["spec"].clone()),
        (json!(format!("{group}/v1beta1")), got["spec"].clone())
    );
    // written through v1beta1 (no schema), stored in v1: pruned by v1's schema
    let mut upd = b.clone();
    upd["spec"]["anything"] = json!(1);
    upd["metadata"]
        .as_object_mut()
        .map(|m| m.remove("managedFields"));
    let r = req(&env, "PUT", &format!("{v1beta1}/a"), Some(&upd)).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["spec"].get("anything"), None);
    // the strategy saw the v1beta1 object, which changed
    assert_eq!(r.json()["metadata"]["generation"], 2);
    env.finish().await;
}

/// C6: the status subresource splits spec and status; generation follows the spec; `/scale`
/// reads and writes the replicas paths; strategic merge patches are refused.
#[tokio::test]
async fn c6_status_scale_patches() {
    let env = Server::start("crd-c6").await;
    let (group, ns, base) = widgets_in_namespace(&env, namespaced_widgets).await;
    let mut a = widget(&group, "a", json!({"color": "red"}));
    a["metadata"]["labels"] = json!({"app": "a"});
    let a = req(&env, "POST", &base, Some(&a)).await.json();
    let mut upd = a.clone();
    upd["spec"]["replicas"] = json!(3);
    upd["status"] = json!({"replicas": 2});
    let r = req(&env, "PUT", &format!("{base}/a"), Some(&upd))
        .await
        .json();
    assert_eq!(
        (
            r["metadata"]["generation"].clone(),
            r.get("status").cloned()
        ),
        (json!(2), None)
    );
    let mut upd = r.clone();
    upd["metadata"]["labels"] = json!({"app": "b"});
    let r = req(&env, "PUT", &format!("{base}/a"), Some(&upd))
        .await
        .json();
    assert_eq!(r["metadata"]["generation"], 2);
    let mut st = r.clone();
    st["spec"]["replicas"] = json!(9);
    st["status"] = json!({"replicas": 2, "selector": "app=b"});
    st["metadata"]["labels"] = json!({"app": "c"});
    let s = req(&env, "PUT", &format!("{base}/a/status"), Some(&st))
        .await
        .json();
    assert_eq!(
        (
            s["spec"]["replicas"].clone(),
            s["metadata"]["labels"].clone(),
            s["status"].clone(),
            s["metadata"]["generation"].clone()
        ),
        (
            json!(3),
            json!({"app": "b"}),
            json!({"replicas": 2, "selector": "app=b"}),
            json!(2)
        )
    );
    let r = patch(
        &env,
        &format!("{base}/a/status"),
        "application/merge-patch+json",
        &json!({"status": {"replicas": "x"}}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(format!(
                "Widget.{group} \"a\" is invalid: [status.replicas: Invalid value: \"string\": replicas in body must be of type integer: \"string\", .status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64]"
            ))
        )
    );
    // /scale
    let sc = req(&env, "GET", &format!("{base}/a/scale"), None)
        .await
        .json();
    assert_eq!(
        (
            sc["kind"].clone(),
            sc["spec"].clone(),
            sc["status"].clone(),
            sc["metadata"]["namespace"].clone()
        ),
        (
            json!("Scale"),
            json!({"replicas": 3}),
            json!({"replicas": 2, "selector": "app=b"}),
            json!(ns)
        )
    );
    let r = patch(
        &env,
        &format!("{base}/a/scale"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 5}}),
    )
    .await
    .json();
    assert_eq!(r["spec"]["replicas"], 5);
    let got = req(&env, "GET", &format!("{base}/a"), None).await.json();
    assert_eq!(
        (
            got["spec"]["replicas"].clone(),
            got["metadata"]["generation"].clone()
        ),
        (json!(5), json!(3))
    );
    let r = patch(
        &env,
        &format!("{base}/a/scale"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 50}}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(format!(
                "Widget.{group} \"a\" is invalid: spec.replicas: Invalid value: 50: spec.replicas in body should be less than or equal to 10"
            ))
        )
    );
    let r = patch(
        &env,
        &format!("{base}/a/scale"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": -1}}),
    )
    .await;
    assert_eq!(
        causes(&r.json()),
        vec![
            cause(
                ".spec.replicas",
                "FieldValueInvalid",
                "Invalid value: -1: should be a non-negative integer"
            ),
            cause(
                "spec.replicas",
                "FieldValueInvalid",
                "Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
            ),
        ]
    );
    let put = json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "a", "namespace": ns}, "spec": {"replicas": 4}});
    let r = req(&env, "PUT", &format!("{base}/a/scale"), Some(&put)).await;
    assert_eq!(
        (r.code, r.json()["spec"]["replicas"].clone()),
        (200, json!(4))
    );
    // patches: merge and JSON patches; no strategic merge patch for custom resources
    let r = patch(
        &env,
        &format!("{base}/a"),
        "application/strategic-merge-patch+json",
        &json!({"spec": {"color": "green"}}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            415,
            json!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
            )
        )
    );
    let r = patch(
        &env,
        &format!("{base}/a"),
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/spec/color", "value": "blue"}]),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["spec"]["color"].clone()),
        (200, json!("blue"))
    );
    let r = patch(
        &env,
        &format!("{base}/a?fieldValidation=Strict"),
        "application/merge-patch+json",
        &json!({"spec": {"junk": 1}}),
    )
    .await;
    assert_eq!(r.code, 422);
    assert!(
        r.json()["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("strict decoding error: unknown field \"spec.junk\""))
    );
    // an unknown subresource is the object's 404
    let r = req(&env, "GET", &format!("{base}/a/foo"), None).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (404, json!(format!("widgets.{group} \"a\" not found")))
    );
    env.finish().await;
}
