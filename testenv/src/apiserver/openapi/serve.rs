//! The OpenAPI answers, as `k8s.io/kube-openapi/pkg/handler` (v2) and `pkg/handler3` (v3)
//! write them: the `Accept` header picks JSON or protobuf (kcm-testenv writes JSON only: a client
//! that also takes JSON gets JSON, one that takes protobuf only a 406, logged), an `Etag` of the
//! document's hash, 304 for a matching `If-None-Match`, and for v3 documents a 301 to the
//! current hash and `Cache-Control: public, immutable` with a year's `Expires` when the hash is
//! right.

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full};

use super::{Doc, v2_document, v3_documents, v3_index};
use crate::apiserver::http::Body;
use crate::apiserver::negotiate::parse_accept;
use crate::apiserver::server::ApiServer;
use crate::apiserver::unserved;

const JSON: &str = "application/json";

fn response(code: u16, body: Bytes) -> Response<Body> {
    let mut r = Response::new(Full::new(body).boxed_unsync());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r
}

fn set(r: &mut Response<Body>, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        r.headers_mut().insert(name, v);
    }
}

/// `Mon, 07 Dec 2026 17:23:24 GMT` (Go's `http.TimeFormat`); `zone` is `GMT`, or `UTC` for
/// kube-openapi's `Expires` (Go's `time.RFC1123` of a UTC time).
fn http_date(t: jiff::Timestamp, zone: &str) -> String {
    format!("{} {zone}", t.strftime("%a, %d %b %Y %H:%M:%S"))
}

/// Which of `offered` (subtypes of `application/`, the first JSON) the `Accept` header picks:
/// `Ok(true)` JSON, `Ok(false)` nothing at all (kube-openapi's 406), `Err(())` protobuf only.
fn wants_json(accept: &str, offered: &[&str]) -> Result<bool, ()> {
    let header = if accept.is_empty() { "*/*" } else { accept };
    let mut protobuf_only = false;
    for clause in parse_accept(header) {
        for sub in offered {
            let kind_ok = clause.kind == "application" || clause.kind == "*";
            let sub_ok = clause.subtype == *sub || clause.subtype == "*";
            if kind_ok && sub_ok {
                if *sub == "json" {
                    return Ok(true);
                }
                protobuf_only = true;
            }
        }
    }
    if protobuf_only { Err(()) } else { Ok(false) }
}

/// The answer of a document with its `Etag` (304 when `If-None-Match` is it).
fn document(doc: &Doc, if_none_match: &str) -> Response<Body> {
    let quoted = format!("\"{}\"", doc.etag);
    let mut r = if if_none_match == quoted {
        response(304, Bytes::new())
    } else {
        let mut r = response(200, doc.bytes.clone());
        set(&mut r, header::CONTENT_TYPE, JSON);
        r
    };
    set(&mut r, header::ETAG, &quoted);
    set(&mut r, header::LAST_MODIFIED, &http_date(doc.built, "GMT"));
    set(&mut r, header::ACCEPT_RANGES, "bytes");
    r
}

fn not_acceptable(method: &Method, path: &str, accept: &str, protobuf: bool) -> Response<Body> {
    let what = if protobuf {
        format!(
            "the OpenAPI document in protobuf (Accept {accept:?}): kcm-testenv writes JSON only"
        )
    } else {
        format!(
            "no media type of Accept {accept:?} is an OpenAPI document's (kube-apiserver answers the same 406)"
        )
    };
    unserved::warn(method, path, 406, &what);
    let mut r = response(406, Bytes::new());
    set(&mut r, header::VARY, "Accept");
    r
}

/// `GET /openapi/v2`.
pub fn v2(
    srv: &ApiServer,
    method: &Method,
    path: &str,
    accept: &str,
    if_none_match: &str,
) -> Response<Body> {
    let offered = [
        "json",
        "com.github.proto-openapi.spec.v2@v1.0+protobuf",
        "com.github.proto-openapi.spec.v2.v1.0+protobuf",
    ];
    match wants_json(accept, &offered) {
        Ok(true) => {
            let mut r = document(&v2_document(srv), if_none_match);
            r.headers_mut()
                .append(header::VARY, HeaderValue::from_static("Accept"));
            r
        }
        Ok(false) => not_acceptable(method, path, accept, false),
        Err(()) => empty_protobuf_v2(method, path, accept),
    }
}

