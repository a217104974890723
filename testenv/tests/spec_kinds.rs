//! Checks K1–K5: every built-in kind of v1.37 served from the generated table, decoded with its
//! schema from upstream's OpenAPI (`registry/builtin.rs`, `registry/schema/`), over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

mod common;

use common::server::Server;
use common::{patch, req};
use kcm_testenv::registry::RESOURCES;
use serde_json::{Value, json};

/// K1: legacy discovery lists every resource of the table, with its names, kind, scope,
/// verbs, short names, categories, storage version hash and subresources (on a real server: the
/// generated table is what kube-apiserver serves).
#[tokio::test]
async fn check_k1_every_builtin_resource_in_discovery() {
    let env = Server::start("kinds-discovery").await;
    let mut lists: Vec<(String, Value)> = Vec::new();
    for r in RESOURCES {
        let gv = r.api_version();
        if !lists.iter().any(|(g, _)| *g == gv) {
            let path = if r.group.is_empty() {
                "/api/v1".to_string()
            } else {
                format!("/apis/{gv}")
            };
            let list = req(&env, "GET", &path, None).await;
            assert_eq!(list.code, 200, "{path}");
            lists.push((gv.clone(), list.json()));
        }
        let list = &lists.iter().find(|(g, _)| *g == gv).expect("list").1;
        let entry = |name: &str| {
            list["resources"]
                .as_array()
                .and_then(|a| a.iter().find(|e| e["name"] == name).cloned())
                .unwrap_or_else(|| panic!("{gv} {name} missing from discovery"))
        };
        let e = entry(r.plural);
        let strs = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        };
        assert_eq!(e["singularName"], r.singular, "{gv} {}", r.plural);
        assert_eq!(e["kind"], r.kind, "{gv} {}", r.plural);
        assert_eq!(e["namespaced"], r.namespaced, "{gv} {}", r.plural);
        assert_eq!(strs(&e["verbs"]), r.verbs, "{gv} {}", r.plural);
        assert_eq!(strs(&e["shortNames"]), r.short_names, "{gv} {}", r.plural);
        assert_eq!(strs(&e["categories"]), r.categories, "{gv} {}", r.plural);
        for s in r.subresources {
            let e = entry(&format!("{}/{}", r.plural, s.name));
            assert_eq!(e["kind"], s.kind, "{gv} {}/{}", r.plural, s.name);
            assert_eq!(strs(&e["verbs"]), s.verbs, "{gv} {}/{}", r.plural, s.name);
        }
    }
    env.finish().await;
}

/// K2: a ConfigMap, Secret and Service through create, get, list, update, patch and delete:
/// decoded with their schema (zero values and `+default`s the Go types write, unknown fields
/// warned about or refused), and Go's decode errors for values of the wrong type.
#[tokio::test]
async fn check_k2_generic_kinds_round_trip() {
    let env = Server::start("kinds-generic").await;
    let ns = env.ns("k2").await;
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let r = req(
        &env,
        "POST",
        &cms,
        Some(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "cfg", "labels": {"app": "web"}},
                     "data": {"a": "1"}, "binaryData": {"b": "aGk="}, "unknownField": 1})),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.header("warning"),
        Some("299 - \"unknown field \\\"unknownField\\\"\"")
    );
    let cm = r.json();
    assert_eq!(cm["data"], json!({"a": "1"}));
    assert_eq!(cm["binaryData"], json!({"b": "aGk="}));
    assert!(cm.get("unknownField").is_none());
    assert_eq!(cm["metadata"]["uid"].as_str().map(str::len), Some(36));
    let got = req(&env, "GET", &format!("{cms}/cfg"), None).await;
    assert_eq!(
        (got.code, got.json()["data"].clone()),
        (200, json!({"a": "1"}))
    );
    let list = req(&env, "GET", &format!("{cms}?labelSelector=app%3Dweb"), None).await;
    assert_eq!(list.json()["kind"], "ConfigMapList");
    assert_eq!(list.json()["items"].as_array().map(Vec::len), Some(1));
    let mut upd = got.json();
    upd["data"]["a"] = json!("2");
    let r = req(&env, "PUT", &format!("{cms}/cfg"), Some(&upd)).await;
    assert_eq!((r.code, r.json()["data"]["a"].clone()), (200, json!("2")));
    let r = patch(
        &env,
        &format!("{cms}/cfg"),
        "application/merge-patch+json",
        &json!({"data": {"c": "3"}}),
    )
    .await;
    assert_eq!(r.json()["data"], json!({"a": "2", "c": "3"}));

    // Go's decode errors
    let cases = [
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}, "data": {"x": 5}}),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad", "labels": {"a": 1}}}),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
    ];
    for (body, want) in cases {
        let r = req(&env, "POST", &cms, Some(&body)).await;
        assert_eq!(
            (
                r.code,
                r.json()["reason"].clone(),
                r.json()["message"].clone()
            ),
            (400, json!("BadRequest"), json!(want))
        );
    }
    let r = req(
        &env,
        "POST",
        &format!("{cms}?fieldValidation=Strict"),
        Some(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s", "foo": 1}, "x": 2})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!(
                "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"metadata.foo\", unknown field \"x\""
            )
        )
    );

    // a Secret: base64 data checked and written padded
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    let r = req(
        &env,
        "POST",
        &secrets,
        Some(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad"}, "data": {"x": "!!!"}})),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            400,
            json!(
                "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0"
            )
        )
    );

    // a Service: the +default protocol and the status struct Go always writes
    let svcs = format!("/api/v1/namespaces/{ns}/services");
    let r = req(
        &env,
        "POST",
        &svcs,
        Some(&json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                     "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}})),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let svc = r.json();
    assert_eq!(svc["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], "http");
    assert_eq!(svc["status"], json!({"loadBalancer": {}}));
    let r = req(
        &env,
        "POST",
        &svcs,
        Some(
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "bad"},
                     "spec": {"ports": [{"port": "x"}]}}),
        ),
    )
    .await;
    assert_eq!(
        r.json()["message"],
        "Service in version \"v1\" cannot be handled as a Service: json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32"
    );

    let r = req(&env, "DELETE", &format!("{cms}/cfg"), None).await;
    assert_eq!(r.code, 200);
    assert!(env.wait_gone(&format!("{cms}/cfg"), 50).await);
    env.finish().await;
}

