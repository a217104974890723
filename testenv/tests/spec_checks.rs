//! The reviewer checks of spec §12 (apiserver.md), run over real HTTP.

mod common;

use common::{Watch, patch, req, request_full, start};
use serde_json::{Value, json};

const AGG_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

fn deployment(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
}

fn pod(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

async fn ns(env: &kcm_testenv::TestEnv, name: &str) {
    let r = req(
        env,
        "POST",
        "/api/v1/namespaces",
        Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
}

fn rv(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("rv")
}

#[tokio::test]
async fn checks_01_06_discovery() {
    let env = start().await;
    let v = req(&env, "GET", "/version", None).await.json();
    for k in [
        "major",
        "minor",
        "gitVersion",
        "gitCommit",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    ] {
        assert!(v[k].as_str().is_some_and(|s| !s.is_empty()), "{k}");
    }
    let r = request_full(&env, "GET", "/api", "application/json", AGG_ACCEPT, b"").await;
    assert_eq!(r.code, 200);
    assert!(
        !r.header("content-type")
            .unwrap_or("")
            .contains("as=APIGroupDiscoveryList")
    );
    assert_eq!(r.json()["kind"], "APIVersions");
    assert_eq!(r.json()["versions"], json!(["v1"]));
    let apis = req(&env, "GET", "/apis", None).await.json();
    let names: Vec<&str> = apis["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(names, vec!["apps", "coordination.k8s.io", "events.k8s.io"]);
    assert!(
        apis["groups"]
            .as_array()
            .expect("g")
            .iter()
            .all(|g| g["preferredVersion"]["version"] == "v1")
    );
    let apps = req(&env, "GET", "/apis/apps/v1", None).await.json();
    let find = |l: &Value, n: &str| {
        l["resources"]
            .as_array()
            .and_then(|a| a.iter().find(|e| e["name"] == n).cloned())
            .expect(n)
    };
    let d = find(&apps, "deployments");
    assert_eq!(
        (
            d["namespaced"].clone(),
            d["kind"].clone(),
            d["shortNames"].clone(),
            d["categories"].clone()
        ),
        (
            json!(true),
            json!("Deployment"),
            json!(["deploy"]),
            json!(["all"])
        )
    );
    assert_eq!(d["verbs"].as_array().map(Vec::len), Some(8));
    let s = find(&apps, "deployments/scale");
    assert_eq!(
        (
            s["group"].clone(),
            s["version"].clone(),
            s["kind"].clone(),
            s["verbs"].clone()
        ),
        (
            json!("autoscaling"),
            json!("v1"),
            json!("Scale"),
            json!(["get", "patch", "update"])
        )
    );
    assert_eq!(find(&apps, "replicasets")["shortNames"], json!(["rs"]));
    let core = req(&env, "GET", "/api/v1", None).await.json();
    assert_eq!(find(&core, "pods")["shortNames"], json!(["po"]));
    assert_eq!(find(&core, "pods")["categories"], json!(["all"]));
    find(&core, "pods/status");
    assert_eq!(find(&core, "namespaces")["namespaced"], json!(false));
    assert_eq!(find(&core, "events")["shortNames"], json!(["ev"]));
    let r = request_full(
        &env,
        "GET",
        "/openapi/v2",
        "application/json",
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        b"",
    )
    .await;
    assert_eq!(r.code, 200);
    let r = req(&env, "GET", "/nope", None).await;
    assert_eq!(
        (r.code, r.json()["reason"].clone()),
        (404, json!("NotFound"))
    );
    assert_eq!(req(&env, "GET", "/healthz", None).await.code, 200);
}

#[tokio::test]
async fn checks_07_17_create_and_defaults() {
    let env = start().await;
    let r = req(
        &env,
        "POST",
        "/api/v1/namespaces",
        Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t1"}})),
    )
    .await;
    assert_eq!(r.code, 201);
    let n = r.json();
    assert_eq!(n["status"]["phase"], "Active");
    assert_eq!(n["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(n["metadata"]["labels"]["kubernetes.io/metadata.name"], "t1");
    assert_eq!(n["metadata"]["uid"].as_str().map(str::len), Some(36));
    let ts = n["metadata"]["creationTimestamp"].as_str().expect("ts");
    assert_eq!((ts.len(), &ts[10..11], &ts[19..]), (20, "T", "Z"));
    rv(&n);

    let r = req(
        &env,
        "POST",
        "/apis/apps/v1/namespaces/t1/deployments",
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
        "/apis/apps/v1/namespaces/t1/deployments",
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
        "/apis/apps/v1/namespaces/t1/deployments",
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
        "/apis/apps/v1/namespaces/t1/deployments",
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
        "/apis/apps/v1/namespaces/t1/deployments",
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
        "/apis/apps/v1/namespaces/t1/deployments",
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
        "/apis/apps/v1/namespaces/t1/deployments",
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
        "/apis/apps/v1/namespaces/t1/deployments?fieldValidation=Strict",
        Some(&unknown),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!("strict decoding error: unknown field \"spec.foo\"")
        )
    );
    let r = req(
        &env,
        "POST",
        "/apis/apps/v1/namespaces/t1/deployments",
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

    let mut gp = pod("", "web");
    gp["metadata"] = json!({"generateName": "web-"});
    let p = req(&env, "POST", "/api/v1/namespaces/t1/pods", Some(&gp))
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
    let p = req(&env, "POST", "/api/v1/namespaces/t1/pods", Some(&gp))
        .await
        .json();
    assert_eq!(p["metadata"]["name"].as_str().map(str::len), Some(63));
    env.shutdown().await;
}

#[tokio::test]
async fn checks_18_29_update_status_generation_scale() {
    let env = start().await;
    ns(&env, "t1").await;
    let base = "/apis/apps/v1/namespaces/t1/deployments";
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
        "/apis/apps/v1/namespaces/t1/replicasets",
        Some(&rs),
    )
    .await
    .json();
    let mut l = rs.clone();
    l["metadata"]["labels"] = json!({"a": "b"});
    let l = req(
        &env,
        "PUT",
        "/apis/apps/v1/namespaces/t1/replicasets/rs",
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
            "/apis/apps/v1/namespaces/t1/replicasets/rs",
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
            "/apis/coordination.k8s.io/v1/namespaces/t1/leases",
            Some(&lease)
        )
        .await
        .code,
        201
    );
    let r = req(
        &env,
        "PUT",
        "/apis/coordination.k8s.io/v1/namespaces/t1/leases/l1",
        Some(&lease),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(
                "leases.coordination.k8s.io \"l1\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
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
            "/apis/coordination.k8s.io/v1/namespaces/t1/leases/new",
            Some(&nl)
        )
        .await
        .code,
        201
    );
    let g = req(
        &env,
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/t1/leases/new",
        None,
    )
    .await
    .json();
    assert_eq!(g["spec"]["renewTime"], "2025-01-01T00:00:00.123456Z");
    env.shutdown().await;
}

#[tokio::test]
async fn checks_30_34_list() {
    let env = start().await;
    ns(&env, "t1").await;
    for i in 0..5 {
        req(
            &env,
            "POST",
            "/api/v1/namespaces/t1/pods",
            Some(&pod(&format!("w{i}"), "web")),
        )
        .await;
    }
    req(
        &env,
        "POST",
        "/api/v1/namespaces/t1/pods",
        Some(&pod("d0", "db")),
    )
    .await;
    let l = req(
        &env,
        "GET",
        "/api/v1/namespaces/t1/pods?labelSelector=app%3Dweb",
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(5));
    let l = req(
        &env,
        "GET",
        "/api/v1/namespaces/t1/pods?labelSelector=app%20in%20(web,db),!tier",
        None,
    )
    .await
    .json();
    let items = l["items"].as_array().expect("items");
    assert_eq!(items.len(), 6);
    assert!(items.iter().all(|i| rv(i) <= rv(&l)));
    assert_eq!(l["kind"], "PodList");
    let r = req(
        &env,
        "GET",
        "/api/v1/namespaces/t1/pods?fieldSelector=spec.foo%3Dbar",
        None,
    )
    .await;
    assert_eq!(
        (
            r.code,
            r.json()["reason"].clone(),
            r.json()["message"].clone()
        ),
        (
            400,
            json!("BadRequest"),
            json!("field label not supported: spec.foo")
        )
    );
    let l = req(
        &env,
        "GET",
        "/api/v1/namespaces/t1/pods?fieldSelector=metadata.name%3Dw2",
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(1));
    let l = req(
        &env,
        "GET",
        "/api/v1/namespaces/t1/pods?fieldSelector=status.phase%3DPending",
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(6));
    let p = req(
        &env,
        "GET",
        "/api/v1/namespaces/t1/pods?labelSelector=app%3Dweb&limit=2",
        None,
    )
    .await
    .json();
    assert_eq!(p["items"].as_array().map(Vec::len), Some(2));
    assert!(
        p["metadata"]["continue"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    );
    assert!(p["metadata"].get("remainingItemCount").is_none());
    let p1 = req(&env, "GET", "/api/v1/namespaces/t1/pods?limit=2", None)
        .await
        .json();
    assert_eq!(p1["metadata"]["remainingItemCount"], 4);
    req(
        &env,
        "POST",
        "/api/v1/namespaces/t1/pods",
        Some(&pod("a-new", "web")),
    )
    .await;
    let mut names: Vec<String> = p1["items"]
        .as_array()
        .expect("i")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    let mut cont = p1["metadata"]["continue"].as_str().expect("c").to_string();
    let first_cont = cont.clone();
    loop {
        let p = req(
            &env,
            "GET",
            &format!("/api/v1/namespaces/t1/pods?limit=2&continue={cont}"),
            None,
        )
        .await
        .json();
        assert_eq!(
            p["metadata"]["resourceVersion"],
            p1["metadata"]["resourceVersion"]
        );
        names.extend(
            p["items"]
                .as_array()
                .expect("i")
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string()),
        );
        match p["metadata"]["continue"].as_str() {
            Some(c) => cont = c.to_string(),
            None => break,
        }
    }
    assert_eq!(names, vec!["d0", "w0", "w1", "w2", "w3", "w4"]);
    env.expire_continue_tokens();
    let r = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/t1/pods?limit=2&continue={first_cont}"),
        None,
    )
    .await;
    let s = r.json();
    assert_eq!((r.code, s["reason"].clone()), (410, json!("Expired")));
    assert!(s["message"].as_str().expect("m").starts_with(
        "The provided continue parameter is too old to display a consistent list result."
    ));
    assert!(
        s["metadata"]["continue"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    );
    let r = req(
        &env,
        "GET",
        "/api/v1/namespaces/t1/pods?resourceVersionMatch=Exact",
        None,
    )
    .await;
    let s = r.json();
    assert_eq!(
        (
            r.code,
            s["details"]["group"].clone(),
            s["details"]["kind"].clone(),
            s["details"]["causes"][0]["field"].clone()
        ),
        (
            422,
            json!("meta.k8s.io"),
            json!("ListOptions"),
            json!("resourceVersionMatch")
        )
    );
    env.shutdown().await;
}

#[tokio::test]
async fn checks_35_40_watch() {
    let env = start().await;
    ns(&env, "t1").await;
    req(
        &env,
        "POST",
        "/api/v1/namespaces/t1/pods",
        Some(&pod("old", "web")),
    )
    .await;
    let l = req(&env, "GET", "/api/v1/namespaces/t1/pods", None)
        .await
        .json();
    let lrv = rv(&l);
    let mut w = Watch::open(&env, &format!("/api/v1/namespaces/t1/pods?watch=true&resourceVersion={lrv}&allowWatchBookmarks=true&timeoutSeconds=30")).await;
    assert_eq!(w.code, 200);
    assert_eq!(
        w.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("transfer-encoding"))
            .map(|(_, v)| v.as_str()),
        Some("chunked")
    );
    let p = req(
        &env,
        "POST",
        "/api/v1/namespaces/t1/pods",
        Some(&pod("p1", "web")),
    )
    .await
    .json();
    let line = w.next_raw().await.expect("line");
    let e: Value = serde_json::from_str(&line).expect("json line");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["kind"].clone(),
            e["object"]["apiVersion"].clone()
        ),
        (json!("ADDED"), json!("Pod"), json!("v1"))
    );
    assert!(rv(&e["object"]) > lrv);
    req(&env, "DELETE", "/api/v1/namespaces/t1/pods/p1", None).await;
    let e = w.next().await.expect("deleted");
    assert_eq!(e["type"], "DELETED");
    assert!(rv(&e["object"]) > rv(&p));

    // 36: no RV → ADDED per existing pod first
    let mut w = Watch::open(
        &env,
        "/api/v1/namespaces/t1/pods?watch=true&timeoutSeconds=30",
    )
    .await;
    let e = w.next().await.expect("added");
    assert_eq!(
        (e["type"].clone(), e["object"]["metadata"]["name"].clone()),
        (json!("ADDED"), json!("old"))
    );

    // 37: compacted history → one ERROR line then EOF
    env.set_watch_window(1);
    req(
        &env,
        "POST",
        "/api/v1/namespaces/t1/pods",
        Some(&pod("p2", "web")),
    )
    .await;
    req(
        &env,
        "POST",
        "/api/v1/namespaces/t1/pods",
        Some(&pod("p3", "web")),
    )
    .await;
    let mut w = Watch::open(
        &env,
        "/api/v1/namespaces/t1/pods?watch=true&resourceVersion=1",
    )
    .await;
    assert_eq!(w.code, 200);
    let e = w.next().await.expect("error");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["code"].clone(),
            e["object"]["reason"].clone(),
            e["object"]["kind"].clone()
        ),
        (
            json!("ERROR"),
            json!(410),
            json!("Expired"),
            json!("Status")
        )
    );
    assert!(
        e["object"]["message"]
            .as_str()
            .expect("m")
            .starts_with("too old resource version: 1 (")
    );
    assert!(w.next_raw().await.is_none());
    env.set_watch_window(1000);

    // 38: bookmark before the deadline, then a clean close
    let cur = env.resource_version();
    let mut w = Watch::open(&env, &format!("/api/v1/namespaces/t1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion={cur}")).await;
    let e = w.next().await.expect("bookmark");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["kind"].clone(),
            e["object"]["apiVersion"].clone()
        ),
        (json!("BOOKMARK"), json!("Pod"), json!("v1"))
    );
    assert!(w.next_raw().await.is_none());

    // 39: streaming list
    let mut w = Watch::open(&env, "/api/v1/namespaces/t1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=&timeoutSeconds=30").await;
    let mut added = 0;
    loop {
        let e = w.next().await.expect("event");
        if e["type"] == "BOOKMARK" {
            assert_eq!(
                e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
                "true"
            );
            break;
        }
        assert_eq!(e["type"], "ADDED");
        added += 1;
    }
    assert_eq!(added, 3);
    let r = req(
        &env,
        "GET",
        "/api/v1/namespaces/t1/pods?watch=true&sendInitialEvents=true",
        None,
    )
    .await;
    assert_eq!(r.code, 422);
    assert!(
        r.json()["message"]
            .as_str()
            .expect("m")
            .contains("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
    );

    // 40: leaving the selector is DELETED with the old labels and the new RV
    let cur = env.resource_version();
    let mut w = Watch::open(&env, &format!("/api/v1/namespaces/t1/pods?watch=true&labelSelector=app%3Dweb&resourceVersion={cur}&timeoutSeconds=30")).await;
    let p = req(&env, "GET", "/api/v1/namespaces/t1/pods/p2", None)
        .await
        .json();
    let m = patch(
        &env,
        "/api/v1/namespaces/t1/pods/p2",
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"app": "db"}}}),
    )
    .await
    .json();
    let e = w.next().await.expect("deleted");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["metadata"]["labels"]["app"].clone()
        ),
        (json!("DELETED"), json!("web"))
    );
    assert_eq!(rv(&e["object"]), rv(&m));
    assert!(rv(&m) > rv(&p));
    patch(
        &env,
        "/api/v1/namespaces/t1/pods/p2",
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"app": "web"}}}),
    )
    .await;
    assert_eq!(w.next().await.expect("added")["type"], "ADDED");
    env.shutdown().await;
}

