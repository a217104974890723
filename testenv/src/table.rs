//! Server-side Table rendering for `kubectl get` (spec §9.3).

use http::{HeaderValue, Response, header};
use serde_json::{Value, json};

use crate::list::{Filter, fetch, list_meta};
use crate::meta;
use crate::registry::ResourceInfo;
use crate::routes::Target;
use crate::server::{ApiServer, Body, Ctx, value_response};
use crate::status::ApiResult;

fn columns(_res: &ResourceInfo) -> Vec<Value> {
    vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}),
        json!({"name": "Age", "type": "string", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0}),
    ]
}

fn row(_res: &ResourceInfo, v: &Value) -> Value {
    let age = meta::at(v, &["metadata", "creationTimestamp"])
        .and_then(Value::as_str)
        .unwrap_or("");
    json!({
        "cells": [meta::name_of(v), age],
        "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": v.get("metadata").cloned().unwrap_or(json!({}))},
    })
}

/// A Table for one watch event (column definitions only on the first).
pub fn watch_table(res: &ResourceInfo, v: &Value, first: bool) -> Value {
    let cols = if first { columns(res) } else { Vec::new() };
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": meta::rv_of(v)}, "columnDefinitions": cols, "rows": [row(res, v)]})
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
pub fn single(res: &ResourceInfo, v: &Value) -> Response<Body> {
    table_response(
        &json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": meta::rv_of(v)}, "columnDefinitions": columns(res), "rows": [row(res, v)]}),
    )
}

/// A Table for a list.
pub fn list(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let f = Filter::from_ctx(t, ctx)?;
    let page = fetch(srv, t, ctx, &f)?;
    let rows: Vec<Value> = page
        .items
        .iter()
        .map(|o| row(t.res, &crate::events_v1::view_value(t.res, &o.value)))
        .collect();
    Ok(table_response(
        &json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta(&page), "columnDefinitions": columns(t.res), "rows": rows}),
    ))
}
