//! The checks kube-apiserver's go-restful container makes before a built-in endpoint's handler
//! runs (`github.com/emicklei/go-restful/v3`, `jsr311.go` and `route.go`): a method the path does
//! not serve is a 405, an `Accept` header naming none of the route's media types a 406, both as
//! the `Status` kube-apiserver's service error handler writes
//! (`staging/src/k8s.io/apiserver/pkg/server/handler.go`). Custom resources, `/apis` and
//! `/apis/<group>` are served outside go-restful and skip these checks.

use serde_json::{Value, json};

use crate::registry::ResourceInfo;
use crate::registry::api_status::ApiError;

/// What a built-in resource route produces (go-restful's `Produces`).
pub const RESOURCE: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// What a collection's GET produces: its list and watch forms.
pub const COLLECTION: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];

/// What `/version` produces.
pub const VERSION: &[&str] = &["application/json"];

/// Whether an `Accept` header names one of `produces` (parameters ignored, `*/*` anything; no
/// header is `*/*`; `application/*` is no match: go-restful compares whole types).
pub fn accepts(accept: &str, produces: &[&str]) -> bool {
    if accept.is_empty() {
        return true;
    }
    accept.split(',').any(|clause| {
        let media = clause.split(';').next().unwrap_or("").trim_matches(' ');
        media == "*/*" || produces.contains(&media)
    })
}

fn with_details(mut e: ApiError, details: Value) -> ApiError {
    e.details = Some(details);
    e
}

/// go-restful's 406.
pub fn not_acceptable(produces: &[&str]) -> ApiError {
    with_details(
        ApiError::new(
            406,
            "NotAcceptable",
            format!(
                "406: Not Acceptable\n\nAvailable representations: {}",
                produces.join(", ")
            ),
        ),
        json!({}),
    )
}

/// The 405 of a built-in endpoint.
pub fn method_not_allowed() -> ApiError {
    with_details(
        ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        ),
        json!({}),
    )
}

/// The 405 of a custom resource (the CRD handler's `MethodNotSupported`).
pub fn method_not_supported(res: &ResourceInfo, verb: &str) -> ApiError {
    with_details(
        ApiError::new(
            405,
            "MethodNotAllowed",
            format!(
                "{verb} is not supported on resources of kind {:?}",
                res.qualified_resource()
            ),
        ),
        json!({"group": res.group, "kind": res.plural}),
    )
}

/// The 415 of a create or update body in a media type no serializer reads (apiserver's
/// `NegotiateInputSerializer`).
pub fn unsupported_body() -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    )
}

/// Whether a create or update `Content-Type` names a media type a serializer reads (no header
/// means JSON; parameters such as `charset` are ignored, as Go's `mime.ParseMediaType` does).
pub fn readable_body(content_type: &str) -> bool {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    media.is_empty() || RESOURCE.contains(&media.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_matching_is_go_restfuls() {
        for (h, want) in [
            ("", true),
            ("*/*", true),
            ("application/json", true),
            ("application/json;as=Table;g=meta.k8s.io;v=v1", true),
            ("text/html, application/yaml;q=0.1", true),
            ("application/*", false),
            ("text/html", false),
            ("application/json;stream=watch", true),
        ] {
            assert_eq!(accepts(h, RESOURCE), want, "{h:?}");
        }
        assert!(!accepts("application/yaml", VERSION));
        assert_eq!(
            not_acceptable(VERSION).message,
            "406: Not Acceptable\n\nAvailable representations: application/json"
        );
    }

    #[test]
    fn readable_bodies() {
        for (ct, want) in [
            ("", true),
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("application/yaml", true),
            ("application/vnd.kubernetes.protobuf", true),
            ("text/plain", false),
            ("application/merge-patch+json", false),
        ] {
            assert_eq!(readable_body(ct), want, "{ct:?}");
        }
    }
}
