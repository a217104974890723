//! Serving the [`ApiServer`] over HTTP: the hyper accept loop, then per request the hook, the
//! body, the route, the handler of the verb, and the request counters.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;

use super::hook::{HookDecision, RequestInfo};
use super::http::{
    Body, Ctx, error_response, json_response, text_response, value_response, with_warnings,
};
use super::routes::{self, Route, Target};
use super::server::ApiServer;
use super::{
    apply, audit, crd_controller, delete, discovery, handlers, list, metrics, protobuf, scale,
    table, watch,
};
use crate::registry::StorageId;
use crate::registry::api_status::{ApiError, ApiResult};

fn verb_of(method: &Method, route: &Route, query: &HashMap<String, String>) -> &'static str {
    let Route::Resource(t) = route else {
        return match *method {
            Method::GET => "get",
            _ => "other",
        };
    };
    let item = t.name.is_some();
    match *method {
        Method::GET
            if !item && matches!(query.get("watch").map(String::as_str), Some("true" | "1")) =>
        {
            "watch"
        }
        Method::GET if !item => "list",
        Method::GET => "get",
        Method::POST if !item || t.sub.is_some() => "create",
        Method::PUT if item => "update",
        Method::PATCH if item => "patch",
        Method::DELETE if item => "delete",
        Method::DELETE => "deletecollection",
        _ => "other",
    }
}

fn acceptable(accept: &str) -> bool {
    if accept.is_empty() {
        return true;
    }
    accept.split(',').any(|a| {
        let t = a.split(';').next().unwrap_or("").trim();
        matches!(
            t,
            "application/json" | "*/*" | "application/*" | "application/yaml" | ""
        ) || t.starts_with("application/json")
    })
}

