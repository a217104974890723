//! Server-side apply checks A1–A9 (upstream `pkg/endpoints/handlers/patch.go`,
//! `k8s.io/apimachinery/pkg/util/managedfields`, sigs.k8s.io/structured-merge-diff), over
//! real HTTP: create on apply, a second apply that changes nothing, conflicts as Status and
//! force, `managedFields` after apply + update + status apply, removal of fields no longer
//! applied, map lists merged by key, dry runs, and the options. They run on an embedded
//! TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see testenv/README.md).

use crate::common::apply::{MERGE, apply, entry, gadget, gadgets, lease, managed};
use crate::common::server::Server;
use crate::common::spec::rv;
use crate::common::{patch, req};
use serde_json::{Value, json};

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
