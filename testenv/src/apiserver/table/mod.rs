//! Server-side Table rendering for `kubectl get` (upstream
//! `pkg/printers/internalversion/printers.go` and `apimachinery/pkg/util/duration`).

mod cells;
mod columns;
mod custom;
mod human_duration;
mod jsonpath;
mod more_kinds;

use http::Response;
use serde_json::{Value, json};

use super::http::{Body, Ctx, value_response};
use super::list::{Filter, fetch, list_meta};
use super::routes::Target;
use super::server::ApiServer;
use crate::registry::ResourceInfo;
use crate::registry::api_status::ApiResult;
use crate::registry::meta;
use crate::registry::view::view_value;
use cells::cells;
pub use cells::pod_reason;
use columns::columns;
pub use human_duration::{human_duration, since};

fn row(res: &ResourceInfo, v: &Value, include: &str) -> Value {
    let mut r = json!({"cells": cells(res, v)});
    match include {
        "None" => {}
        "Object" => r["object"] = v.clone(),
        _ => {
            r["object"] = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": v.get("metadata").cloned().unwrap_or(json!({}))});
        }
    }
    r
}

/// A Table for one watch event (column definitions only on the first).
pub fn watch_table(res: &ResourceInfo, v: &Value, first: bool) -> Value {
    let cols = if first { columns(res) } else { Vec::new() };
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": meta::rv_of(v)}, "columnDefinitions": cols, "rows": [row(res, v, "")]})
}

/// A Table answer: plain `application/json`, as kube-apiserver writes converted objects.
fn table_response(v: &Value) -> Response<Body> {
    value_response(200, v)
}

/// A Table for one object.
pub fn single(res: &ResourceInfo, v: &Value, ctx: &Ctx) -> Response<Body> {
    table_response(
        &json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": meta::rv_of(v)}, "columnDefinitions": columns(res), "rows": [row(res, v, ctx.q("includeObject"))]}),
    )
}

/// A Table for a list.
pub fn list(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let f = Filter::from_ctx(t, ctx)?;
    let page = fetch(srv, t, ctx, &f)?;
    let include = ctx.q("includeObject");
    let rows: Vec<Value> = page
        .items
        .iter()
        .map(|o| row(t.res, &view_value(t.res, &o.value()), include))
        .collect();
    Ok(table_response(
        &json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta(&page), "columnDefinitions": columns(t.res), "rows": rows}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_status_reasons() {
        assert_eq!(
            pod_reason(&json!({"status": {"phase": "Pending"}})),
            "Pending"
        );
        let w = json!({"status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "ContainerCreating"}}}]}});
        assert_eq!(pod_reason(&w), "ContainerCreating");
        let t = json!({"metadata": {"deletionTimestamp": "x"}, "status": {"phase": "Running"}});
        assert_eq!(pod_reason(&t), "Terminating");
    }

    #[test]
    fn deployment_cells() {
        let d = json!({"metadata": {"name": "web"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}, "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
        let res = crate::registry::find("apps", "v1", "deployments").expect("d");
        let c = cells(res, &d);
        assert_eq!(c[..4], [json!("web"), json!("2/3"), json!(3), json!(2)]);
        assert_eq!(c[5..], [json!("web"), json!("nginx"), json!("app=web")]);
        assert_eq!(columns(res).len(), c.len());
    }
}
