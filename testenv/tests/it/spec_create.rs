//! Spec checks 7–17 (README.md, "Agreement with kube-apiserver v1.37.2"): create, system
//! fields, defaults and validation, over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

use crate::common::req;
use crate::common::server::Server;
use crate::common::spec::{deployment, pod, rv};
use serde_json::json;

#[tokio::test]
async fn checks_07_17_create_and_defaults() {
    let env = Server::start("create").await;
    let t1 = env.ns_name("t1");
    let r = req(
        &env,
        "POST",
        "/api/v1/namespaces",
        Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": t1}})),
    )
    .await;
    assert_eq!(r.code, 201);
    let n = r.json();
    assert_eq!(n["status"]["phase"], "Active");
    assert_eq!(n["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(
        n["metadata"]["labels"]["kubernetes.io/metadata.name"],
        json!(t1)
    );
    assert_eq!(n["metadata"]["uid"].as_str().map(str::len), Some(36));
    let ts = n["metadata"]["creationTimestamp"].as_str().expect("ts");
    assert_eq!((ts.len(), &ts[10..11], &ts[19..]), (20, "T", "Z"));
    rv(&n);

    let r = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&deployment("web", json!({"app": "web"}))),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let d = r.json();
    let s = &d["spec"];
    assert_eq!(
        (s["replicas"].clone(), s["strategy"]["type"].clone()),
        (json!(1), json!("RollingUpdate"))
    );
    assert_eq!(
        s["strategy"]["rollingUpdate"],
        json!({"maxSurge": "25%", "maxUnavailable": "25%"})
    );
    assert_eq!(
        (
            s["revisionHistoryLimit"].clone(),
            s["progressDeadlineSeconds"].clone()
        ),
        (json!(10), json!(600))
    );
    let ps = &s["template"]["spec"];
    assert_eq!(ps["restartPolicy"], "Always");
    assert_eq!(ps["dnsPolicy"], "ClusterFirst");
    assert_eq!(ps["schedulerName"], "default-scheduler");
    assert_eq!(ps["terminationGracePeriodSeconds"], 30);
    assert_eq!(ps["securityContext"], json!({}));
    let c = &ps["containers"][0];
    assert_eq!(
        (
            c["imagePullPolicy"].clone(),
            c["terminationMessagePath"].clone(),
            c["terminationMessagePolicy"].clone()
        ),
        (
            json!("Always"),
            json!("/dev/termination-log"),
            json!("File")
        )
    );
    assert_eq!(d["metadata"]["generation"], 1);
    assert_eq!(d["status"], json!({}));

    let r = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&deployment("web", json!({"app": "web"}))),
    )
    .await;
    let s = r.json();
    assert_eq!(
        (r.code, s["reason"].clone(), s["message"].clone()),
        (
            409,
            json!("AlreadyExists"),
            json!("deployments.apps \"web\" already exists")
        )
    );
    assert_eq!(
        s["details"],
        json!({"name": "web", "group": "apps", "kind": "deployments"})
    );

    let r = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&deployment("web2", json!({"app": "other"}))),
    )
    .await;
    let s = r.json();
    assert_eq!(
        (
            r.code,
            s["reason"].clone(),
            s["details"]["kind"].clone(),
            s["details"]["group"].clone()
        ),
        (422, json!("Invalid"), json!("Deployment"), json!("apps"))
    );
    let c = &s["details"]["causes"][0];
    assert_eq!(
        (c["field"].clone(), c["reason"].clone()),
        (
            json!("spec.template.metadata.labels"),
            json!("FieldValueInvalid")
        )
    );
    assert!(
        c["message"]
            .as_str()
            .expect("m")
            .contains("`selector` does not match template `labels`")
    );

    let mut nosel = deployment("web3", json!({"app": "web"}));
    nosel["spec"].as_object_mut().map(|o| o.remove("selector"));
    let r = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&nosel),
    )
    .await;
    let s = r.json();
    assert_eq!(r.code, 422);
    let msg = s["message"].as_str().expect("m");
    assert!(msg.contains("is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: "), "{msg}");
    assert_eq!(s["details"]["causes"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        s["details"]["causes"][0],
        json!({"field": "spec.selector", "reason": "FieldValueRequired", "message": "Required value"})
    );

    let mut zero = deployment("web4", json!({"app": "web"}));
    zero["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}});
    let s = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&zero),
    )
    .await
    .json();
    assert_eq!(
        s["details"]["causes"][0]["field"],
        "spec.strategy.rollingUpdate.maxUnavailable"
    );
    assert!(
        s["message"]
            .as_str()
            .expect("m")
            .contains("may not be 0 when `maxSurge` is 0")
    );

    let mut pds = deployment("web5", json!({"app": "web"}));
    pds["spec"]["minReadySeconds"] = json!(10);
    pds["spec"]["progressDeadlineSeconds"] = json!(5);
    let s = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&pds),
    )
    .await
    .json();
    assert_eq!(
        s["message"],
        "Deployment.apps \"web5\" is invalid: spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"
    );

    let s = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&deployment("Web_1", json!({"app": "web"}))),
    )
    .await
    .json();
    assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
    assert!(
        s["details"]["causes"][0]["message"]
            .as_str()
            .expect("m")
            .starts_with("Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain")
    );

    let mut unknown = deployment("strict", json!({"app": "web"}));
    unknown["spec"]["foo"] = json!("bar");
    let r = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments?fieldValidation=Strict"),
        Some(&unknown),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!(
                "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.foo\""
            )
        )
    );
    let r = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{t1}/deployments"),
        Some(&unknown),
    )
    .await;
    assert_eq!(r.code, 201);
    assert_eq!(
        r.header("warning"),
        Some(r#"299 - "unknown field \"spec.foo\"""#)
    );
    assert!(r.json()["spec"].get("foo").is_none());
    let r = req(
        &env,
        "POST",
        "/api/v1/namespaces/nope/pods",
        Some(&pod("p", "web")),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (404, json!("namespaces \"nope\" not found"))
    );

    env.wait_ready(&t1).await;
    let mut gp = pod("", "web");
    gp["metadata"] = json!({"generateName": "web-"});
    let p = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&gp),
    )
    .await
    .json();
    let name = p["metadata"]["name"].as_str().expect("name");
    assert!(
        name.starts_with("web-")
            && name.len() == 9
            && name[4..]
                .chars()
                .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
        "{name}"
    );
    assert_eq!(
        (
            p["status"]["phase"].clone(),
            p["status"]["qosClass"].clone(),
            p["spec"]["enableServiceLinks"].clone()
        ),
        (json!("Pending"), json!("BestEffort"), json!(true))
    );
    gp["metadata"] = json!({"generateName": "a".repeat(70)});
    let p = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&gp),
    )
    .await
    .json();
    assert_eq!(p["metadata"]["name"].as_str().map(str::len), Some(63));
    env.finish().await;
}
