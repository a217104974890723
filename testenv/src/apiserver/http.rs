//! HTTP plumbing shared by the handlers: the response body type, the parsed request context
//! ([`Ctx`]), request-body decoding, and JSON, Status and plain-text responses.

use std::collections::HashMap;
use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use serde_json::Value;

use super::negotiate::Negotiated;
use crate::registry::api_status::{ApiError, ApiResult};
use crate::registry::apply::endpoint::{Writer, manager_or_user_agent};
use crate::registry::meta;
use crate::registry::patch::options::{self, WriteKind, WriteOptions};
use crate::registry::{ResourceInfo, view};
use crate::storage::ObjRef;

/// Response body type: a full body or a stream of watch lines.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Parsed request context shared by the handlers.
#[derive(Debug, Default)]
pub struct Ctx {
    /// Query parameters.
    pub query: HashMap<String, String>,
    /// `Accept` header.
    pub accept: String,
    /// `Content-Type` header.
    pub content_type: String,
    /// Request body.
    pub body: Bytes,
    /// The negotiated answer: media type and conversion (`as=Table`,
    /// `as=PartialObjectMetadata`, …) of the `Accept` header.
    pub output: Negotiated,
    /// `If-None-Match` header.
    pub if_none_match: String,
    /// `User-Agent` header (names the field manager of writes without `fieldManager`).
    pub user_agent: String,
}

impl Ctx {
    /// A query parameter, empty when absent.
    pub fn q(&self, k: &str) -> &str {
        self.query.get(k).map(String::as_str).unwrap_or("")
    }
    /// Whether the client asked for a Table.
    pub fn wants_table(&self) -> bool {
        self.output.converts_to("Table")
    }
    /// `dryRun=All`.
    pub fn dry_run(&self) -> bool {
        self.q("dryRun") == "All"
    }

    /// Who writes: `fieldManager`, else the User-Agent's product, now.
    pub fn writer(&self) -> Writer {
        Writer {
            manager: manager_or_user_agent(self.q("fieldManager"), &self.user_agent),
            now: meta::now_rfc3339(),
        }
    }

    /// 422 when the write's options (`fieldManager`, `force`, `dryRun`) are not valid.
    pub fn check_write_options(&self, kind: WriteKind) -> ApiResult<()> {
        options::validate(
            kind,
            &WriteOptions {
                field_manager: self.q("fieldManager"),
                force: self.query.get("force").map(String::as_str),
                dry_run: self.query.get("dryRun").map(String::as_str),
            },
        )
    }
}

/// A JSON response.
pub fn json_response(code: u16, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()).boxed_unsync());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// A JSON response from a value.
pub fn value_response(code: u16, v: &Value) -> Response<Body> {
    json_response(
        code,
        crate::registry::go_json::to_vec(v).unwrap_or_default(),
    )
}

/// The Status response of an error.
pub fn error_response(e: &ApiError) -> Response<Body> {
    value_response(e.code, &e.to_status())
}

/// A plain-text response (health checks, Go's `404 page not found`).
pub fn text_response(code: u16, ct: &'static str, body: &'static str) -> Response<Body> {
    let mut r = json_response(code, Bytes::from_static(body.as_bytes()));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    r
}

/// The serialized form of a stored object as seen through `res` (the events.k8s.io/v1 view
/// of a core Event and custom resources read in another version than the stored one are
/// converted, everything else is the stored bytes).
pub fn view_json(res: &ResourceInfo, obj: &ObjRef) -> Bytes {
    if view::needs_conversion(res) {
        Bytes::from(
            crate::registry::go_json::to_vec(&view::view_value(res, &obj.value()))
                .unwrap_or_default(),
        )
    } else {
        obj.json.clone()
    }
}

/// The object as seen through the request's resource, with a status code.
pub fn obj_response(res: &ResourceInfo, code: u16, obj: &ObjRef) -> Response<Body> {
    json_response(code, view_json(res, obj))
}

/// Decode a JSON (or YAML) request body.
pub fn parse_body(ctx: &Ctx) -> ApiResult<Value> {
    if ctx.body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    if ctx.content_type.contains("yaml") {
        return serde_yaml::from_slice(&ctx.body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")));
    }
    serde_json::from_slice(&ctx.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding JSON: {e}")))
}

/// Add `Warning: 299 - "<text>"` headers.
pub fn with_warnings(mut r: Response<Body>, warnings: &[String]) -> Response<Body> {
    for w in warnings {
        let text = format!("299 - {}", serde_json::to_string(w).unwrap_or_default());
        if let Ok(v) = HeaderValue::from_str(&text) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
    r
}
