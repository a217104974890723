//! The resources kube-apiserver serves without storing them: the authentication and
//! authorization reviews, core `bindings`, and `componentstatuses`.
//!
//! kcm-testenv authenticates only the tokens it signed (for its audit log; every other request
//! is `system:anonymous`), the reviews answer as for `system:anonymous`, and it authorizes
//! everything: a SubjectAccessReview of any kind is allowed, the rules of
//! a SelfSubjectRulesReview are everything. TokenReviews check the tokens this server signed
//! ([`tokens`]). Upstream: `pkg/registry/authentication`,
//! `pkg/registry/authorization`, `pkg/registry/core/pod/storage` (bindings),
//! `pkg/registry/core/componentstatus`.

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use http::Response;
use serde_json::{Value, json};

use super::http::{Body, Ctx, parse_body, value_response};
use super::routes::Target;
use super::server::ApiServer;
use super::{scale, tokens};
use crate::registry::api_status::{ApiError, ApiResult};
use crate::registry::kind_strategy::{REQUEST_GROUPS, REQUEST_USER};
use crate::registry::{find, meta};

/// `POST` on a resource that is not stored.
pub fn create(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    match (t.res.group, t.res.plural) {
        ("authentication.k8s.io", "tokenreviews") => tokens::token_review(srv, ctx),
        ("authentication.k8s.io", "selfsubjectreviews") => Ok(value_response(
            201,
            &json!({
                "kind": "SelfSubjectReview",
                "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": meta::now_rfc3339()},
                "status": {"userInfo": {"username": REQUEST_USER, "groups": REQUEST_GROUPS}},
            }),
        )),
        ("authorization.k8s.io", "selfsubjectrulesreviews") => {
            let mut review = parse_body(ctx)?;
            review["metadata"] = json!({"creationTimestamp": null});
            review["status"] = json!({
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": false,
            });
            Ok(value_response(201, &review))
        }
        ("authorization.k8s.io", _) => {
            let mut review = parse_body(ctx)?;
            if t.res.namespaced {
                let ns = t.namespace.as_deref().unwrap_or("");
                let asked = meta::at(&review, &["spec", "resourceAttributes", "namespace"])
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if asked != ns {
                    return Err(ApiError::bad_request(format!(
                        "spec.resourceAttributes.namespace must match namespace: {ns}"
                    )));
                }
            }
            review["metadata"] = json!({"creationTimestamp": null});
            review["status"] = json!({"allowed": true});
            Ok(value_response(201, &review))
        }
        ("", "bindings") => {
            let body = parse_body(ctx)?;
            let pods = find("", "v1", "pods").ok_or_else(|| ApiError::internal("no pods"))?;
            let pod = Target {
                res: pods,
                namespace: t.namespace.clone(),
                name: Some(meta::name_of(&body).to_string()),
                sub: Some("binding".into()),
            };
            scale::binding(srv, &pod, ctx)
        }
        _ => Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))),
    }
}

/// The health of one component as kube-apiserver reports it: its `/healthz` port answers
/// (`etcd-0`: kcm-testenv's storage, always healthy).
fn component(name: &str, port: Option<u16>) -> Value {
    let (status, message) = match port {
        None => ("True", "ok".to_string()),
        Some(p) => {
            let addr = SocketAddr::from(([127, 0, 0, 1], p));
            match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                Ok(_) => ("True", "ok".to_string()),
                Err(_) => (
                    "False",
                    format!(
                        "Get \"https://127.0.0.1:{p}/healthz\": dial tcp 127.0.0.1:{p}: connect: connection refused"
                    ),
                ),
            }
        }
    };
    json!({"metadata": {"name": name}, "conditions": [{"type": "Healthy", "status": status, "message": message}]})
}

const COMPONENTS: &[(&str, Option<u16>)] = &[
    ("controller-manager", Some(10257)),
    ("scheduler", Some(10259)),
    ("etcd-0", None),
];

/// `GET componentstatuses` (list) or `componentstatuses/<name>`.
pub fn component_statuses(t: &Target) -> ApiResult<Response<Body>> {
    match t.name.as_deref() {
        None => {
            let items: Vec<Value> = COMPONENTS.iter().map(|(n, p)| component(n, *p)).collect();
            Ok(value_response(
                200,
                &json!({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items}),
            ))
        }
        Some(name) => {
            let (n, p) = COMPONENTS
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| ApiError::not_found_kind("componentstatus", name))?;
            let mut c = component(n, *p);
            c["kind"] = json!("ComponentStatus");
            c["apiVersion"] = json!("v1");
            Ok(value_response(200, &c))
        }
    }
}
