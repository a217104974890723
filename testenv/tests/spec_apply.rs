//! Server-side apply checks A1–A9 (upstream `pkg/endpoints/handlers/patch.go`,
//! `k8s.io/apimachinery/pkg/util/managedfields`, sigs.k8s.io/structured-merge-diff), over
//! real HTTP: create on apply, a second apply that changes nothing, conflicts as Status and
//! force, `managedFields` after apply + update + status apply, removal of fields no longer
//! applied, map lists merged by key, dry runs, and the options. They run on an embedded
//! TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see testenv/README.md).

mod common;

use common::crd::{install, namespaced_widgets, widget};
use common::server::Server;
use common::spec::{deployment, rv};
use common::{Resp, patch, req};
use serde_json::{Value, json};

const APPLY: &str = "application/apply-patch+yaml";
const MERGE: &str = "application/merge-patch+json";

async fn apply(env: &Server, path: &str, query: &str, body: &Value) -> Resp {
    patch(env, &format!("{path}?{query}"), APPLY, body).await
}

/// The entries of `metadata.managedFields`, without their times, by operation and
/// manager: the servers order them by time next, which depends on whether two writes fell
/// in the same second.
fn managed(obj: &Value) -> Vec<Value> {
    let mut entries: Vec<Value> = obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().map(|m| m.remove("time"));
            e
        })
        .collect();
    let key = |e: &Value| (e["operation"].to_string(), e["manager"].to_string());
    entries.sort_by_key(key);
    entries
}

/// A Lease: scalars only, so its managedFields do not depend on list or map types.
fn lease(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": spec})
}

fn entry(manager: &str, operation: &str, api_version: &str, fields: Value) -> Value {
    json!({"manager": manager, "operation": operation, "apiVersion": api_version,
           "fieldsType": "FieldsV1", "fieldsV1": fields})
}

/// A custom resource with a map list, a set, an atomic map and a status with a map list.
fn gadget_crd(group: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gadgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string"},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                  "items": {"type": "object", "required": ["name"], "properties": {
                                      "name": {"type": "string"}, "port": {"type": "integer"}}}},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                     "additionalProperties": {"type": "string"}},
                    }},
                    "status": {"type": "object", "properties": {
                        "ready": {"type": "integer"},
                        "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                                       "items": {"type": "object", "required": ["type"], "properties": {
                                           "type": {"type": "string"}, "status": {"type": "string"}}}},
                    }},
                }}},
            }],
        },
    })
}

/// A check's Gadget CRD in a group of its own and a namespace: `(group, namespace,
/// apiVersion, the path of the Gadget "g")`.
async fn gadgets(env: &Server) -> (String, String, String, String) {
    let group = env.group("g");
    let ns = env.ns("n").await;
    install(env, &gadget_crd(&group)).await;
    let gv = format!("{group}/v1");
    let path = format!("/apis/{group}/v1/namespaces/{ns}/gadgets/g");
    (group, ns, gv, path)
}

fn gadget(group: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{group}/v1"), "kind": "Gadget", "metadata": {"name": "g"}, "spec": spec})
}

