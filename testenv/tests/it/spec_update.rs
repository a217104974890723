//! Spec checks 18–29 (README.md, "Agreement with kube-apiserver v1.37.2"): update, status,
//! generation and /scale, over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

use crate::common::server::Server;
use crate::common::spec::{deployment, rv};
use crate::common::{Watch, patch, req};
use serde_json::json;

#[tokio::test]
async fn checks_18_29_update_status_generation_scale() {
    let env = Server::start("update").await;
    let t1 = env.ns("t1").await;
    let base = &format!("/apis/apps/v1/namespaces/{t1}/deployments");
    let d = req(
        &env,
        "POST",
        base,
        Some(&deployment("web", json!({"app": "web"}))),
    )
    .await
    .json();
    let rv1 = rv(&d);
    let mut w = Watch::open(&env, &format!("{base}?watch=true&resourceVersion={rv1}")).await;
    let mut upd = d.clone();
    upd["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    let r = req(&env, "PUT", &format!("{base}/web"), Some(&upd)).await;
    assert_eq!(r.code, 200);
    let d2 = r.json();
    assert_eq!(d2["metadata"]["generation"], 2);
    assert!(rv(&d2) > rv1);
    let e = w.next().await.expect("event");
    assert_eq!(
        (e["type"].clone(), rv(&e["object"])),
        (json!("MODIFIED"), rv(&d2))
    );

    let r = req(&env, "PUT", &format!("{base}/web"), Some(&upd)).await;
    assert_eq!(r.code, 409);
    assert_eq!(
        r.json()["message"],
        "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"
    );
    // a uid in a PUT body is a precondition, failed in storage (whose key the text names)
    let mut wrong = d2.clone();
    wrong["metadata"]["uid"] = json!("WRONG");
    let r = req(&env, "PUT", &format!("{base}/web"), Some(&wrong)).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            409,
            json!(format!(
                "Operation cannot be fulfilled on deployments.apps \"web\": StorageError: invalid object, Code: 4, Key: /registry/deployments/{t1}/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: WRONG, UID in object meta: {}",
                d2["metadata"]["uid"].as_str().expect("uid")
            ))
        )
    );

    let mut uncond = d2.clone();
    uncond["metadata"]
        .as_object_mut()
        .map(|m| m.remove("resourceVersion"));
    uncond["spec"]["replicas"] = json!(2);
    let r = req(&env, "PUT", &format!("{base}/web"), Some(&uncond)).await;
    assert_eq!(r.code, 200);
    let d3 = r.json();
    assert_eq!(d3["metadata"]["generation"], 3);
    assert_eq!(w.next().await.expect("event")["type"], "MODIFIED");

    let mut st = d3.clone();
    st["status"] = json!({"replicas": 5});
    let r = req(&env, "PUT", &format!("{base}/web"), Some(&st))
        .await
        .json();
    assert_eq!((rv(&r), r["status"].clone()), (rv(&d3), json!({})));

    let mut s = d3.clone();
    s["spec"]["replicas"] = json!(9);
    s["status"] = json!({"observedGeneration": 3});
    s["metadata"]["annotations"] = json!({"x": "y"});
    let r = req(&env, "PUT", &format!("{base}/web/status"), Some(&s))
        .await
        .json();
    assert_eq!(
        (
            r["spec"]["replicas"].clone(),
            r["status"]["observedGeneration"].clone(),
            r["metadata"]["annotations"]["x"].clone(),
            r["metadata"]["generation"].clone()
        ),
        (json!(2), json!(3), json!("y"), json!(3))
    );
    // the next watch event is the status write, not the no-op
    let e = w.next().await.expect("event");
    assert_eq!(rv(&e["object"]), rv(&r));
    let mut a = r.clone();
    a["metadata"]["annotations"]["z"] = json!("1");
    let r = req(&env, "PUT", &format!("{base}/web"), Some(&a))
        .await
        .json();
    assert_eq!(r["metadata"]["generation"], 4);

    let mut sel = r.clone();
    sel["spec"]["selector"]["matchLabels"]["x"] = json!("y");
    sel["spec"]["template"]["metadata"]["labels"]["x"] = json!("y");
    let s = req(&env, "PUT", &format!("{base}/web"), Some(&sel))
        .await
        .json();
    assert_eq!(s["details"]["causes"][0]["field"], "spec.selector");
    assert!(
        s["message"]
            .as_str()
            .expect("m")
            .contains("field is immutable")
    );

    // scale
    let sc = req(&env, "GET", &format!("{base}/web/scale"), None)
        .await
        .json();
    assert_eq!(
        (
            sc["kind"].clone(),
            sc["apiVersion"].clone(),
            sc["spec"]["replicas"].clone(),
            sc["status"]["selector"].clone()
        ),
        (
            json!("Scale"),
            json!("autoscaling/v1"),
            json!(2),
            json!("app=web")
        )
    );
    assert_eq!(rv(&sc), rv(&r));
    let p = patch(
        &env,
        &format!("{base}/web/scale"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 3}}),
    )
    .await;
    assert_eq!(
        (p.code, p.json()["spec"]["replicas"].clone()),
        (200, json!(3))
    );
    let d = req(&env, "GET", &format!("{base}/web"), None).await.json();
    assert_eq!(
        (
            d["spec"]["replicas"].clone(),
            d["metadata"]["generation"].clone()
        ),
        (json!(3), json!(5))
    );
    let mut stale = sc.clone();
    stale["spec"]["replicas"] = json!(4);
    assert_eq!(
        req(&env, "PUT", &format!("{base}/web/scale"), Some(&stale))
            .await
            .code,
        409
    );
    stale["metadata"]["resourceVersion"] = json!(rv(&d).to_string());
    stale["spec"]["replicas"] = json!(-1);
    let s = req(&env, "PUT", &format!("{base}/web/scale"), Some(&stale))
        .await
        .json();
    assert_eq!(
        (
            s["code"].clone(),
            s["details"]["kind"].clone(),
            s["details"]["group"].clone(),
            s["details"]["causes"][0]["field"].clone()
        ),
        (
            json!(422),
            json!("Scale"),
            json!("autoscaling"),
            json!("spec.replicas")
        )
    );

    // ReplicaSet generation ignores labels
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let rs = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/replicasets"),
        Some(&rs),
    )
    .await
    .json();
    let mut l = rs.clone();
    l["metadata"]["labels"] = json!({"a": "b"});
    let l = req(
        &env,
        "PUT",
        &format!("/apis/apps/v1/namespaces/{t1}/replicasets/rs"),
        Some(&l),
    )
    .await
    .json();
    assert_eq!(l["metadata"]["generation"], 1);
    let mut r2 = l.clone();
    r2["spec"]["replicas"] = json!(3);
    assert_eq!(
        req(
            &env,
            "PUT",
            &format!("/apis/apps/v1/namespaces/{t1}/replicasets/rs"),
            Some(&r2)
        )
        .await
        .json()["metadata"]["generation"],
        2
    );

    // leases
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l1"}, "spec": {"holderIdentity": "a"}});
    assert_eq!(
        req(
            &env,
            "POST",
            &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases"),
            Some(&lease)
        )
        .await
        .code,
        201
    );
    let r = req(
        &env,
        "PUT",
        &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases/l1"),
        Some(&lease),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(
                "leases.coordination.k8s.io \"l1\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"
            )
        )
    );
    let mut nl = lease.clone();
    nl["metadata"]["name"] = json!("new");
    nl["spec"]["renewTime"] = json!("2025-01-01T00:00:00.123456Z");
    assert_eq!(
        req(
            &env,
            "PUT",
            &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases/new"),
            Some(&nl)
        )
        .await
        .code,
        201
    );
    let g = req(
        &env,
        "GET",
        &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases/new"),
        None,
    )
    .await
    .json();
    assert_eq!(g["spec"]["renewTime"], "2025-01-01T00:00:00.123456Z");
    env.finish().await;
}
