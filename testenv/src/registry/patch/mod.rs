//! PATCH: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go`). The patched document then goes through the normal update path.

pub mod options;
pub mod strategic;

use serde_json::Value;

use crate::registry::api_status::{ApiError, ApiResult};
use crate::registry::resources::StorageId;

/// The patch type, from the request Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/merge-patch+json`
    Merge,
    /// `application/json-patch+json`
    Json,
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply: `apiserver/apply.rs`, with
    /// [`registry::apply`](crate::registry::apply))
    Apply,
}

impl PatchKind {
    /// Map a Content-Type; anything else is 415.
    pub fn from_content_type(ct: &str) -> ApiResult<PatchKind> {
        let base = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match base.as_str() {
            "application/merge-patch+json" => Ok(PatchKind::Merge),
            "application/json-patch+json" => Ok(PatchKind::Json),
            "application/strategic-merge-patch+json" => Ok(PatchKind::Strategic),
            // CBOR bodies are behind a feature gate that is off by default
            "application/apply-patch+yaml" => Ok(PatchKind::Apply),
            _ => Err(ApiError::unsupported_media_type(ct)),
        }
    }
}

/// The answer to a strategic merge patch of a custom resource: custom resources have no
/// patch strategies, so only JSON, merge and apply patches are accepted, as upstream.
pub fn strategic_unsupported() -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )
}

/// Apply a patch to a document.
pub fn apply(kind: PatchKind, id: StorageId, mut doc: Value, patch: &Value) -> ApiResult<Value> {
    match kind {
        PatchKind::Merge => {
            if !patch.is_object() {
                return Err(ApiError::bad_request(
                    "json merge patch must be a JSON object",
                ));
            }
            json_patch::merge(&mut doc, patch);
            Ok(doc)
        }
        PatchKind::Json => {
            let p: json_patch::Patch = serde_json::from_value(patch.clone()).map_err(|e| {
                ApiError::bad_request(format!(
                    "the server rejected our request due to an error in our request: {e}"
                ))
            })?;
            json_patch::patch(&mut doc, &p).map_err(|e| {
                ApiError::new(
                    422,
                    "Invalid",
                    format!("the server rejected our request due to an error in our request: {e}"),
                )
            })?;
            Ok(doc)
        }
        PatchKind::Strategic => {
            if !patch.is_object() {
                return Err(ApiError::bad_request(
                    "strategic merge patch must be a JSON object",
                ));
            }
            strategic::apply(id, doc, patch).map_err(ApiError::bad_request)
        }
        // applies merge with field ownership, not as a patch document
        PatchKind::Apply => Err(ApiError::internal(
            "an apply patch is not applied as a patch document",
        )),
    }
}