/// K3: verbs a resource's discovery entry does not list are refused as kube-apiserver refuses
/// them.
#[tokio::test]
async fn check_k3_verbs_not_served() {
    let env = Server::start("kinds-verbs").await;
    let ns = env.ns("k3").await;
    let method_not_allowed = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server does not allow this method on the requested resource",
        "reason": "MethodNotAllowed", "details": {}, "code": 405,
    });
    for (method, path) in [
        ("GET", format!("/api/v1/namespaces/{ns}/bindings")),
        ("DELETE", "/api/v1/namespaces".to_string()),
        (
            "GET",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews".to_string(),
        ),
    ] {
        let r = req(&env, method, &path, None).await;
        assert_eq!(r.json(), method_not_allowed, "{method} {path}");
    }
    let r = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{ns}/bindings/x"),
        None,
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            404,
            json!("the server could not find the requested resource")
        )
    );
    let r = req(&env, "GET", "/api/v1/componentstatuses?watch=1", None).await;
    assert_eq!(
        (
            r.code,
            r.json()["message"].clone(),
            r.json()["details"].clone()
        ),
        (
            405,
            json!("watch is not supported on resources of kind \"componentstatuses\""),
            json!({"kind": "componentstatuses"})
        )
    );
    env.finish().await;
}

/// K4: a HorizontalPodAutoscaler written as autoscaling/v1 is read as v2 and back (one object,
/// stored once, converted as upstream converts).
#[tokio::test]
async fn check_k4_hpa_in_two_versions() {
    let env = Server::start("kinds-hpa").await;
    let ns = env.ns("k4").await;
    let v1 = format!("/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers");
    let v2 = format!("/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers");
    let r = req(
        &env,
        "POST",
        &v1,
        Some(&json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                     "metadata": {"name": "h"},
                     "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                              "minReplicas": 1, "maxReplicas": 4, "targetCPUUtilizationPercentage": 60}})),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let h1 = r.json();
    assert_eq!(h1["apiVersion"], "autoscaling/v1");
    assert_eq!(h1["spec"]["targetCPUUtilizationPercentage"], 60);
    assert_eq!(
        h1["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
    let h2 = req(&env, "GET", &format!("{v2}/h"), None).await.json();
    assert_eq!(h2["apiVersion"], "autoscaling/v2");
    assert_eq!(
        h2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}}])
    );
    assert_eq!(h2["metadata"]["uid"], h1["metadata"]["uid"]);
    let l1 = req(&env, "GET", &v1, None).await.json();
    assert_eq!(l1["items"][0]["spec"]["targetCPUUtilizationPercentage"], 60);
    env.finish().await;
}

/// K5: generation and status separation of a kind without special code (an Ingress: nothing in
/// a test cluster writes its status): a create's status is dropped, generation 1; a spec change
/// moves the generation and keeps the status; a status write keeps the spec and the generation.
#[tokio::test]
async fn check_k5_generation_and_status_of_generic_kinds() {
    let env = Server::start("kinds-status").await;
    let ns = env.ns("k5").await;
    let ings = format!("/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses");
    let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
    let r = req(
        &env,
        "POST",
        &ings,
        Some(
            &json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                     "metadata": {"name": "i"}, "spec": {"defaultBackend": backend},
                     "status": {"loadBalancer": {"ingress": [{"ip": "10.9.9.9"}]}}}),
        ),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let i = r.json();
    assert_eq!(i["status"], json!({"loadBalancer": {}}));
    assert_eq!(i["metadata"]["generation"], 1);
    let path = format!("{ings}/i");
    let r = patch(
        &env,
        &path,
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    assert_eq!(r.json()["metadata"]["generation"], 1);
    let r = patch(
        &env,
        &path,
        "application/merge-patch+json",
        &json!({"spec": {"ingressClassName": "x"}, "status": {"loadBalancer": {"ingress": [{"ip": "10.1.1.1"}]}}}),
    )
    .await;
    let i = r.json();
    assert_eq!(
        (i["metadata"]["generation"].clone(), i["status"].clone()),
        (json!(2), json!({"loadBalancer": {}}))
    );
    let r = patch(
        &env,
        &format!("{path}/status"),
        "application/merge-patch+json",
        &json!({"spec": {"ingressClassName": "y"}, "status": {"loadBalancer": {"ingress": [{"ip": "10.1.1.1"}]}}}),
    )
    .await;
    let i = r.json();
    assert_eq!(i["spec"]["ingressClassName"], "x");
    assert_eq!(
        i["status"]["loadBalancer"]["ingress"],
        json!([{"ip": "10.1.1.1"}])
    );
    assert_eq!(i["metadata"]["generation"], 2);
    env.finish().await;
}

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