impl ApiServer {
    /// Serve one request.
    pub async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        let query = routes::parse_query(req.uri().query());
        let route = routes::parse(&path, &self.crds);
        let verb = verb_of(&method, &route, &query);
        let (resource, sub, namespace, name) = match &route {
            Route::Resource(t) => (
                t.res.plural,
                t.sub.clone(),
                t.namespace.clone(),
                t.name.clone(),
            ),
            _ => ("", None, None, None),
        };
        let user_agent = req
            .headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let client = metrics::client_name(&user_agent);
        // Writes to resources go to the audit log once answered.
        let audited =
            self.audit.is_some() && !resource.is_empty() && audit::AUDITED_VERBS.contains(&verb);
        let received = audited.then(audit::timestamp);
        let request_uri = req
            .uri()
            .path_and_query()
            .map_or_else(|| path.clone(), |pq| pq.to_string());
        let audit = |code: u16| {
            if let (Some(log), Some(received)) = (&self.audit, &received) {
                log.record(&audit::AuditEntry {
                    verb,
                    request_uri: &request_uri,
                    user_agent: &user_agent,
                    resource,
                    subresource: sub.as_deref(),
                    namespace: namespace.as_deref(),
                    name: name.as_deref(),
                    code,
                    received,
                });
            }
        };
        let hook = self.hook.read().clone();
        if let Some(h) = hook {
            let info = RequestInfo {
                verb,
                resource,
                subresource: sub.clone(),
                namespace: namespace.clone(),
                name: name.clone(),
                path: path.clone(),
            };
            match h.before(&info) {
                HookDecision::Continue => {}
                HookDecision::Delay(d) => tokio::time::sleep(d).await,
                HookDecision::Fail { error, retry_after } => {
                    let mut r = error_response(&error);
                    if let Some(s) = retry_after
                        && let Ok(v) = HeaderValue::from_str(&s.to_string())
                    {
                        r.headers_mut().insert(header::RETRY_AFTER, v);
                    }
                    if !resource.is_empty() {
                        let sub_s = sub.as_deref().unwrap_or("");
                        self.metrics
                            .record(&client, verb, resource, sub_s, error.code);
                    }
                    audit(error.code);
                    return r;
                }
            }
        }
        let header_str = |h: header::HeaderName| {
            req.headers()
                .get(h)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let accept = header_str(header::ACCEPT);
        let content_type = header_str(header::CONTENT_TYPE);
        let body = match req.into_body().collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) => return error_response(&ApiError::bad_request(format!("reading body: {e}"))),
        };
        let ctx = Ctx {
            query,
            accept,
            content_type,
            body,
            user_agent: user_agent.clone(),
        };
        let metric_res = if resource.is_empty() { "" } else { resource };
        let resp = self.clone().route(&method, route, verb, ctx).await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) => error_response(&e),
        };
        if !metric_res.is_empty() {
            let sub_s = sub.as_deref().unwrap_or("");
            self.metrics
                .record(&client, verb, metric_res, sub_s, resp.status().as_u16());
        }
        audit(resp.status().as_u16());
        resp
    }

    async fn route(
        self: Arc<Self>,
        method: &Method,
        route: Route,
        verb: &'static str,
        ctx: Ctx,
    ) -> ApiResult<Response<Body>> {
        if !acceptable(&ctx.accept)
            && !matches!(
                route,
                Route::OpenApiV2
                    | Route::OpenApiV3
                    | Route::Metrics
                    | Route::Health
                    | Route::NoHandler
            )
        {
            return Err(ApiError::new(
                406,
                "NotAcceptable",
                format!(
                    "only the following media types are accepted: application/json, application/yaml (got {})",
                    ctx.accept
                ),
            ));
        }
        match route {
            Route::Version => Ok(value_response(200, &discovery::version())),
            Route::Health => Ok(text_response(200, "text/plain; charset=utf-8", "ok")),
            Route::Metrics => {
                let mut text = self.metrics.render_prometheus();
                if let Some(hook) = self.hook.read().as_ref() {
                    text.push_str(&hook.metrics_text());
                }
                let mut r = json_response(200, text);
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                );
                Ok(r)
            }
            Route::Api => Ok(value_response(200, &discovery::api_versions(&self.addr))),
            Route::Apis => Ok(value_response(200, &discovery::api_group_list(&self.crds))),
            Route::ApiGroup(g) => Ok(value_response(200, &discovery::api_group(&self.crds, &g))),
            Route::ResourceList(g, v) => Ok(value_response(
                200,
                &discovery::resource_list(&self.crds, &g, &v),
            )),
            Route::OpenApiV2 => Ok(discovery::openapi_v2(&ctx.accept)),
            Route::OpenApiV3 => Err(ApiError::path_not_found()),
            Route::NotFound => Err(ApiError::path_not_found()),
            Route::NoHandler => Ok(text_response(
                404,
                "text/plain; charset=utf-8",
                "404 page not found\n",
            )),
            Route::Resource(t) => self.resource(method, t, verb, ctx).await,
        }
    }

    async fn resource(
        self: Arc<Self>,
        method: &Method,
        t: Target,
        verb: &'static str,
        mut ctx: Ctx,
    ) -> ApiResult<Response<Body>> {
        if matches!(*method, Method::POST | Method::PUT | Method::DELETE) {
            let ct = ctx.content_type.to_ascii_lowercase();
            // A DELETE may come without DeleteOptions (nothing to decode).
            let bodiless_delete = *method == Method::DELETE && ctx.body.is_empty();
            if ct.starts_with("application/vnd.kubernetes.protobuf") && !bodiless_delete {
                // kubectl's imperative creates (`kubectl create deployment`, `create namespace`)
                // and kube-controller-manager (objects, DeleteOptions) send protobuf; decode it
                // to the JSON the rest of the server works on.
                let json = protobuf::decode_body(&ctx.body).map_err(|e| {
                    let mut err = ApiError::unsupported_media_type(&ctx.content_type);
                    err.message = format!("{}: {e}", err.message);
                    err
                })?;
                ctx.body = Bytes::from(json.to_string());
                ctx.content_type = "application/json".to_string();
            } else if ct.contains("protobuf") || ct.contains("cbor") {
                return Err(ApiError::unsupported_media_type(&ctx.content_type));
            }
        }
        let res = t.res;
        let result = self.clone().serve(method, t, verb, ctx).await;
        if res.storage == StorageId::CUSTOMRESOURCEDEFINITIONS
            && result.is_ok()
            && matches!(
                verb,
                "create" | "update" | "patch" | "delete" | "deletecollection"
            )
        {
            crd_controller::reconcile(&self);
        }
        // a deprecated custom resource version warns on every request, failed ones too
        match (result, res.custom.and_then(|c| c.warning.as_ref())) {
            (Ok(r), Some(w)) => Ok(with_warnings(r, std::slice::from_ref(w))),
            (Err(e), Some(w)) => Ok(with_warnings(error_response(&e), std::slice::from_ref(w))),
            (r, None) => r,
        }
    }

    async fn serve(
        self: Arc<Self>,
        method: &Method,
        t: Target,
        verb: &'static str,
        ctx: Ctx,
    ) -> ApiResult<Response<Body>> {
        let sub = t.sub.clone();
        if let Some(s) = sub.as_deref()
            && !t.res.has_subresource(s)
        {
            return Err(ApiError::not_found(t.res, t.name.as_deref().unwrap_or("")));
        }
        // (a custom resource serves every verb; a terminating CRD's discovery lists fewer)
        if sub.is_none() && !t.res.is_custom() {
            verb_served(&t, verb)?;
        }
        match (verb, sub.as_deref()) {
            ("list", None) => {
                if ctx.wants_table() {
                    table::list(&self, &t, &ctx)
                } else {
                    list::list(&self, &t, &ctx)
                }
            }
            ("watch", None) => watch::watch(self.clone(), &t, &ctx),
            ("get", None) => handlers::get(&self, &t, &ctx),
            ("create", None) => handlers::create(&self, &t, &ctx),
            ("update", None | Some("status" | "finalize")) => handlers::update(&self, &t, &ctx),
            ("patch", None | Some("status")) if apply::is_apply(&ctx) => {
                apply::patch(&self, &t, &ctx)
            }
            ("patch", None | Some("status")) => handlers::patch(&self, &t, &ctx),
            ("delete", None) => delete::delete(&self, &t, &ctx),
            ("deletecollection", None) => delete::delete_collection(&self, &t, &ctx),
            ("get", Some("status")) => handlers::get(&self, &t, &ctx),
            ("get" | "update" | "patch", Some("scale")) => scale::scale(&self, &t, verb, &ctx),
            ("create", Some("binding")) => scale::binding(&self, &t, &ctx),
            _ => Err(ApiError::method_not_allowed(method.as_str())),
        }
    }
}

