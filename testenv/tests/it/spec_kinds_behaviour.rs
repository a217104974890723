//! Checks K6–K10: validation of the kinds served generically, the objects of a fresh cluster,
//! the kinds with behaviour (Services, ServiceAccounts and TokenRequest, the reviews), CSR
//! approval and eviction, `/scale`, field selectors and Tables, over real HTTP. They run on an
//! embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see testenv/README.md,
//! "Agreement with kube-apiserver v1.37.2"); K1–K5 are in `spec_kinds.rs`.

use crate::common;
use crate::common::server::Server;
use crate::common::{patch, req};
use serde_json::{Value, json};

/// K6: the validation a controller author trips over on kinds without special code: each
/// kind's name rule, selectors and their templates, restart policies, and the fields an update
/// may not change, with kube-apiserver's Status texts.
#[tokio::test]
async fn check_k6_validation_of_generic_kinds() {
    let env = Server::start("kinds-valid").await;
    let ns = env.ns("k6").await;
    let tmpl = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let invalid = |r: &common::Resp| {
        (
            r.code,
            r.json()["message"].as_str().unwrap_or("").to_string(),
        )
    };
    let r = req(
        &env,
        "POST",
        &format!("/apis/apps/v1/namespaces/{ns}/statefulsets"),
        Some(
            &json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s1"},
                     "spec": {"template": tmpl}}),
        ),
    )
    .await;
    assert_eq!(
        invalid(&r),
        (422, "StatefulSet.apps \"s1\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: `selector` does not match template `labels`]".to_string())
    );
    let r = req(
        &env,
        "POST",
        &format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles"),
        Some(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "a/b"}})),
    )
    .await;
    assert_eq!(
        invalid(&r),
        (422, "Role.rbac.authorization.k8s.io \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": may not contain '/'".to_string())
    );
    let long = "c".repeat(60);
    let r = req(
        &env,
        "POST",
        &format!("/apis/batch/v1/namespaces/{ns}/cronjobs"),
        Some(&json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": long},
                     "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                         "restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}}})),
    )
    .await;
    assert_eq!(
        invalid(&r),
        (
            422,
            format!(
                "CronJob.batch \"{long}\" is invalid: metadata.name: Invalid value: \"{long}\": must be no more than 52 characters"
            )
        )
    );
    let r = req(
        &env,
        "POST",
        &format!("/apis/batch/v1/namespaces/{ns}/jobs"),
        Some(&json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j1"}, "spec": {"template": tmpl}})),
    )
    .await;
    assert_eq!(
        invalid(&r),
        (422, "Job.batch \"j1\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"".to_string())
    );
    // immutable fields
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "im"},
                    "immutable": true, "data": {"a": "1"}});
    assert_eq!(req(&env, "POST", &cms, Some(&cm)).await.code, 201);
    let r = patch(
        &env,
        &format!("{cms}/im"),
        "application/merge-patch+json",
        &json!({"data": {"a": "2"}}),
    )
    .await;
    assert_eq!(
        invalid(&r),
        (422, "ConfigMap \"im\" is invalid: data: Forbidden: field is immutable when `immutable` is set".to_string())
    );
    let dss = format!("/apis/apps/v1/namespaces/{ns}/daemonsets");
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d1"},
                    "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": tmpl}});
    assert_eq!(req(&env, "POST", &dss, Some(&ds)).await.code, 201);
    let r = patch(
        &env,
        &format!("{dss}/d1"),
        "application/merge-patch+json",
        &json!({"spec": {"selector": {"matchLabels": {"a": "b", "c": "d"}},
                         "template": {"metadata": {"labels": {"a": "b", "c": "d"}}}}}),
    )
    .await;
    assert_eq!(
        invalid(&r),
        (422, "DaemonSet.apps \"d1\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\",\"c\":\"d\"}}: field is immutable".to_string())
    );
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    let s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}});
    let r = req(&env, "POST", &secrets, Some(&s)).await;
    assert_eq!(
        (r.code, r.json()["type"].clone(), r.json()["data"].clone()),
        (201, json!("Opaque"), json!({"k": "dg=="}))
    );
    let r = patch(
        &env,
        &format!("{secrets}/s"),
        "application/merge-patch+json",
        &json!({"type": "kubernetes.io/tls"}),
    )
    .await;
    assert_eq!(
        invalid(&r),
        (422, "Secret \"s\" is invalid: [type: Invalid value: \"kubernetes.io/tls\": field is immutable, data[tls.crt]: Required value, data[tls.key]: Required value]".to_string())
    );
    env.finish().await;
}

