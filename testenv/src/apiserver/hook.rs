//! The request hook: the point where fault injection (or a test) decides, before a request is
//! served, to let it through, delay it, or answer an error instead.

use std::time::Duration;

use crate::registry::api_status::ApiError;

/// What a [`RequestHook`] decides for a request.
#[derive(Debug)]
pub enum HookDecision {
    /// Serve the request normally.
    Continue,
    /// Wait, then serve normally.
    Delay(Duration),
    /// Answer this error instead (429, 5xx, 409, ...). `retry_after` adds a `Retry-After` header.
    Fail {
        /// The error to answer.
        error: ApiError,
        /// Seconds for `Retry-After`.
        retry_after: Option<u64>,
    },
}

/// A summary of a request given to hooks.
#[derive(Debug, Clone)]
pub struct RequestInfo {
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, ...
    pub verb: &'static str,
    /// Resource plural (`""` for non-resource paths).
    pub resource: &'static str,
    /// Subresource, if any.
    pub subresource: Option<String>,
    /// Namespace from the URL.
    pub namespace: Option<String>,
    /// Object name from the URL.
    pub name: Option<String>,
    /// The request path.
    pub path: String,
}

/// A hook called before every request is served: the fault-injection point.
pub trait RequestHook: Send + Sync + std::fmt::Debug {
    /// Decide what happens to the request.
    fn before(&self, req: &RequestInfo) -> HookDecision;
    /// Extra Prometheus text appended to `/metrics` (e.g. counters of injected faults).
    fn metrics_text(&self) -> String {
        String::new()
    }
}
