//! What a request nobody serves gets: go-restful's 405 and 406 for built-in endpoints, the CRD
//! handler's 405 for custom resources, apiserver's 406 and 415 from negotiation (upstream
//! `github.com/emicklei/go-restful/v3/jsr311.go`,
//! staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/). On an embedded TestEnv,
//! or on a real kube-apiserver with `KCM_SPEC_SERVER` (testenv/README.md). kcm-testenv also logs
//! each of them (tests/it/loud_failures.rs).

use crate::common::crd::{install, namespaced_widgets, wait_for};
use crate::common::request_full;
use crate::common::server::Server;
use serde_json::{Value, json};

async fn send(
    env: &Server,
    method: &str,
    path: &str,
    ct: &str,
    accept: &str,
    body: &[u8],
) -> (u16, Value) {
    let r = request_full(env, method, path, ct, accept, body).await;
    let v = if r.header("content-type") == Some("application/yaml") {
        serde_yaml::from_slice(&r.body).expect("yaml")
    } else {
        r.json()
    };
    (r.code, v)
}

fn status(v: &Value) -> (Value, Value, Value) {
    (
        v["reason"].clone(),
        v["message"].clone(),
        v.get("details").cloned().unwrap_or(Value::Null),
    )
}

const REPRESENTATIONS: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf";

#[tokio::test]
async fn unserved_requests_answer_as_kube_apiserver() {
    let env = Server::start("unserved").await;
    let ns = env.ns("u").await;
    let pods = format!("/api/v1/namespaces/{ns}/pods");

    // go-restful: no Accept clause names a type the route produces
    let collection = format!(
        "406: Not Acceptable\n\nAvailable representations: {REPRESENTATIONS}, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    );
    for accept in ["text/html", "application/*"] {
        let (code, v) = send(&env, "GET", &pods, "application/json", accept, b"").await;
        assert_eq!(
            (code, status(&v)),
            (406, (json!("NotAcceptable"), json!(collection), json!({}))),
            "{accept}"
        );
    }
    let (code, v) = send(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{ns}"),
        "application/json",
        "text/html",
        b"",
    )
    .await;
    assert_eq!(
        (code, status(&v)),
        (
            406,
            (
                json!("NotAcceptable"),
                json!(format!(
                    "406: Not Acceptable\n\nAvailable representations: {REPRESENTATIONS}"
                )),
                json!({})
            )
        )
    );
    // apiserver's negotiation: a media type without a stream serializer for a watch
    let (code, v) = send(
        &env,
        "GET",
        &format!("{pods}?watch=1&timeoutSeconds=1"),
        "application/json",
        "application/yaml",
        b"",
    )
    .await;
    assert_eq!(
        (code, status(&v)),
        (
            406,
            (
                json!("NotAcceptable"),
                json!(
                    "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
                ),
                Value::Null
            )
        )
    );

    // verbs a path does not serve
    let not_allowed = (
        json!("MethodNotAllowed"),
        json!("the server does not allow this method on the requested resource"),
        json!({}),
    );
    for (method, path) in [
        ("DELETE", "/api/v1/namespaces".to_string()),
        ("PUT", pods.clone()),
        ("DELETE", format!("{pods}/p/status")),
        (
            "POST",
            format!("/apis/apps/v1/namespaces/{ns}/deployments/d/scale"),
        ),
        ("GET", format!("{pods}/p/binding")),
    ] {
        let (code, v) = send(
            &env,
            method,
            &path,
            "application/json",
            "application/json",
            b"{}",
        )
        .await;
        assert_eq!(
            (code, status(&v)),
            (405, not_allowed.clone()),
            "{method} {path}"
        );
    }

    // a body no serializer reads
    let (code, v) = send(
        &env,
        "POST",
        &format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"),
        "text/plain",
        "application/json",
        br#"{"metadata":{"name":"l"}}"#,
    )
    .await;
    assert_eq!(
        (code, status(&v)),
        (
            415,
            (
                json!("UnsupportedMediaType"),
                json!(format!(
                    "the body of the request was in an unknown format - accepted media types include: {REPRESENTATIONS}"
                )),
                Value::Null
            )
        )
    );

    // a custom resource's handler names the verb and the resource
    let group = env.group("w");
    install(&env, &namespaced_widgets(&group)).await;
    let widgets = format!("/apis/{group}/v1/namespaces/{ns}/widgets");
    wait_for(&env, &widgets, |_| true).await;
    let (code, v) = send(
        &env,
        "DELETE",
        &format!("{widgets}/w/status"),
        "application/json",
        "application/json",
        b"",
    )
    .await;
    assert_eq!(
        (code, status(&v)),
        (
            405,
            (
                json!("MethodNotAllowed"),
                json!(format!(
                    "delete is not supported on resources of kind \"widgets.{group}\""
                )),
                json!({"group": group, "kind": "widgets"})
            )
        )
    );
    // and negotiates without go-restful
    let (code, v) = send(&env, "GET", &widgets, "application/json", "text/html", b"").await;
    assert_eq!(
        (code, status(&v)),
        (
            406,
            (
                json!("NotAcceptable"),
                json!(format!(
                    "only the following media types are accepted: {REPRESENTATIONS}"
                )),
                Value::Null
            )
        )
    );
    env.finish().await;
}
