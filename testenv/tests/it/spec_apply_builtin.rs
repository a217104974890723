//! Server-side apply checks B1–B5 on built-in kinds, whose merge types come from upstream's
//! OpenAPI definitions (kcm-testenv: the schema catalog, `registry/apply/endpoint.rs`
//! `types_for`): a Lease's managedFields (its `spec` is a struct, not a map), a Deployment's
//! containers merged by name with a conflict on a container's image and force, a status
//! apply; kinds served generically: a ConfigMap created on apply, its `data` merged key by
//! key between two managers, a conflict, removal and dry runs; a Service's ports keyed by port
//! and defaulted protocol, its atomic selector; a CronJob's status applied. They run on an
//! embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md).

use crate::common::server::Server;
use crate::common::spec::deployment;
use crate::common::spec::rv;
use crate::common::{Resp, patch, req};
use serde_json::{Value, json};

const APPLY: &str = "application/apply-patch+yaml";

async fn apply(env: &Server, path: &str, query: &str, body: &Value) -> Resp {
    patch(env, &format!("{path}?{query}"), APPLY, body).await
}

/// A manager's entry of `metadata.managedFields`, without its time.
fn entry_of(obj: &Value, manager: &str) -> Option<Value> {
    obj["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager)
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().map(|m| m.remove("time"));
            e
        })
}

#[tokio::test]
async fn checks_b1_b3_builtin_kinds() {
    let env = Server::start("apply-builtin").await;
    let ns = env.ns("b").await;
    // B1: a Lease's spec is a struct: its named fields are not members
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
                       "spec": {"holderIdentity": "a", "leaseDurationSeconds": 10}});
    let path = format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/l");
    let r = apply(&env, &path, "fieldManager=tool", &lease).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        entry_of(&r.json(), "tool"),
        Some(
            json!({"manager": "tool", "operation": "Apply", "apiVersion": "coordination.k8s.io/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:holderIdentity": {}, "f:leaseDurationSeconds": {}}}})
        )
    );
    // B2: containers are a map list keyed by name
    let deploys = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let r = req(
        &env,
        "POST",
        &format!("{deploys}?fieldManager=creator"),
        Some(&deployment("d", json!({"app": "web"}))),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let path = format!("{deploys}/d");
    let sidecar = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}});
    let r = apply(&env, &path, "fieldManager=sidecar", &sidecar).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    let d = r.json();
    let names: Vec<Value> = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("web"), json!("side")]);
    assert_eq!(
        entry_of(&d, "sidecar").map(|e| e["fieldsV1"].clone()),
        Some(
            json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"side\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
        )
    );
    // another image for the creator's container conflicts on that field only
    let web = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}});
    let r = apply(&env, &path, "fieldManager=tool", &web).await;
    assert_eq!(r.code, 409);
    assert_eq!(
        r.json()["message"],
        "Apply failed with 1 conflict: conflict with \"creator\" using apps/v1: .spec.template.spec.containers[name=\"web\"].image"
    );
    let r = apply(&env, &path, "fieldManager=tool&force=true", &web).await;
    assert_eq!(r.code, 200);
    assert_eq!(
        r.json()["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:2"
    );
    // B3: a status apply through the status subresource owns status fields only
    let st = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                    "status": {"observedGeneration": 1}});
    let r = apply(&env, &format!("{path}/status"), "fieldManager=ctrl", &st).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        entry_of(&r.json(), "ctrl"),
        Some(
            json!({"manager": "ctrl", "operation": "Apply", "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:observedGeneration": {}}},
            "subresource": "status"})
        )
    );
    env.finish().await;
}

fn config_map(name: &str, labels: Value, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": labels}, "data": data})
}

