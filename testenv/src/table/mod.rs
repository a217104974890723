//! Server-side Table rendering for `kubectl get` (spec §9.3; upstream
//! `pkg/printers/internalversion/printers.go` and `apimachinery/pkg/util/duration`).

mod cells;
mod columns;

use cells::cells;
pub use cells::pod_reason;
use columns::columns;

use http::{HeaderValue, Response, header};
use serde_json::{Value, json};

use crate::list::{Filter, fetch, list_meta};
use crate::meta;
use crate::registry::ResourceInfo;
use crate::routes::Target;
use crate::server::{ApiServer, Body, Ctx, value_response};
use crate::status::ApiResult;

/// Upstream `duration.HumanDuration`.
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Age of a timestamp, `<unknown>` when absent.
pub fn since(ts: Option<&Value>) -> String {
    match ts.and_then(Value::as_str).and_then(meta::parse_time) {
        None => "<unknown>".into(),
        Some(t) => {
            let d = jiff::Timestamp::now().as_second() - t.as_second();
            human_duration(d)
        }
    }
}

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

fn table_response(v: &Value) -> Response<Body> {
    let mut r = value_response(200, v);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json;as=Table;v=v1;g=meta.k8s.io"),
    );
    r
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
        .map(|o| {
            row(
                t.res,
                &crate::events_v1::view_value(t.res, &o.value()),
                include,
            )
        })
        .collect();
    Ok(table_response(
        &json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta(&page), "columnDefinitions": columns(t.res), "rows": rows}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_duration_table() {
        // upstream TestHumanDuration cases
        for (secs, want) in [
            (1, "1s"),
            (70, "70s"),
            (190, "3m10s"),
            (70 * 60, "70m"),
            (47 * 60 * 60, "47h"),
            (49 * 60 * 60, "2d1h"),
            ((8 * 24 + 2) * 60 * 60, "8d"),
            (367 * 24 * 60 * 60, "367d"),
            ((365 * 2 + 10) * 24 * 60 * 60, "2y10d"),
            ((365 * 8 + 10) * 24 * 60 * 60, "8y"),
            (-2, "<invalid>"),
            (-1, "0s"),
            (120, "2m"),
            (5 * 3600 + 60 * 5, "5h5m"),
        ] {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
    }

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