/// `/openapi/v2` asked in protobuf only (kubectl's client-side validation of a `List`, which
/// has no OpenAPI v3 schema): kube-apiserver writes its document as gnostic's
/// `openapi_v2.Document`; kcm-testenv writes no protobuf, so it answers an empty document (a
/// zero-length message, valid protobuf). kubectl then finds no schema and leaves the
/// validation to the server (`fieldValidation`), as it does for kinds the document lacks; a
/// 406 made `kubectl create -f` of a `List` fail. Logged, as every answer kcm-testenv cannot
/// give in full.
fn empty_protobuf_v2(method: &Method, path: &str, accept: &str) -> Response<Body> {
    unserved::warn(
        method,
        path,
        200,
        &format!(
            "the OpenAPI v2 document in protobuf (Accept {accept:?}): kcm-testenv writes an empty \
             document (JSON has it whole)"
        ),
    );
    let mut r = response(200, Bytes::new());
    // kube-openapi answers either accepted name with the one Go's mime parser reads
    // (`pkg/handler/handler.go`, `ReturnedContentType`)
    set(
        &mut r,
        header::CONTENT_TYPE,
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
    );
    set(&mut r, header::VARY, "Accept");
    r
}

/// `GET /openapi/v3` (the index) and `/openapi/v3/<document>`.
pub fn v3(
    srv: &ApiServer,
    method: &Method,
    path: &str,
    hash: &str,
    accept: &str,
    if_none_match: &str,
) -> Response<Body> {
    let docs = v3_documents(srv);
    let key = path
        .trim_start_matches("/openapi/v3")
        .trim_start_matches('/');
    if key.is_empty() {
        let body = serde_json::to_vec(&v3_index(&docs)).unwrap_or_default();
        let mut r = response(200, Bytes::from(body));
        // kube-apiserver's aggregated index goes out with a sniffed type and no Etag
        set(&mut r, header::CONTENT_TYPE, "text/plain; charset=utf-8");
        set(
            &mut r,
            header::LAST_MODIFIED,
            &http_date(jiff::Timestamp::now(), "GMT"),
        );
        set(&mut r, header::ACCEPT_RANGES, "bytes");
        return r;
    }
    let offered = [
        "json",
        "com.github.proto-openapi.spec.v3.v1.0+protobuf",
        "com.github.proto-openapi.spec.v3@v1.0+protobuf",
    ];
    match wants_json(accept, &offered) {
        Ok(true) => {}
        Ok(false) => return not_acceptable(method, path, accept, false),
        Err(()) => return not_acceptable(method, path, accept, true),
    }
    let Some(doc) = docs.get(key) else {
        unserved::warn(
            method,
            path,
            404,
            &format!("no OpenAPI v3 document {key:?} is served"),
        );
        return response(404, Bytes::new());
    };
    let quoted = format!("\"{}\"", doc.etag);
    if !hash.is_empty() && hash != doc.etag {
        let mut r = response(301, Bytes::new());
        set(&mut r, header::CONTENT_TYPE, JSON);
        set(&mut r, header::ETAG, &quoted);
        set(
            &mut r,
            header::LOCATION,
            &format!("/openapi/v3/{key}?hash={}", doc.etag),
        );
        set(&mut r, header::VARY, "Accept");
        return r;
    }
    let mut r = document(doc, if_none_match);
    set(&mut r, header::VARY, "Accept");
    if !hash.is_empty() {
        set(&mut r, header::CACHE_CONTROL, "public, immutable");
        let year = jiff::Timestamp::now()
            .checked_add(jiff::SignedDuration::from_hours(24 * 365))
            .unwrap_or_else(|_| jiff::Timestamp::now());
        set(&mut r, header::EXPIRES, &http_date(year, "UTC"));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_picks_json_or_refuses() {
        let v2 = [
            "json",
            "com.github.proto-openapi.spec.v2@v1.0+protobuf",
            "com.github.proto-openapi.spec.v2.v1.0+protobuf",
        ];
        assert_eq!(wants_json("", &v2), Ok(true));
        assert_eq!(wants_json("*/*", &v2), Ok(true));
        assert_eq!(wants_json("application/json", &v2), Ok(true));
        assert_eq!(
            wants_json(
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json",
                &v2
            ),
            Ok(true)
        );
        assert_eq!(
            wants_json(
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                &v2
            ),
            Err(())
        );
        assert_eq!(wants_json("text/html", &v2), Ok(false));
    }

    #[test]
    fn dates_as_go_writes_them() {
        let t: jiff::Timestamp = "2026-12-07T17:23:24Z".parse().expect("time");
        assert_eq!(http_date(t, "GMT"), "Mon, 07 Dec 2026 17:23:24 GMT");
        assert_eq!(http_date(t, "UTC"), "Mon, 07 Dec 2026 17:23:24 UTC");
    }
}