/// A verb the resource's discovery entry does not list is refused as kube-apiserver refuses it:
/// no item routes at all for a resource served only by collection verbs (`bindings`, the
/// reviews), a watch of a resource that is only listed (`componentstatuses`) named as such, any
/// other verb a 405 from the router. Resources kube-apiserver does not store are never stored.
fn verb_served(t: &Target, verb: &str) -> ApiResult<()> {
    let verbs = t.res.verbs;
    if verbs.contains(&verb) {
        if t.res.storage == StorageId::NONE {
            tracing::warn!(
                resource = %t.res.qualified_resource(),
                verb,
                "kcm-testenv does not serve this resource's {verb} yet"
            );
            return Err(ApiError::new(
                405,
                "MethodNotAllowed",
                format!(
                    "{verb} is not supported on resources of kind {:?} by kcm-testenv",
                    t.res.plural
                ),
            ));
        }
        return Ok(());
    }
    let item_verbs = ["get", "update", "patch", "delete"];
    if t.name.is_some() && !item_verbs.iter().any(|v| verbs.contains(v)) {
        return Err(ApiError::path_not_found());
    }
    if verb == "watch" && verbs.contains(&"list") {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            format!(
                "watch is not supported on resources of kind {:?}",
                t.res.plural
            ),
        )
        .with_details(json!({"kind": t.res.plural})));
    }
    Err(ApiError::new(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
    .with_details(json!({})))
}

/// Accept connections until `shutdown` is cancelled.
pub async fn serve(srv: Arc<ApiServer>, listener: TcpListener) {
    let shutdown = srv.shutdown.clone();
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => break,
            a = listener.accept() => a,
        };
        let Ok((stream, _)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        let srv = srv.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| {
                let srv = srv.clone();
                async move { Ok::<_, Infallible>(srv.handle(req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = shutdown.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(2), conn).await;
                }
            }
        });
    }
}