#[tokio::test]
async fn checks_42_49_delete() {
    let env = start().await;
    ns(&env, "t1").await;
    let d = req(
        &env,
        "POST",
        "/apis/apps/v1/namespaces/t1/deployments",
        Some(&deployment("web", json!({"app": "web"}))),
    )
    .await
    .json();
    let r = req(
        &env,
        "DELETE",
        "/apis/apps/v1/namespaces/t1/deployments/web",
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
        "/apis/apps/v1/namespaces/t1/deployments",
        Some(&deployment("web", json!({"app": "web"}))),
    )
    .await;
    let r = req(
        &env,
        "DELETE",
        "/apis/apps/v1/namespaces/t1/deployments/web",
        Some(&json!({"propagationPolicy": "Foreground"})),
    )
    .await
    .json();
    assert_eq!(r["kind"], "Deployment");
    assert!(r["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(r["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    assert_eq!(r["metadata"]["generation"], 2);

    let p = req(&env, "DELETE", "/api/v1/namespaces/t1/pods/none", None).await;
    assert_eq!(p.code, 404);
    req(
        &env,
        "POST",
        "/api/v1/namespaces/t1/pods",
        Some(&pod("u", "web")),
    )
    .await;
    let r = req(&env, "DELETE", "/api/v1/namespaces/t1/pods/u", None).await;
    assert_eq!((r.code, r.json()["kind"].clone()), (200, json!("Pod")));
    assert_eq!(
        req(&env, "GET", "/api/v1/namespaces/t1/pods/u", None)
            .await
            .code,
        404
    );
    let mut bound = pod("b", "web");
    bound["spec"]["nodeName"] = json!("n1");
    req(&env, "POST", "/api/v1/namespaces/t1/pods", Some(&bound)).await;
    let r = req(&env, "DELETE", "/api/v1/namespaces/t1/pods/b", None)
        .await
        .json();
    assert_eq!(r["metadata"]["deletionGracePeriodSeconds"], 30);
    assert!(r["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        req(&env, "GET", "/api/v1/namespaces/t1/pods/b", None)
            .await
            .code,
        200
    );
    let r = req(
        &env,
        "DELETE",
        "/api/v1/namespaces/t1/pods/b",
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
        "/api/v1/namespaces/t1/pods/b",
        Some(&json!({"gracePeriodSeconds": 0})),
    )
    .await;
    assert_eq!(
        req(&env, "GET", "/api/v1/namespaces/t1/pods/b", None)
            .await
            .code,
        404
    );

    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "f", "finalizers": ["example.com/x"]}});
    req(
        &env,
        "POST",
        "/apis/coordination.k8s.io/v1/namespaces/t1/leases",
        Some(&lease),
    )
    .await;
    let r = req(
        &env,
        "DELETE",
        "/apis/coordination.k8s.io/v1/namespaces/t1/leases/f",
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
        "/apis/coordination.k8s.io/v1/namespaces/t1/leases/f",
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
    let cur = env.resource_version();
    let mut w = Watch::open(&env, &format!("/apis/coordination.k8s.io/v1/namespaces/t1/leases?watch=true&resourceVersion={cur}&timeoutSeconds=30")).await;
    let mut rm = r.clone();
    rm["metadata"]["finalizers"] = json!([]);
    assert_eq!(
        req(
            &env,
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/t1/leases/f",
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
            "/apis/coordination.k8s.io/v1/namespaces/t1/leases/f",
            None
        )
        .await
        .code,
        404
    );
    let mut types = Vec::new();
    while types.last() != Some(&json!("DELETED")) {
        types.push(w.next().await.expect("event")["type"].clone());
    }

    ns(&env, "t2").await;
    req(
        &env,
        "POST",
        "/api/v1/namespaces/t2/pods",
        Some(&pod("x", "web")),
    )
    .await;
    let r = req(&env, "DELETE", "/api/v1/namespaces/t2", None)
        .await
        .json();
    assert_eq!(r["status"]["phase"], "Terminating");
    let r = req(
        &env,
        "POST",
        "/api/v1/namespaces/t2/pods",
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
    let mut gone = false;
    for _ in 0..200 {
        if req(&env, "GET", "/api/v1/namespaces/t2", None).await.code == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(gone);
    env.shutdown().await;
}

#[tokio::test]
async fn checks_50_54_patch_and_events() {
    let env = start().await;
    ns(&env, "t1").await;
    let p = req(
        &env,
        "POST",
        "/api/v1/namespaces/t1/pods",
        Some(&pod("p", "web")),
    )
    .await
    .json();
    let uid = p["metadata"]["uid"].as_str().expect("uid").to_string();
    let smp = "application/strategic-merge-patch+json";
    let owner = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "R", "controller": true, "blockOwnerDeletion": true});
    let r = patch(
        &env,
        "/api/v1/namespaces/t1/pods/p",
        smp,
        &json!({"metadata": {"ownerReferences": [owner], "uid": "WRONG"}}),
    )
    .await;
    assert_eq!(r.code, 409);
    let r = patch(
        &env,
        "/api/v1/namespaces/t1/pods/p",
        smp,
        &json!({"metadata": {"ownerReferences": [owner], "uid": uid}}),
    )
    .await;
    assert_eq!(r.json()["metadata"]["ownerReferences"][0]["uid"], "R");
    let other = json!({"apiVersion": "v1", "kind": "X", "name": "o", "uid": "O"});
    patch(
        &env,
        "/api/v1/namespaces/t1/pods/p",
        smp,
        &json!({"metadata": {"ownerReferences": [other]}}),
    )
    .await;
    let r = patch(
        &env,
        "/api/v1/namespaces/t1/pods/p",
        smp,
        &json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "R"}], "uid": uid}}),
    )
    .await
    .json();
    assert_eq!(
        r["metadata"]["ownerReferences"]
            .as_array()
            .map(|a| a.iter().map(|o| o["uid"].clone()).collect::<Vec<_>>()),
        Some(vec![json!("O")])
    );

    let mut d = deployment("web", json!({"app": "web"}));
    d["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "a", "image": "busybox:1"}, {"name": "b", "image": "busybox:1"}]);
    req(
        &env,
        "POST",
        "/apis/apps/v1/namespaces/t1/deployments",
        Some(&d),
    )
    .await;
    let r = patch(&env, "/apis/apps/v1/namespaces/t1/deployments/web", smp, &json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "b", "image": "busybox:2"}]}}}})).await.json();
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
        "/apis/apps/v1/namespaces/t1/deployments/web",
        smp,
        &json!({"spec": {"paused": true}}),
    )
    .await
    .json();
    let p2 = patch(
        &env,
        "/apis/apps/v1/namespaces/t1/deployments/web",
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
        "/apis/apps/v1/namespaces/t1/deployments/web",
        jp,
        &json!([{"op": "test", "path": "/spec/replicas", "value": 99}]),
    )
    .await;
    assert_eq!(r.code, 422);
    let tpl = p2["spec"]["template"].clone();
    // the controller always writes the revision annotation; replace needs an existing path
    patch(
        &env,
        "/apis/apps/v1/namespaces/t1/deployments/web",
        "application/merge-patch+json",
        &json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "1"}}}),
    )
    .await;
    let r = patch(&env, "/apis/apps/v1/namespaces/t1/deployments/web", jp, &json!([{"op": "replace", "path": "/spec/template", "value": tpl}, {"op": "replace", "path": "/metadata/annotations", "value": {"a": "b"}}])).await;
    assert_eq!(r.code, 200);
    let r = patch(
        &env,
        "/apis/apps/v1/namespaces/t1/deployments/web",
        "text/plain",
        &json!({}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["reason"].clone()),
        (415, json!("UnsupportedMediaType"))
    );

    let bad = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e0"}, "involvedObject": {"namespace": "other", "name": "web"}});
    let r = req(&env, "POST", "/api/v1/namespaces/t1/events", Some(&bad)).await;
    assert_eq!(
        (r.code, r.json()["details"]["causes"][0]["field"].clone()),
        (422, json!("involvedObject.namespace"))
    );
    let ev = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1"}, "involvedObject": {"kind": "Deployment", "namespace": "t1", "name": "web"}, "reason": "ScalingReplicaSet", "message": "m", "count": 1, "firstTimestamp": "2025-01-01T00:00:00Z", "type": "Normal"});
    assert_eq!(
        req(&env, "POST", "/api/v1/namespaces/t1/events", Some(&ev))
            .await
            .code,
        201
    );
    let mut ev2 = ev.clone();
    ev2["metadata"]["name"] = json!("other.1");
    ev2["involvedObject"]["name"] = json!("other");
    req(&env, "POST", "/api/v1/namespaces/t1/events", Some(&ev2)).await;
    let r = patch(
        &env,
        "/api/v1/namespaces/t1/events/web.1",
        smp,
        &json!({"count": 2}),
    )
    .await
    .json();
    assert_eq!(r["count"], 2);
    let l = req(&env, "GET", "/api/v1/namespaces/t1/events?fieldSelector=involvedObject.name%3Dweb,involvedObject.kind%3DDeployment", None).await.json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(1));
    let v1 = req(
        &env,
        "GET",
        "/apis/events.k8s.io/v1/namespaces/t1/events/web.1",
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
    env.shutdown().await;
}