#[tokio::test]
async fn checks_a1_a5_apply_conflicts_force_and_updates() {
    let env = Server::start("apply").await;
    let (group, _, gv, path) = gadgets(&env).await;
    // A1: apply creates, and the applier owns what it applied
    let cfg = gadget(&group, json!({"size": "s", "tags": ["a"]}));
    let r = apply(&env, &path, "fieldManager=tool", &cfg).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let created = r.json();
    assert!(
        created["metadata"]["managedFields"][0]["time"].is_string(),
        "the applier's entry has the time of the apply"
    );
    assert_eq!(
        managed(&created),
        vec![entry(
            "tool",
            "Apply",
            &gv,
            json!({"f:spec": {"f:size": {}, "f:tags": {"v:\"a\"": {}}}})
        )]
    );
    // A2: the same configuration again changes nothing, not even the resourceVersion
    let r = apply(&env, &path, "fieldManager=tool", &cfg).await;
    assert_eq!(r.code, 200);
    assert_eq!(rv(&r.json()), rv(&created));
    assert_eq!(
        r.json()["metadata"]["managedFields"],
        created["metadata"]["managedFields"]
    );
    // A3: another manager setting a field to another value conflicts
    let other = gadget(&group, json!({"size": "m"}));
    let r = apply(&env, &path, "fieldManager=other", &other).await;
    assert_eq!(r.code, 409);
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Apply failed with 1 conflict: conflict with \"tool\": .spec.size",
            "reason": "Conflict",
            "details": {"causes": [{"reason": "FieldManagerConflict", "message": "conflict with \"tool\"", "field": ".spec.size"}]},
            "code": 409})
    );
    // the same value is no conflict: both own it
    let same = gadget(&group, json!({"size": "s"}));
    let r = apply(&env, &path, "fieldManager=other", &same).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    // A4: force takes the field
    let r = apply(&env, &path, "fieldManager=other&force=true", &other).await;
    assert_eq!(r.code, 200);
    let forced = r.json();
    assert_eq!(forced["spec"]["size"], "m");
    assert_eq!(
        managed(&forced),
        vec![
            entry("other", "Apply", &gv, json!({"f:spec": {"f:size": {}}})),
            entry(
                "tool",
                "Apply",
                &gv,
                json!({"f:spec": {"f:tags": {"v:\"a\"": {}}}})
            ),
        ]
    );
    // A5: an update (merge patch) is owned by its manager as an Update entry, and takes
    // what it changes from the appliers without conflict
    let r = patch(
        &env,
        &format!("{path}?fieldManager=updater"),
        MERGE,
        &json!({"spec": {"tags": ["b"], "ports": [{"name": "http", "port": 80}]}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        managed(&r.json()),
        vec![
            entry("other", "Apply", &gv, json!({"f:spec": {"f:size": {}}})),
            entry(
                "updater",
                "Update",
                &gv,
                json!({"f:spec": {"f:ports": {".": {}, "k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
                                  "f:tags": {"v:\"b\"": {}}}})
            ),
        ]
    );
    // and an apply of a field the updater owns conflicts with it, named with its version
    let r = apply(
        &env,
        &path,
        "fieldManager=tool",
        &gadget(&group, json!({"ports": [{"name": "http", "port": 81}]})),
    )
    .await;
    assert_eq!(r.code, 409);
    assert_eq!(
        r.json()["message"],
        format!(
            "Apply failed with 1 conflict: conflict with \"updater\" using {gv}: .spec.ports[name=\"http\"].port"
        )
    );
    env.finish().await;
}

#[tokio::test]
async fn checks_a6_a7_options_and_dry_run() {
    let env = Server::start("apply-opts").await;
    let ns = env.ns("a").await;
    let path = format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/d");
    let cfg = lease("d", json!({"holderIdentity": "a"}));
    // A6: an apply names its manager; force is for applies only
    let r = apply(&env, &path, "", &cfg).await;
    assert_eq!(r.code, 422);
    assert_eq!(
        r.json()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let r = patch(
        &env,
        &format!("{path}?force=true"),
        MERGE,
        &json!({"spec": {}}),
    )
    .await;
    assert_eq!(r.code, 422);
    assert_eq!(
        r.json()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
    // A7: a dry-run apply answers the object it would create, and creates nothing
    let r = apply(&env, &path, "fieldManager=tool&dryRun=All", &cfg).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["spec"]["holderIdentity"], "a");
    assert_eq!(req(&env, "GET", &path, None).await.code, 404);
    let created = apply(&env, &path, "fieldManager=tool", &cfg).await.json();
    let r = apply(
        &env,
        &path,
        "fieldManager=tool&dryRun=All",
        &lease("d", json!({"holderIdentity": "z"})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["spec"]["holderIdentity"].clone()),
        (200, json!("z"))
    );
    let now = req(&env, "GET", &path, None).await.json();
    assert_eq!(now["spec"]["holderIdentity"], "a");
    assert_eq!(rv(&now), rv(&created));
    // a wrong kind is a bad request
    let mut wrong = cfg.clone();
    wrong["kind"] = json!("Pod");
    let r = apply(&env, &path, "fieldManager=tool", &wrong).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!("invalid object type: coordination.k8s.io/v1, Kind=Pod")
        )
    );
    env.finish().await;
}

#[tokio::test]
async fn checks_a8_a9_map_lists_removal_and_status() {
    let env = Server::start("apply-crd").await;
    let (group, _, gv, path) = gadgets(&env).await;
    // A8: two appliers of one map list each own their items, merged by key
    let a = gadget(
        &group,
        json!({"size": "s", "ports": [{"name": "http", "port": 80}], "tags": ["x"], "selector": {"a": "1"}}),
    );
    let r = apply(&env, &path, "fieldManager=one", &a).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let b = gadget(
        &group,
        json!({"ports": [{"name": "grpc", "port": 90}], "tags": ["y"]}),
    );
    let r = apply(&env, &path, "fieldManager=two", &b).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    let both = r.json();
    assert_eq!(
        both["spec"],
        json!({"size": "s", "ports": [{"name": "http", "port": 80}, {"name": "grpc", "port": 90}],
               "tags": ["x", "y"], "selector": {"a": "1"}})
    );
    assert_eq!(
        managed(&both),
        vec![
            entry(
                "one",
                "Apply",
                &gv,
                json!({"f:spec": {"f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
                                  "f:selector": {}, "f:size": {}, "f:tags": {"v:\"x\"": {}}}})
            ),
            entry(
                "two",
                "Apply",
                &gv,
                json!({"f:spec": {"f:ports": {"k:{\"name\":\"grpc\"}": {".": {}, "f:name": {}, "f:port": {}}},
                                  "f:tags": {"v:\"y\"": {}}}})
            ),
        ]
    );
    // an atomic map is one field: another selector conflicts as a whole
    let r = apply(
        &env,
        &path,
        "fieldManager=two",
        &gadget(
            &group,
            json!({"ports": [{"name": "grpc", "port": 90}], "tags": ["y"], "selector": {"b": "2"}}),
        ),
    )
    .await;
    assert_eq!(r.code, 409);
    assert_eq!(
        r.json()["message"],
        "Apply failed with 1 conflict: conflict with \"one\": .spec.selector"
    );
    // A9: fields an applier no longer applies go, unless someone else owns them
    let r = apply(
        &env,
        &path,
        "fieldManager=one",
        &gadget(&group, json!({"tags": ["x", "y"]})),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["spec"],
        json!({"ports": [{"name": "grpc", "port": 90}], "tags": ["x", "y"]})
    );
    // status through the status subresource: its own entry, status fields only
    let st = json!({"apiVersion": gv, "kind": "Gadget", "metadata": {"name": "g"},
                    "status": {"ready": 1, "conditions": [{"type": "Ready", "status": "True"}]}});
    let r = apply(&env, &format!("{path}/status"), "fieldManager=ctrl", &st).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    let with_status = r.json();
    let ctrl: Vec<Value> = managed(&with_status)
        .into_iter()
        .filter(|e| e["manager"] == "ctrl")
        .collect();
    assert_eq!(
        ctrl,
        vec![
            json!({"manager": "ctrl", "operation": "Apply", "apiVersion": gv, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}, "f:type": {}}},
                                      "f:ready": {}}},
            "subresource": "status"})
        ]
    );
    // a main-resource apply ignores status
    let r = apply(
        &env,
        &path,
        "fieldManager=one",
        &json!({"apiVersion": gv, "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"tags": ["x", "y"]}, "status": {"ready": 5}}),
    )
    .await;
    assert_eq!(r.json()["status"]["ready"], 1);
    env.finish().await;
}

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