/// K7: the objects a fresh cluster has: `default/kubernetes` (cluster IP 10.0.0.1, port 443),
/// a `default` ServiceAccount and a `kube-root-ca.crt` ConfigMap in every namespace, the local
/// APIServices, the bootstrap ClusterRoles, and componentstatuses.
#[tokio::test]
async fn check_k7_objects_of_a_fresh_cluster() {
    let env = Server::start("kinds-fresh").await;
    let ns = env.ns("k7").await;
    let svc = req(
        &env,
        "GET",
        "/api/v1/namespaces/default/services/kubernetes",
        None,
    )
    .await
    .json();
    assert_eq!(svc["spec"]["clusterIP"], "10.0.0.1");
    assert_eq!(
        (
            svc["spec"]["ports"][0]["name"].clone(),
            svc["spec"]["ports"][0]["port"].clone()
        ),
        (json!("https"), json!(443))
    );
    assert_eq!(
        svc["metadata"]["labels"],
        json!({"component": "apiserver", "provider": "kubernetes"})
    );
    // the namespace's own objects appear (at once on testenv, soon on a real cluster)
    let sa = format!("/api/v1/namespaces/{ns}/serviceaccounts/default");
    let ca = format!("/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt");
    let mut found = (0, 0);
    for _ in 0..100 {
        found = (
            req(&env, "GET", &sa, None).await.code,
            req(&env, "GET", &ca, None).await.code,
        );
        if found == (200, 200) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(found, (200, 200));
    let ca = req(&env, "GET", &ca, None).await.json();
    assert!(
        ca["data"]["ca.crt"]
            .as_str()
            .is_some_and(|c| c.starts_with("-----BEGIN CERTIFICATE-----"))
    );
    assert!(ca["metadata"]["annotations"]["kubernetes.io/description"].is_string());
    let apps = req(
        &env,
        "GET",
        "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps",
        None,
    )
    .await
    .json();
    assert_eq!(apps["spec"]["group"], "apps");
    assert_eq!(apps["status"]["conditions"][0]["reason"], "Local");
    let admin = req(
        &env,
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin",
        None,
    )
    .await
    .json();
    assert_eq!(
        admin["rules"],
        json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
               {"nonResourceURLs": ["*"], "verbs": ["*"]}])
    );
    let cs = req(&env, "GET", "/api/v1/componentstatuses", None)
        .await
        .json();
    assert_eq!(cs["kind"], "ComponentStatusList");
    // (kube-apiserver probes the components at once: their order varies there)
    let mut names: Vec<&str> = cs["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["metadata"]["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["controller-manager", "etcd-0", "scheduler"]);
    env.finish().await;
}

