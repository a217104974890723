//! Spec checks 42–49 (README.md, "Agreement with kube-apiserver v1.37.2"): deletion,
//! finalizers and namespaces, over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

use crate::common::server::Server;
use crate::common::spec::{deployment, pod};
use crate::common::{Watch, req};
use serde_json::json;

#[tokio::test]
async fn checks_42_49_delete() {
    let env = Server::start("delete").await;
    let t1 = env.ns("t1").await;
    let d = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&deployment("web", json!({"app": "web"}))),
    )
    .await
    .json();
    let r = req(
        &env,
        "DELETE",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"),
        Some(&json!({"propagationPolicy": "Background"})),
    )
    .await;
    assert_eq!(r.code, 200);
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": {"name": "web", "group": "apps", "kind": "deployments", "uid": d["metadata"]["uid"]}})
    );
    req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&deployment("web", json!({"app": "web"}))),
    )
    .await;
    let r = req(
        &env,
        "DELETE",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"),
        Some(&json!({"propagationPolicy": "Foreground"})),
    )
    .await
    .json();
    assert_eq!(r["kind"], "Deployment");
    assert!(r["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(r["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    assert_eq!(r["metadata"]["generation"], 2);

    let p = req(
        &env,
        "DELETE",
        &format!("/api/v1/namespaces/{t1}/pods/none"),
        None,
    )
    .await;
    // StatusDetails leaves empty fields out: a core resource has no group
    assert_eq!(
        (p.code, p.json()["details"].clone()),
        (404, json!({"name": "none", "kind": "pods"}))
    );
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&pod("u", "web")),
    )
    .await;
    let r = req(
        &env,
        "DELETE",
        &format!("/api/v1/namespaces/{t1}/pods/u"),
        None,
    )
    .await;
    assert_eq!((r.code, r.json()["kind"].clone()), (200, json!("Pod")));
    assert_eq!(
        req(
            &env,
            "GET",
            &format!("/api/v1/namespaces/{t1}/pods/u"),
            None
        )
        .await
        .code,
        404
    );
    let mut bound = pod("b", "web");
    bound["spec"]["nodeName"] = json!("n1");
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&bound),
    )
    .await;
    let r = req(
        &env,
        "DELETE",
        &format!("/api/v1/namespaces/{t1}/pods/b"),
        None,
    )
    .await
    .json();
    assert_eq!(r["metadata"]["deletionGracePeriodSeconds"], 30);
    assert!(r["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        req(
            &env,
            "GET",
            &format!("/api/v1/namespaces/{t1}/pods/b"),
            None
        )
        .await
        .code,
        200
    );
    let r = req(
        &env,
        "DELETE",
        &format!("/api/v1/namespaces/{t1}/pods/b"),
        Some(&json!({"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["reason"].clone()),
        (409, json!("Conflict"))
    );
    assert!(
        r.json()["message"]
            .as_str()
            .expect("m")
            .contains("the UID in the precondition")
    );
    req(
        &env,
        "DELETE",
        &format!("/api/v1/namespaces/{t1}/pods/b"),
        Some(&json!({"gracePeriodSeconds": 0})),
    )
    .await;
    assert_eq!(
        req(
            &env,
            "GET",
            &format!("/api/v1/namespaces/{t1}/pods/b"),
            None
        )
        .await
        .code,
        404
    );

    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "f", "finalizers": ["example.com/x"]}});
    req(
        &env,
        "POST",
        &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases"),
        Some(&lease),
    )
    .await;
    let r = req(
        &env,
        "DELETE",
        &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases/f"),
        None,
    )
    .await
    .json();
    assert!(r["metadata"]["deletionTimestamp"].is_string());
    let mut add = r.clone();
    add["metadata"]["finalizers"] = json!(["example.com/x", "example.com/y"]);
    let a = req(
        &env,
        "PUT",
        &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases/f"),
        Some(&add),
    )
    .await;
    assert_eq!(a.code, 422);
    assert!(
        a.json()["message"]
            .as_str()
            .expect("m")
            .contains("no new finalizers can be added if the object is being deleted")
    );
    let cur = env.resource_version().await;
    let mut w = Watch::open(&env, &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases?watch=true&resourceVersion={cur}&timeoutSeconds=30")).await;
    let mut rm = r.clone();
    rm["metadata"]["finalizers"] = json!([]);
    assert_eq!(
        req(
            &env,
            "PUT",
            &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases/f"),
            Some(&rm)
        )
        .await
        .code,
        200
    );
    assert_eq!(
        req(
            &env,
            "GET",
            &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases/f"),
            None
        )
        .await
        .code,
        404
    );
    // the last finalizer removed: the object is deleted as stored (one DELETED, still with
    // its finalizer), the update itself is never written
    let e = w.next().await.expect("event");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["metadata"]["finalizers"].clone()
        ),
        (json!("DELETED"), json!(["example.com/x"]))
    );

    // deletecollection answers the list of what it deleted
    for n in ["dc1", "dc2"] {
        let l = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": n, "labels": {"dc": "yes"}}});
        req(
            &env,
            "POST",
            &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases"),
            Some(&l),
        )
        .await;
    }
    let r = req(
        &env,
        "DELETE",
        &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases?labelSelector=dc%3Dyes"),
        None,
    )
    .await
    .json();
    let names: Vec<&str> = r["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(
        (r["kind"].clone(), names),
        (json!("LeaseList"), vec!["dc1", "dc2"])
    );

    let t2 = env.ns("t2").await;
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t2}/pods"),
        Some(&pod("x", "web")),
    )
    .await;
    let r = req(&env, "DELETE", &format!("/api/v1/namespaces/{t2}"), None)
        .await
        .json();
    assert_eq!(r["status"]["phase"], "Terminating");
    let r = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t2}/pods"),
        Some(&pod("y", "web")),
    )
    .await;
    if r.code == 403 {
        assert_eq!(
            r.json()["details"]["causes"][0]["reason"],
            "NamespaceTerminating"
        );
    } else {
        // the namespace may already be gone
        assert_eq!(r.code, 404);
    }
    // testenv removes the content at once; kube-controller-manager's namespace controller
    // takes a few seconds (discovery, then each resource)
    let attempts = if env.is_real() { 600 } else { 20 };
    assert!(
        env.wait_gone(&format!("/api/v1/namespaces/{t2}"), attempts)
            .await
    );
    env.finish().await;
}
