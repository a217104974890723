//! Checks K1–K5: every built-in kind of v1.37 served from the generated table, decoded with its
//! schema from upstream's OpenAPI (`registry/builtin.rs`, `registry/schema/`), over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

use crate::common::server::Server;
use crate::common::{patch, req};
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