/// K8: the kinds with behaviour: a TokenRequest's JWT claims, Service cluster IPs and node
/// ports (allocated, kept, immutable), a CSR's approval, a SelfSubjectAccessReview, and an
/// eviction.
#[tokio::test]
async fn check_k8_kinds_with_behaviour() {
    use base64::Engine;
    let env = Server::start("kinds-behave").await;
    let ns = env.ns("k8").await;
    // a token for the default ServiceAccount
    let r = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{ns}/serviceaccounts/default/token"),
        Some(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
        ),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let tr = r.json();
    assert_eq!(tr["spec"]["expirationSeconds"], 3600);
    assert_eq!(
        tr["spec"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let token = tr["status"]["token"].as_str().expect("token");
    let claims: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token.split('.').nth(1).expect("payload"))
            .expect("base64"),
    )
    .expect("claims");
    assert_eq!(claims["sub"], format!("system:serviceaccount:{ns}:default"));
    assert_eq!(
        claims["iss"],
        "https://kubernetes.default.svc.cluster.local"
    );
    assert_eq!(claims["kubernetes.io"]["serviceaccount"]["name"], "default");
    assert_eq!(
        claims["exp"]
            .as_i64()
            .zip(claims["iat"].as_i64())
            .map(|(e, i)| e - i),
        Some(3600)
    );
    let r = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{ns}/serviceaccounts/default/token"),
        Some(&json!({"spec": {"expirationSeconds": 100}})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(
                "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 10 minutes"
            )
        )
    );
    // Services
    let svcs = format!("/api/v1/namespaces/{ns}/services");
    let r = req(
        &env,
        "POST",
        &svcs,
        Some(
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np"},
                     "spec": {"type": "NodePort", "ports": [{"port": 80}]}}),
        ),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let s = r.json();
    let ip = s["spec"]["clusterIP"]
        .as_str()
        .expect("cluster IP")
        .to_string();
    assert!(ip.starts_with("10.0.0."), "{ip}");
    assert_eq!(s["spec"]["clusterIPs"], json!([ip]));
    assert_eq!(
        (
            s["spec"]["ipFamilies"].clone(),
            s["spec"]["ipFamilyPolicy"].clone()
        ),
        (json!(["IPv4"]), json!("SingleStack"))
    );
    let node_port = s["spec"]["ports"][0]["nodePort"]
        .as_i64()
        .expect("node port");
    assert!((30000..=32767).contains(&node_port));
    assert_eq!(s["spec"]["externalTrafficPolicy"], "Cluster");
    let r = patch(
        &env,
        &format!("{svcs}/np"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    assert_eq!(r.json()["spec"]["clusterIP"], json!(ip));
    assert_eq!(r.json()["spec"]["ports"][0]["nodePort"], node_port);
    let r = patch(
        &env,
        &format!("{svcs}/np"),
        "application/merge-patch+json",
        &json!({"spec": {"clusterIP": "10.0.0.99", "clusterIPs": ["10.0.0.99"]}}),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(
                "Service \"np\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.0.0.99\"]: may not change once set"
            )
        )
    );
    let r = req(
        &env,
        "POST",
        &svcs,
        Some(
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "headless"},
                     "spec": {"clusterIP": "None", "selector": {"a": "b"}}}),
        ),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["spec"]["clusterIPs"].clone()),
        (201, json!(["None"]))
    );
    let r = req(
        &env,
        "POST",
        &svcs,
        Some(&json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "noports"}, "spec": {}})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!("Service \"noports\" is invalid: spec.ports: Required value")
        )
    );
    // a SelfSubjectAccessReview
    let r = req(
        &env,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        Some(&json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                     "spec": {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": ns}}})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["status"]["allowed"].clone()),
        (201, json!(true))
    );
    env.finish().await;
}

/// K9: a CertificateSigningRequest approved through `/approval` (as kube-rs's own test does),
/// and a pod evicted through `pods/eviction`.
#[tokio::test]
async fn check_k9_csr_approval_and_eviction() {
    let env = Server::start("kinds-csr").await;
    let ns = env.ns("k9").await;
    let name = format!("{ns}-csr");
    // kube-rs's csr_can_be_approved request (a CSR for CN "angela")
    let request = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlJQ1ZqQ0NBVDRDQVFBd0VURVBNQTBHQTFVRUF3d0dZVzVuWld4aE1JSUJJakFOQmdrcWhraUc5dzBCQVFFRgpBQU9DQVE4QU1JSUJDZ0tDQVFFQTByczhJTHRHdTYxakx2dHhWTTJSVlRWMDNHWlJTWWw0dWluVWo4RElaWjBOCnR2MUZtRVFSd3VoaUZsOFEzcWl0Qm0wMUFSMkNJVXBGd2ZzSjZ4MXF3ckJzVkhZbGlBNVhwRVpZM3ExcGswSDQKM3Z3aGJlK1o2MVNrVHF5SVBYUUwrTWM5T1Nsbm0xb0R2N0NtSkZNMUlMRVI3QTVGZnZKOEdFRjJ6dHBoaUlFMwpub1dtdHNZb3JuT2wzc2lHQ2ZGZzR4Zmd4eW8ybmlneFNVekl1bXNnVm9PM2ttT0x1RVF6cXpkakJ3TFJXbWlECklmMXBMWnoyalVnald4UkhCM1gyWnVVV1d1T09PZnpXM01LaE8ybHEvZi9DdS8wYk83c0x0MCt3U2ZMSU91TFcKcW90blZtRmxMMytqTy82WDNDKzBERHk5aUtwbXJjVDBnWGZLemE1dHJRSURBUUFCb0FBd0RRWUpLb1pJaHZjTgpBUUVMQlFBRGdnRUJBR05WdmVIOGR4ZzNvK21VeVRkbmFjVmQ1N24zSkExdnZEU1JWREkyQTZ1eXN3ZFp1L1BVCkkwZXpZWFV0RVNnSk1IRmQycVVNMjNuNVJsSXJ3R0xuUXFISUh5VStWWHhsdnZsRnpNOVpEWllSTmU3QlJvYXgKQVlEdUI5STZXT3FYbkFvczFqRmxNUG5NbFpqdU5kSGxpT1BjTU1oNndLaTZzZFhpVStHYTJ2RUVLY01jSVUyRgpvU2djUWdMYTk0aEpacGk3ZnNMdm1OQUxoT045UHdNMGM1dVJVejV4T0dGMUtCbWRSeEgvbUNOS2JKYjFRQm1HCkkwYitEUEdaTktXTU0xMzhIQXdoV0tkNjVoVHdYOWl4V3ZHMkh4TG1WQzg0L1BHT0tWQW9FNkpsYWFHdTlQVmkKdjlOSjVaZlZrcXdCd0hKbzZXdk9xVlA3SVFjZmg3d0drWm89Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";
    let csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    let r = req(
        &env,
        "POST",
        csrs,
        Some(&json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                     "metadata": {"name": name},
                     "spec": {"request": request, "signerName": "kubernetes.io/kube-apiserver-client",
                              "expirationSeconds": 86400, "usages": ["client auth"]}})),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["status"], json!({}));
    assert!(r.json()["spec"]["username"].is_string());
    let r = patch(
        &env,
        &format!("{csrs}/{name}/approval"),
        "application/merge-patch+json",
        &json!({"status": {"conditions": [{"type": "ApprovedFake", "status": "True",
                 "reason": "kube-rsClient", "message": "ApprovedFake by kube-rs client"}]}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    let got = req(&env, "GET", &format!("{csrs}/{name}/approval"), None)
        .await
        .json();
    assert_eq!(got["status"]["conditions"][0]["type"], "ApprovedFake");
    assert_eq!(
        req(&env, "DELETE", &format!("{csrs}/{name}"), None)
            .await
            .code,
        200
    );
    // an eviction of a pod no budget covers
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    assert_eq!(
        req(&env, "POST", &pods, Some(&common::spec::pod("e", "web")))
            .await
            .code,
        201
    );
    let r = req(
        &env,
        "POST",
        &format!("{pods}/e/eviction"),
        Some(&json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "e"}})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["status"].clone()),
        (201, json!("Success"))
    );
    assert!(env.wait_gone(&format!("{pods}/e"), 50).await);
    env.finish().await;
}

