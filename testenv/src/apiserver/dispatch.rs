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
use tokio::net::TcpListener;

use super::hook::{HookDecision, RequestInfo};
use super::http::{
    Body, Ctx, error_response, json_response, text_response, value_response, with_warnings,
};
use super::negotiate::{self, Endpoint, MediaType, Negotiated, negotiate, negotiate_written};
use super::routes::{self, Route, Target};
use super::server::ApiServer;
use super::{
    aggregated_discovery, apply, audit, crd_controller, delete, discovery, eviction, handlers,
    list, metrics, openapi, output, protobuf, restful, reviews, scale, table, tokens, unserved,
    watch,
};
use crate::registry::api_status::{ApiError, ApiResult};
use crate::registry::resources::is_builtin_group;
use crate::registry::{ResourceInfo, StorageId};
use unserved::Unserved;

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
        let user = audited.then(|| {
            let authorization = req
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok());
            super::tokens::request_user(&self.token_key, authorization)
        });
        let request_uri = req
            .uri()
            .path_and_query()
            .map_or_else(|| path.clone(), |pq| pq.to_string());
        let audit = |code: u16| {
            if let (Some(log), Some(received), Some(user)) = (&self.audit, &received, &user) {
                log.record(&audit::AuditEntry {
                    verb,
                    request_uri: &request_uri,
                    user_agent: &user_agent,
                    user,
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
        let error_accept = accept.clone();
        let if_none_match = header_str(header::IF_NONE_MATCH);
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
            output: Negotiated::default(),
            if_none_match,
            user_agent: user_agent.clone(),
        };
        let metric_res = if resource.is_empty() { "" } else { resource };
        let resp = self.clone().route(&method, &path, route, verb, ctx).await;
        let resp = match resp {
            Ok(r) => r,
            // errors are written in the media type the client asked for, as upstream's
            // ErrorNegotiated does (JSON when nothing else fits)
            Err(e) => match negotiate_written(&error_accept, Endpoint::Plain) {
                Ok(n) => output::value(e.code, &e.to_status(), n.media),
                Err(_) => error_response(&e),
            },
        };
        if !metric_res.is_empty() {
            let sub_s = sub.as_deref().unwrap_or("");
            self.metrics
                .record(&client, verb, metric_res, sub_s, resp.status().as_u16());
        }
        audit(resp.status().as_u16());
        let mut resp = resp;
        // kube-apiserver's cache-control filter: nothing is cacheable unless a handler says so
        if !resp.headers().contains_key(header::CACHE_CONTROL) {
            resp.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache, private"),
            );
        }
        resp
    }

    async fn route(
        self: Arc<Self>,
        method: &Method,
        path: &str,
        route: Route,
        verb: &'static str,
        ctx: Ctx,
    ) -> ApiResult<Response<Body>> {
        let loud = |code: u16, what: &str| unserved::warn(method, path, code, what);
        match route {
            Route::Version if !restful::accepts(&ctx.accept, restful::VERSION) => {
                Err(restful::not_acceptable(restful::VERSION))
            }
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
            Route::Api if !restful::accepts(&ctx.accept, restful::RESOURCE) => {
                loud(406, "no media type of the Accept header is served here");
                Err(restful::not_acceptable(restful::RESOURCE))
            }
            Route::Api | Route::Apis => {
                let core = matches!(route, Route::Api);
                match negotiate(&ctx.accept, MediaType::ALL, Endpoint::AggregatedDiscovery) {
                    Some(n) if n.media == MediaType::Json => {
                        let doc = aggregated_discovery::document(&self.crds, core);
                        return Ok(aggregated_discovery::respond(&doc, &ctx.if_none_match));
                    }
                    Some(n) => {
                        let e =
                            negotiate::not_acceptable(MediaType::ALL.iter().map(|m| m.as_str()));
                        loud(
                            406,
                            &format!(
                                "aggregated discovery in {} is not written by kcm-testenv (only JSON)",
                                n.media.as_str()
                            ),
                        );
                        return Err(e);
                    }
                    None => {}
                }
                let n = self.legacy_negotiation(&ctx, &loud)?;
                let doc = if core {
                    discovery::api_versions(&self.addr)
                } else {
                    discovery::api_group_list(&self.crds)
                };
                Ok(output::value(200, &doc, n.media))
            }
            Route::ApiGroup(g) => {
                let n = self.legacy_negotiation(&ctx, &loud)?;
                Ok(output::value(
                    200,
                    &discovery::api_group(&self.crds, &g),
                    n.media,
                ))
            }
            Route::ResourceList(g, _)
                if (g.is_empty() || is_builtin_group(&g))
                    && !restful::accepts(&ctx.accept, restful::RESOURCE) =>
            {
                loud(406, "no media type of the Accept header is served here");
                Err(restful::not_acceptable(restful::RESOURCE))
            }
            Route::ResourceList(g, v) => {
                let n = self.legacy_negotiation(&ctx, &loud)?;
                let doc = discovery::resource_list(&self.crds, &g, &v);
                Ok(output::value(200, &doc, n.media))
            }
            Route::OpenApiV2 => Ok(openapi::serve::v2(
                &self,
                method,
                path,
                &ctx.accept,
                &ctx.if_none_match,
            )),
            Route::OpenApiV3 => Ok(openapi::serve::v3(
                &self,
                method,
                path,
                ctx.q("hash"),
                &ctx.accept,
                &ctx.if_none_match,
            )),
            Route::NotFound => {
                loud(404, &routes::describe_missing(path, &self.crds));
                Err(ApiError::path_not_found())
            }
            Route::NoHandler => {
                loud(404, &routes::describe_missing(path, &self.crds));
                Ok(text_response(
                    404,
                    "text/plain; charset=utf-8",
                    "404 page not found\n",
                ))
            }
            Route::Resource(t) => self.resource(method, path, t, verb, ctx).await,
        }
    }

    /// Negotiate a legacy discovery document (no conversion): JSON or YAML, else 406.
    fn legacy_negotiation(&self, ctx: &Ctx, loud: &dyn Fn(u16, &str)) -> ApiResult<Negotiated> {
        negotiate_written(&ctx.accept, Endpoint::Plain).map_err(|na| {
            loud(406, &na.explain(&ctx.accept));
            na.error()
        })
    }

    async fn resource(
        self: Arc<Self>,
        method: &Method,
        path: &str,
        t: Target,
        verb: &'static str,
        mut ctx: Ctx,
    ) -> ApiResult<Response<Body>> {
        let loud = |code: u16, what: &str| unserved::warn(method, path, code, what);
        let sub = t.sub.as_deref();
        if let Some(s) = sub
            && !t.res.has_subresource(s)
        {
            // a custom resource's unknown subresource: the object's 404
            return Err(ApiError::not_found(t.res, t.name.as_deref().unwrap_or("")));
        }
        let custom = t.res.is_custom();
        let handler = pick(t.res, verb, sub, t.name.is_some()).map_err(|why| {
            let e = unserved::refusal(t.res, verb, sub, why);
            loud(e.code, &unserved::verb(t.res, verb, sub, why));
            e
        })?;
        let produces = if matches!(handler, Handler::List | Handler::Watch) {
            restful::COLLECTION
        } else {
            restful::RESOURCE
        };
        if !custom && !restful::accepts(&ctx.accept, produces) {
            loud(406, "no media type of the Accept header is served here");
            return Err(restful::not_acceptable(produces));
        }
        ctx.output =
            negotiate_written(&ctx.accept, Endpoint::Resource { custom }).map_err(|na| {
                loud(406, &na.explain(&ctx.accept));
                na.error()
            })?;
        self.clone()
            .decode_and_serve(method, path, t, handler, verb, ctx)
            .await
    }

    /// Decode a protobuf body, run the handler, and write its answer in the negotiated form.
    async fn decode_and_serve(
        self: Arc<Self>,
        method: &Method,
        path: &str,
        t: Target,
        handler: Handler,
        verb: &'static str,
        mut ctx: Ctx,
    ) -> ApiResult<Response<Body>> {
        let loud = |code: u16, what: &str| unserved::warn(method, path, code, what);
        if matches!(*method, Method::POST | Method::PUT)
            && !restful::readable_body(&ctx.content_type)
        {
            let e = restful::unsupported_body();
            loud(
                415,
                &format!("{} (Content-Type {:?})", e.message, ctx.content_type),
            );
            return Err(e);
        }
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
                let e = ApiError::unsupported_media_type(&ctx.content_type);
                loud(415, &e.message);
                return Err(e);
            }
        }
        let res = t.res;
        let sub = t.sub.clone();
        let output = ctx.output.clone();
        let result = self.clone().serve(handler, t, verb, ctx).await;
        if res.storage == StorageId::CUSTOMRESOURCEDEFINITIONS
            && result.is_ok()
            && matches!(
                verb,
                "create" | "update" | "patch" | "delete" | "deletecollection"
            )
        {
            crd_controller::reconcile(&self);
        }
        let result = match result {
            // a watch streams in its negotiated form already
            Ok(r) if handler != Handler::Watch => {
                Ok(output::finish(r, res, sub.as_deref(), &output).await)
            }
            Err(e) if e.code == 415 => {
                loud(415, &e.message);
                Err(e)
            }
            r => r,
        };
        // a deprecated custom resource version warns on every request, failed ones too
        match (result, res.custom.and_then(|c| c.warning.as_ref())) {
            (Ok(r), Some(w)) => Ok(with_warnings(r, std::slice::from_ref(w))),
            (Err(e), Some(w)) => Ok(with_warnings(error_response(&e), std::slice::from_ref(w))),
            (r, None) => r,
        }
    }

    async fn serve(
        self: Arc<Self>,
        handler: Handler,
        t: Target,
        verb: &'static str,
        ctx: Ctx,
    ) -> ApiResult<Response<Body>> {
        match handler {
            Handler::List if ctx.wants_table() => table::list(&self, &t, &ctx),
            Handler::List => list::list(&self, &t, &ctx),
            Handler::Watch => watch::watch(self.clone(), &t, &ctx),
            Handler::Get => handlers::get(&self, &t, &ctx),
            Handler::Create => handlers::create(&self, &t, &ctx),
            Handler::Update => handlers::update(&self, &t, &ctx),
            Handler::Patch
                if apply::is_apply(&ctx) && matches!(t.sub.as_deref(), None | Some("status")) =>
            {
                apply::patch(&self, &t, &ctx)
            }
            Handler::Patch => handlers::patch(&self, &t, &ctx),
            Handler::Delete => delete::delete(&self, &t, &ctx),
            Handler::DeleteCollection => delete::delete_collection(&self, &t, &ctx),
            Handler::Scale => scale::scale(&self, &t, verb, &ctx),
            Handler::Binding => scale::binding(&self, &t, &ctx),
            Handler::Review => reviews::create(&self, &t, &ctx),
            Handler::ComponentStatuses => reviews::component_statuses(&t),
            Handler::Token => tokens::token_request(&self, &t, &ctx),
            Handler::Eviction => eviction::evict(&self, &t, &ctx),
        }
    }
}