#[tokio::test]
async fn check_b4_a_config_map_applied_by_two_managers() {
    let env = Server::start("apply-cm").await;
    let ns = env.ns("b4").await;
    let path = format!("/api/v1/namespaces/{ns}/configmaps/c");
    // a dry run creates nothing
    let a = config_map("c", json!({"l": "1"}), json!({"x": "1", "y": "2"}));
    let r = apply(&env, &path, "fieldManager=a&dryRun=All", &a).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["data"], json!({"x": "1", "y": "2"}));
    assert_eq!(req(&env, "GET", &path, None).await.code, 404);
    // a field the schema does not declare fails the apply as kube-apiserver's type converter
    // does (a 500 without a reason)
    let mut bogus = a.clone();
    bogus["bogus"] = json!(1);
    let r = apply(&env, &path, "fieldManager=a", &bogus).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            500,
            json!(
                "failed to create typed patch object (/c; /v1, Kind=ConfigMap): .bogus: field not declared in schema"
            )
        )
    );
    // create on apply: data and labels are maps, owned key by key (named fields of their
    // structs, so without a `.` of their own)
    let r = apply(&env, &path, "fieldManager=a", &a).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        entry_of(&r.json(), "a"),
        Some(
            json!({"manager": "a", "operation": "Apply", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": {
                "f:data": {"f:x": {}, "f:y": {}},
                "f:metadata": {"f:labels": {"f:l": {}}}}})
        )
    );
    // a second manager adds a key
    let b = config_map("c", json!({}), json!({"z": "3"}));
    let r = apply(&env, &path, "fieldManager=b", &b).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["data"], json!({"x": "1", "y": "2", "z": "3"}));
    // and conflicts on a's key
    let r = apply(
        &env,
        &path,
        "fieldManager=b",
        &config_map("c", json!({}), json!({"z": "3", "x": "9"})),
    )
    .await;
    assert_eq!(r.code, 409, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["message"],
        "Apply failed with 1 conflict: conflict with \"a\": .data.x"
    );
    // a drops y: removed; z is b's and stays
    let r = apply(
        &env,
        &path,
        "fieldManager=a",
        &config_map("c", json!({"l": "1"}), json!({"x": "1"})),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    let stored = r.json();
    assert_eq!(stored["data"], json!({"x": "1", "z": "3"}));
    // a dry-run change answers it, and stores nothing
    let r = apply(
        &env,
        &path,
        "fieldManager=a&dryRun=All",
        &config_map("c", json!({"l": "1"}), json!({"x": "5"})),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["data"], json!({"x": "5", "z": "3"}));
    let now = req(&env, "GET", &path, None).await.json();
    assert_eq!(now["data"], json!({"x": "1", "z": "3"}));
    assert_eq!(rv(&now), rv(&stored));
    env.finish().await;
}

#[tokio::test]
async fn check_b5_service_ports_and_a_cron_job_status() {
    let env = Server::start("apply-svc").await;
    let ns = env.ns("b5").await;
    // ports are a map list keyed by port and protocol (TCP when left out); the selector is
    // atomic
    let path = format!("/api/v1/namespaces/{ns}/services/s");
    let svc = |ports: Value| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"selector": {"app": "w"}, "ports": ports}})
    };
    let r = apply(
        &env,
        &path,
        "fieldManager=a",
        &svc(json!([{"name": "http", "port": 80}])),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        entry_of(&r.json(), "a").map(|e| e["fieldsV1"].clone()),
        Some(json!({"f:spec": {
            "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}}},
            "f:selector": {}}}))
    );
    let r = apply(
        &env,
        &path,
        "fieldManager=b",
        &json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "s"}, "spec": {"ports": [{"name": "https", "port": 443}]}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    let ports: Vec<Value> = r.json()["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| json!([p["name"], p["port"], p["protocol"]]))
        .collect();
    assert_eq!(
        ports,
        vec![json!(["http", 80, "TCP"]), json!(["https", 443, "TCP"])]
    );
    // a CronJob (suspended: no controller writes it) created on apply, its status applied
    // through the status subresource
    let path = format!("/apis/batch/v1/namespaces/{ns}/cronjobs/cj");
    let cj = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
        "spec": {"schedule": "0 0 1 1 *", "suspend": true, "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}});
    let r = apply(&env, &path, "fieldManager=a", &cj).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let status = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
        "status": {"lastScheduleTime": "2026-01-01T00:00:00Z"}});
    let r = apply(
        &env,
        &format!("{path}/status"),
        "fieldManager=ctrl",
        &status,
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    let got = r.json();
    assert_eq!(got["status"]["lastScheduleTime"], "2026-01-01T00:00:00Z");
    assert_eq!(
        entry_of(&got, "ctrl"),
        Some(
            json!({"manager": "ctrl", "operation": "Apply", "apiVersion": "batch/v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:lastScheduleTime": {}}},
            "subresource": "status"})
        )
    );
    // the resource keeps its stored status
    let mut both = cj.clone();
    both["status"] = json!({"lastScheduleTime": "2026-02-01T00:00:00Z"});
    let r = apply(&env, &path, "fieldManager=a", &both).await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["status"]["lastScheduleTime"],
        "2026-01-01T00:00:00Z"
    );
    env.finish().await;
}