/// K10: a StatefulSet's and a ReplicationController's `/scale`, field selectors beyond name
/// and namespace (a Secret's `type`, a Service's `spec.type`), and the Table of Services.
#[tokio::test]
async fn check_k10_scale_field_selectors_and_tables() {
    let env = Server::start("kinds-scale").await;
    let ns = env.ns("k10").await;
    let tmpl = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let sss = format!("/apis/apps/v1/namespaces/{ns}/statefulsets");
    let ss = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                    "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}}, "template": tmpl}});
    assert_eq!(req(&env, "POST", &sss, Some(&ss)).await.code, 201);
    let scale = req(&env, "GET", &format!("{sss}/s/scale"), None)
        .await
        .json();
    assert_eq!(
        (
            scale["kind"].clone(),
            scale["spec"]["replicas"].clone(),
            scale["status"]["selector"].clone()
        ),
        (json!("Scale"), Value::Null, json!("a=b"))
    );
    let rcs = format!("/api/v1/namespaces/{ns}/replicationcontrollers");
    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "r"},
                    "spec": {"replicas": 0, "selector": {"a": "b"}, "template": tmpl}});
    assert_eq!(req(&env, "POST", &rcs, Some(&rc)).await.code, 201);
    let scale = req(&env, "GET", &format!("{rcs}/r/scale"), None)
        .await
        .json();
    assert_eq!(scale["status"]["selector"], "a=b");
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    for (name, ty) in [("plain", "Opaque"), ("auth", "kubernetes.io/basic-auth")] {
        let s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                       "type": ty, "stringData": {"username": "u"}});
        assert_eq!(req(&env, "POST", &secrets, Some(&s)).await.code, 201);
    }
    let l = req(
        &env,
        "GET",
        &format!("{secrets}?fieldSelector=type%3Dkubernetes.io%2Fbasic-auth"),
        None,
    )
    .await
    .json();
    let names: Vec<&str> = l["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["auth"]);
    let r = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{ns}/configmaps?fieldSelector=type%3Dx"),
        None,
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!(
                "\"type\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )
        )
    );
    let t = common::request_full(
        &env,
        "GET",
        "/api/v1/namespaces/default/services?fieldSelector=metadata.name%3Dkubernetes",
        "application/json",
        "application/json;as=Table;v=v1;g=meta.k8s.io",
        b"",
    )
    .await
    .json();
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        cols,
        [
            "Name",
            "Type",
            "Cluster-IP",
            "External-IP",
            "Port(s)",
            "Age",
            "Selector"
        ]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(
        (
            cells[0].clone(),
            cells[1].clone(),
            cells[2].clone(),
            cells[3].clone(),
            cells[4].clone()
        ),
        (
            json!("kubernetes"),
            json!("ClusterIP"),
            json!("10.0.0.1"),
            json!("<none>"),
            json!("443/TCP")
        )
    );
    env.finish().await;
}
