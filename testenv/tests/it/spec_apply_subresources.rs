//! Server-side apply checks A10–A12 (upstream `pkg/endpoints/handlers/patch.go`,
//! `k8s.io/apimachinery/pkg/util/managedfields` and its `scalehandler.go`): apply through
//! `/scale`, managedFields sent by clients, configurations that do not fit the schema, over
//! real HTTP. They run on an embedded TestEnv, or on a real kube-apiserver with
//! `KCM_SPEC_SERVER` (see testenv/README.md); A1–A9 are in `spec_apply.rs`.

use crate::common::apply::{MERGE, apply, entry, gadget, gadgets, managed};
use crate::common::crd::{install, namespaced_widgets, widget};
use crate::common::server::Server;
use crate::common::spec::deployment;
use crate::common::{patch, req};
use serde_json::{Value, json};

#[tokio::test]
async fn check_a10_scale() {
    let env = Server::start("apply-scale").await;
    let group = env.group("w");
    let ns = env.ns("n").await;
    install(&env, &namespaced_widgets(&group)).await;
    let gv = format!("{group}/v1");
    let path = format!("/apis/{group}/v1/namespaces/{ns}/widgets/w");
    let w = widget(&group, "w", json!({"color": "red", "replicas": 1}));
    let r = apply(&env, &path, "fieldManager=one", &w).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    // A10: the Scale's managers are the parent's owners of the replicas
    let scale = |name: &str| {
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name},
               "spec": {"replicas": 3}})
    };
    let r = apply(
        &env,
        &format!("{path}/scale"),
        "fieldManager=hpa",
        &scale("w"),
    )
    .await;
    assert_eq!(r.code, 409, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["message"],
        "Apply failed with 1 conflict: conflict with \"one\": .spec.replicas"
    );
    // kube-apiserver v1.37.2 cannot convert the merged Scale of a custom resource
    let r = apply(
        &env,
        &format!("{path}/scale"),
        "fieldManager=hpa&force=true",
        &scale("w"),
    )
    .await;
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "failed to convert new object (/w; autoscaling/v1, Kind=Scale) to proper version: request to convert CR to an invalid group/version: autoscaling/v1",
            "code": 500})
    );
    // an update through the scale moves the replicas' ownership to the updater
    let r = patch(
        &env,
        &format!("{path}/scale?fieldManager=scaler"),
        MERGE,
        &json!({"spec": {"replicas": 4}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    let parent = req(&env, "GET", &path, None).await.json();
    assert_eq!(parent["spec"]["replicas"], 4);
    let by = |obj: &Value, m: &str| -> Vec<Value> {
        obj["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["manager"] == m)
            .map(|e| {
                let mut e = e.clone();
                e.as_object_mut().map(|o| o.remove("time"));
                e
            })
            .collect()
    };
    assert_eq!(
        by(&parent, "scaler"),
        vec![
            json!({"manager": "scaler", "operation": "Update", "apiVersion": gv,
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"})
        ]
    );
    assert_eq!(
        by(&parent, "one")
            .iter()
            .map(|e| e["fieldsV1"].clone())
            .collect::<Vec<_>>(),
        vec![json!({"f:spec": {"f:color": {}}})]
    );
    // a built-in kind's scale applies: the scaler owns the replicas through `scale`, with no
    // time (upstream takes the parent's times, and it had none)
    let deploys = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let r = req(
        &env,
        "POST",
        &format!("{deploys}?fieldManager=creator"),
        Some(&deployment("d", json!({"app": "web"}))),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let dscale = format!("{deploys}/d/scale");
    let r = apply(&env, &dscale, "fieldManager=hpa", &scale("d")).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            409,
            json!(
                "Apply failed with 1 conflict: conflict with \"creator\" using autoscaling/v1: .spec.replicas"
            )
        )
    );
    let r = apply(&env, &dscale, "fieldManager=hpa&force=true", &scale("d")).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["spec"]["replicas"], 3);
    assert!(r.json()["metadata"].get("managedFields").is_none());
    let d = req(&env, "GET", &format!("{deploys}/d"), None).await.json();
    let hpa: Vec<&Value> = d["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["manager"] == "hpa")
        .collect();
    assert_eq!(
        hpa,
        vec![
            &json!({"manager": "hpa", "operation": "Apply", "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"})
        ]
    );
    env.finish().await;
}

#[tokio::test]
async fn check_a11_managed_fields_sent_by_clients() {
    let env = Server::start("apply-mf").await;
    let (group, _, gv, path) = gadgets(&env).await;
    let r = apply(
        &env,
        &path,
        "fieldManager=one",
        &gadget(&group, json!({"size": "s"})),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let merge = |manager: &'static str, body: Value| {
        let env = &env;
        let path = &path;
        async move { patch(env, &format!("{path}?fieldManager={manager}"), MERGE, &body).await }
    };
    // A11: entries that do not decode are ignored: the stored ones are used
    let bogus = json!([{"manager": "x", "operation": "Bogus", "apiVersion": gv, "fieldsType": "FieldsV1", "fieldsV1": {}}]);
    let r = merge(
        "m2",
        json!({"metadata": {"managedFields": bogus}, "spec": {"size": "m"}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        managed(&r.json()),
        vec![entry(
            "m2",
            "Update",
            &gv,
            json!({"f:spec": {"f:size": {}}})
        )]
    );
    // valid entries replace the stored ones, but one at a version of another group cannot be
    // converted to: the write is not tracked and the stored managers stay
    let other_group = json!([{"manager": "old", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
                             "fieldsV1": {"f:spec": {"f:size": {}}}}]);
    let r = merge(
        "m3",
        json!({"metadata": {"managedFields": other_group}, "spec": {"tags": ["a"]}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["spec"]["tags"], json!(["a"]));
    assert_eq!(
        managed(&r.json()),
        vec![entry(
            "m2",
            "Update",
            &gv,
            json!({"f:spec": {"f:size": {}}})
        )]
    );
    // valid entries of the resource's versions replace the stored ones
    let replaced = json!([{"manager": "new", "operation": "Update", "apiVersion": gv, "fieldsType": "FieldsV1",
                          "fieldsV1": {"f:spec": {"f:size": {}}}}]);
    let r = merge(
        "m3",
        json!({"metadata": {"managedFields": replaced}, "spec": {"tags": ["b"]}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        managed(&r.json()),
        vec![
            entry(
                "m3",
                "Update",
                &gv,
                json!({"f:spec": {"f:tags": {"v:\"b\"": {}}}})
            ),
            entry("new", "Update", &gv, json!({"f:spec": {"f:size": {}}})),
        ]
    );
    // a manager name that is not printable is invalid object metadata
    let unprintable = json!([{"manager": "x\u{1}y", "operation": "Update", "apiVersion": gv, "fieldsType": "FieldsV1",
                              "fieldsV1": {"f:spec": {}}}]);
    let r = merge(
        "m4",
        json!({"metadata": {"managedFields": unprintable}, "spec": {"size": "l"}}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(format!(
                "Gadget.{group} \"g\" is invalid: metadata.managedFields[0].manager: Invalid value: \"x\\x01y\": invalid character U+0001 (at position 1)"
            ))
        )
    );
    // one empty entry clears them (an empty list does not: a custom resource's metadata
    // loses it on decoding), and the object stays untracked until an apply
    let r = merge("m5", json!({"metadata": {"managedFields": []}})).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.json()["metadata"]["managedFields"].is_array());
    let r = merge("m5", json!({"metadata": {"managedFields": [{}]}})).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.json()["metadata"].get("managedFields").is_none());
    let r = merge("m6", json!({"spec": {"size": "xl"}})).await;
    assert!(r.json()["metadata"].get("managedFields").is_none());
    let r = apply(
        &env,
        &path,
        "fieldManager=one",
        &gadget(&group, json!({"size": "xs"})),
    )
    .await;
    assert_eq!(r.code, 409, "before-first-apply owns what was there");
    assert_eq!(
        r.json()["message"],
        format!(
            "Apply failed with 1 conflict: conflict with \"before-first-apply\" using {gv}: .spec.size"
        )
    );
    env.finish().await;
}

#[tokio::test]
async fn check_a12_bad_configurations() {
    let env = Server::start("apply-bad").await;
    let (group, ns, gv, path) = gadgets(&env).await;
    // A12: configurations that do not fit the schema are 500s with the merge engine's text
    let typed =
        |what: &str| format!("failed to create typed patch object (/g; {gv}, Kind=Gadget): {what}");
    for (spec, what) in [
        (
            json!({"bogus": 1}),
            typed(".spec.bogus: field not declared in schema"),
        ),
        (
            json!({"size": 1}),
            typed(".spec.size: expected string, got &value.valueUnstructured{Value:1}"),
        ),
        (
            json!({"tags": ["a", "a"]}),
            typed(".spec.tags: duplicate entries for key [=\"a\"]"),
        ),
        (
            json!({"size": true, "tags": {"a": 1}}),
            typed(
                "errors:\n  .spec.size: expected string, got &value.valueUnstructured{Value:true}\n  .spec.tags: expected list, got &{map[a:1]}",
            ),
        ),
    ] {
        let r = apply(&env, &path, "fieldManager=one", &gadget(&group, spec)).await;
        assert_eq!(
            r.json(),
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": what, "code": 500})
        );
    }
    // a configuration names its type, is a map, and keeps the URL's name
    let r = apply(
        &env,
        &path,
        "fieldManager=one",
        &json!({"kind": "Gadget", "metadata": {"name": "g"}}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (400, json!("invalid object type: /, Kind=Gadget"))
    );
    let r = apply(&env, &path, "fieldManager=one", &json!([1])).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!(
                "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"
            )
        )
    );
    let r = apply(
        &env,
        &format!("/apis/{group}/v1/namespaces/{ns}/gadgets/other"),
        "fieldManager=one",
        &gadget(&group, json!({})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!("the name of the object (g) does not match the name on the URL (other)")
        )
    );
    // a uid is a precondition: nothing to create with it
    let mut with_uid = gadget(&group, json!({}));
    with_uid["metadata"]["uid"] = json!("abc");
    let r = apply(&env, &path, "fieldManager=one", &with_uid).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            409,
            json!(format!(
                "Operation cannot be fulfilled on gadgets.{group} \"g\": uid mismatch: the provided object specified uid abc, and no existing object was found"
            ))
        )
    );
    // so is a resourceVersion
    apply(&env, &path, "fieldManager=one", &gadget(&group, json!({}))).await;
    let mut with_rv = gadget(&group, json!({"size": "s"}));
    with_rv["metadata"]["resourceVersion"] = json!("1");
    let r = apply(&env, &path, "fieldManager=one", &with_rv).await;
    assert_eq!(r.code, 409);
    // a status apply does not create
    let st =
        json!({"apiVersion": gv, "kind": "Gadget", "metadata": {"name": "nope"}, "status": {}});
    let r = apply(
        &env,
        &format!("/apis/{group}/v1/namespaces/{ns}/gadgets/nope/status"),
        "fieldManager=one",
        &st,
    )
    .await;
    assert_eq!(r.code, 404);
    env.finish().await;
}