/// The handler of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handler {
    List,
    Watch,
    Get,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
    Scale,
    Binding,
    /// A create of a resource kube-apiserver does not store: the reviews and `bindings`.
    Review,
    /// `componentstatuses`, answered from the simulated cluster's components.
    ComponentStatuses,
    /// `serviceaccounts/token` (TokenRequest).
    Token,
    /// `pods/eviction`.
    Eviction,
}

/// The handler of a verb on a resource or subresource (`item`: the path names an object).
/// `Err` says why there is none: kube-apiserver refuses the verb as well (a 405; a 404 for an
/// item path of a resource served only by collection verbs, as `bindings` and the reviews have
/// no item routes; watching a resource that is only listed, `componentstatuses`, is a 405
/// naming it), or kube-apiserver serves it and kcm-testenv does not (a resource kube-apiserver
/// does not store, a subresource without a handler here).
fn pick(
    res: &ResourceInfo,
    verb: &str,
    sub: Option<&str>,
    item: bool,
) -> Result<Handler, Unserved> {
    // the CRD handler takes every verb of a custom resource (a terminating one answers its
    // creates with a 403), whatever discovery lists
    const CUSTOM: &[&str] = &[
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    const ITEM_VERBS: &[&str] = &["get", "update", "patch", "delete"];
    let verbs = match sub {
        None if res.is_custom() => CUSTOM,
        None => res.verbs,
        Some(s) => match res.subresources.iter().find(|x| x.name == s) {
            Some(x) => x.verbs,
            None => return Err(Unserved::Upstream),
        },
    };
    if !verbs.contains(&verb) {
        return Err(match sub {
            None if item && !ITEM_VERBS.iter().any(|v| verbs.contains(v)) => Unserved::NoItemRoutes,
            None if verb == "watch" && verbs.contains(&"list") => Unserved::WatchOfList,
            _ => Unserved::Upstream,
        });
    }
    // resources kube-apiserver does not store: the reviews, bindings, componentstatuses
    if sub.is_none() && res.storage == StorageId::NONE {
        return match verb {
            "create" => Ok(Handler::Review),
            "get" | "list" => Ok(Handler::ComponentStatuses),
            _ => Err(Unserved::Testenv),
        };
    }
    Ok(match (verb, sub) {
        ("list", None) => Handler::List,
        ("watch", None) => Handler::Watch,
        ("get", None | Some("status" | "approval" | "ephemeralcontainers")) => Handler::Get,
        ("create", None) => Handler::Create,
        ("update", None | Some("status" | "finalize" | "approval" | "ephemeralcontainers")) => {
            Handler::Update
        }
        ("patch", None | Some("status" | "approval" | "ephemeralcontainers")) => Handler::Patch,
        ("delete", None) => Handler::Delete,
        ("deletecollection", None) => Handler::DeleteCollection,
        ("get" | "update" | "patch", Some("scale")) => Handler::Scale,
        ("create", Some("binding")) => Handler::Binding,
        ("create", Some("token")) => Handler::Token,
        ("create", Some("eviction")) => Handler::Eviction,
        _ => return Err(Unserved::Testenv),
    })
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
