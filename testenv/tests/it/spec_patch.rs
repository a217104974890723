//! Spec checks 50–54 (README.md, "Agreement with kube-apiserver v1.37.2"): patch and
//! events, over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

use crate::common::server::Server;
use crate::common::spec::{deployment, pod};
use crate::common::{patch, req};
use serde_json::json;

#[tokio::test]
async fn checks_50_54_patch_and_events() {
    let env = Server::start("patch").await;
    let t1 = env.ns("t1").await;
    let p = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&pod("p", "web")),
    )
    .await
    .json();
    let uid = p["metadata"]["uid"].as_str().expect("uid").to_string();
    let smp = "application/strategic-merge-patch+json";
    // owners that exist, so that a real garbage collector leaves the pod alone
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "r"}}, "template": {"metadata": {"labels": {"app": "r"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let rs = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/replicasets"),
        Some(&rs),
    )
    .await
    .json();
    let lease =
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "o"}});
    let lease = req(
        &env,
        "POST",
        &format!("/apis/coordination.k8s.io/v1/namespaces/{t1}/leases"),
        Some(&lease),
    )
    .await
    .json();
    let (r_uid, o_uid) = (
        rs["metadata"]["uid"].clone(),
        lease["metadata"]["uid"].clone(),
    );
    let owner = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": r_uid, "controller": true, "blockOwnerDeletion": true});
    // a patch has no UID precondition: another uid is an update of an immutable field
    let r = patch(
        &env,
        &format!("/api/v1/namespaces/{t1}/pods/p"),
        smp,
        &json!({"metadata": {"ownerReferences": [owner], "uid": "WRONG"}}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(
                "Pod \"p\" is invalid: metadata.uid: Invalid value: \"WRONG\": field is immutable"
            )
        )
    );
    let r = patch(
        &env,
        &format!("/api/v1/namespaces/{t1}/pods/p"),
        smp,
        &json!({"metadata": {"ownerReferences": [owner], "uid": uid}}),
    )
    .await;
    assert_eq!(r.json()["metadata"]["ownerReferences"][0]["uid"], r_uid);
    let other =
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "name": "o", "uid": o_uid});
    patch(
        &env,
        &format!("/api/v1/namespaces/{t1}/pods/p"),
        smp,
        &json!({"metadata": {"ownerReferences": [other]}}),
    )
    .await;
    let r = patch(
        &env,
        &format!("/api/v1/namespaces/{t1}/pods/p"),
        smp,
        &json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": r_uid}], "uid": uid}}),
    )
    .await
    .json();
    assert_eq!(
        r["metadata"]["ownerReferences"]
            .as_array()
            .map(|a| a.iter().map(|o| o["uid"].clone()).collect::<Vec<_>>()),
        Some(vec![o_uid])
    );

    let mut d = deployment("web", json!({"app": "web"}));
    d["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "a", "image": "busybox:1"}, {"name": "b", "image": "busybox:1"}]);
    req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&d),
    )
    .await;
    let r = patch(&env, &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"), smp, &json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "b", "image": "busybox:2"}]}}}})).await.json();
    let cs = &r["spec"]["template"]["spec"]["containers"];
    assert_eq!(
        (
            cs[0]["name"].clone(),
            cs[0]["image"].clone(),
            cs[1]["image"].clone()
        ),
        (json!("a"), json!("busybox:1"), json!("busybox:2"))
    );
    assert!(
        !serde_json::to_string(&r)
            .expect("s")
            .contains("$setElementOrder")
    );
    let p1 = patch(
        &env,
        &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"),
        smp,
        &json!({"spec": {"paused": true}}),
    )
    .await
    .json();
    let p2 = patch(
        &env,
        &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"),
        smp,
        &json!({"spec": {"paused": null}}),
    )
    .await
    .json();
    assert!(p2["spec"].get("paused").is_none());
    assert_eq!(
        p2["metadata"]["generation"].as_i64(),
        p1["metadata"]["generation"].as_i64().map(|g| g + 1)
    );
    let jp = "application/json-patch+json";
    let r = patch(
        &env,
        &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"),
        jp,
        &json!([{"op": "test", "path": "/spec/replicas", "value": 99}]),
    )
    .await;
    assert_eq!(r.code, 422);
    let tpl = p2["spec"]["template"].clone();
    // the controller always writes the revision annotation; replace needs an existing path
    patch(
        &env,
        &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"),
        "application/merge-patch+json",
        &json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "1"}}}),
    )
    .await;
    let r = patch(&env, &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"), jp, &json!([{"op": "replace", "path": "/spec/template", "value": tpl}, {"op": "replace", "path": "/metadata/annotations", "value": {"a": "b"}}])).await;
    assert_eq!(r.code, 200);
    // unknown fields in a patch: a warning, or with Strict a 422 on the field `patch` whose
    // value is the whole patched object
    let merge = "application/merge-patch+json";
    let web = format!("/apis/apps/v1/namespaces/{t1}/deployments/web");
    let r = patch(&env, &web, merge, &json!({"spec": {"foo": "bar"}})).await;
    assert_eq!(
        (r.code, r.header("warning")),
        (200, Some(r#"299 - "unknown field \"spec.foo\"""#))
    );
    let r = patch(
        &env,
        &format!("{web}?fieldValidation=Strict"),
        merge,
        &json!({"spec": {"foo": "bar"}}),
    )
    .await;
    let s = r.json();
    let msg = s["message"].as_str().expect("message");
    assert_eq!(
        (
            r.code,
            s["reason"].clone(),
            s["details"]["causes"][0]["field"].clone()
        ),
        (422, json!("Invalid"), json!("patch"))
    );
    assert!(
        msg.starts_with(r#" "" is invalid: patch: Invalid value: "{"#)
            && msg.ends_with(r#"}": strict decoding error: unknown field "spec.foo""#),
        "{msg}"
    );
    assert!(s["details"].get("name").is_none() && s["details"].get("kind").is_none());
    let r = patch(
        &env,
        &format!("/apis/apps/v1/namespaces/{t1}/deployments/web"),
        "text/plain",
        &json!({}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["reason"].clone()),
        (415, json!("UnsupportedMediaType"))
    );

    let bad = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e0"}, "involvedObject": {"namespace": "other", "name": "web"}});
    let r = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/events"),
        Some(&bad),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["details"]["causes"][0]["field"].clone()),
        (422, json!("involvedObject.namespace"))
    );
    let ev = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1"}, "involvedObject": {"kind": "Deployment", "namespace": t1, "name": "web"}, "reason": "ScalingReplicaSet", "message": "m", "count": 1, "firstTimestamp": "2025-01-01T00:00:00Z", "type": "Normal"});
    assert_eq!(
        req(
            &env,
            "POST",
            &format!("/api/v1/namespaces/{t1}/events"),
            Some(&ev)
        )
        .await
        .code,
        201
    );
    let mut ev2 = ev.clone();
    ev2["metadata"]["name"] = json!("other.1");
    ev2["involvedObject"]["name"] = json!("other");
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/events"),
        Some(&ev2),
    )
    .await;
    let r = patch(
        &env,
        &format!("/api/v1/namespaces/{t1}/events/web.1"),
        smp,
        &json!({"count": 2}),
    )
    .await
    .json();
    assert_eq!(r["count"], 2);
    let l = req(&env, "GET", &format!("/api/v1/namespaces/{t1}/events?fieldSelector=involvedObject.name%3Dweb,involvedObject.kind%3DDeployment"), None).await.json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(1));
    let v1 = req(
        &env,
        "GET",
        &format!("/apis/events.k8s.io/v1/namespaces/{t1}/events/web.1"),
        None,
    )
    .await
    .json();
    assert_eq!(
        (
            v1["regarding"]["name"].clone(),
            v1["note"].clone(),
            v1["deprecatedCount"].clone(),
            v1["apiVersion"].clone()
        ),
        (
            json!("web"),
            json!("m"),
            json!(2),
            json!("events.k8s.io/v1")
        )
    );
    env.finish().await;
}
