//! Client-side request accounting: each controller's `kube::Client` counts its own requests.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use serde_json::{Value, json};

/// `(verb, resource[/subresource], HTTP status)` → requests; status 0 is a transport error.
pub(super) type Counts = BTreeMap<(String, String, u16), u64>;

/// The requests one client issued.
#[derive(Clone, Default)]
pub(super) struct RequestLog(pub(super) Arc<Mutex<Counts>>);

impl RequestLog {
    pub(super) fn record(&self, key: (String, String), code: u16) {
        let mut m = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *m.entry((key.0, key.1, code)).or_default() += 1;
    }

    pub(super) fn snapshot(&self) -> Counts {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// `after - before`, per key.
pub(super) fn diff(after: &Counts, before: &Counts) -> Counts {
    after
        .iter()
        .map(|(k, n)| (k.clone(), n - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The server's request counters, `after - before` (watch events left out).
pub(super) fn server_diff(
    after: &kcm_testenv::RequestCounts,
    before: &kcm_testenv::RequestCounts,
) -> kcm_testenv::RequestCounts {
    kcm_testenv::RequestCounts {
        requests: diff(&after.requests, &before.requests),
        watch_events: BTreeMap::new(),
        ..Default::default()
    }
}

pub(super) fn sum(c: &Counts, verb: &str, resource: &str) -> u64 {
    c.iter()
        .filter(|((v, r, _), _)| v == verb && r == resource)
        .map(|(_, n)| n)
        .sum()
}

pub(super) fn is_write(verb: &str) -> bool {
    matches!(
        verb,
        "create" | "update" | "patch" | "delete" | "deletecollection"
    )
}

/// Writes other than Events (Events are reported separately, as in the ReplicaSet bench).
pub(super) fn object_writes(c: &Counts) -> u64 {
    c.iter()
        .filter(|((v, r, _), _)| is_write(v) && r != "events")
        .map(|(_, n)| n)
        .sum()
}

pub(super) fn event_writes(c: &Counts) -> u64 {
    c.iter()
        .filter(|((v, r, _), _)| is_write(v) && r == "events")
        .map(|(_, n)| n)
        .sum()
}

pub(super) fn reads(c: &Counts) -> u64 {
    c.iter()
        .filter(|((v, _, _), _)| matches!(v.as_str(), "get" | "list"))
        .map(|(_, n)| n)
        .sum()
}

/// `{"<verb> <resource> <code>": n}` for a JSON report.
pub(super) fn counts_json(c: &Counts) -> Value {
    Value::Object(
        c.iter()
            .map(|((v, r, code), n)| (format!("{v} {r} {code}"), json!(n)))
            .collect(),
    )
}

pub(super) fn conflicts(c: &Counts) -> u64 {
    c.iter()
        .filter(|((_, _, code), _)| *code == 409)
        .map(|(_, n)| n)
        .sum()
}

/// Kubernetes verb and `resource[/subresource]` of a request, from its method and URI.
pub(super) fn classify(method: &http::Method, uri: &http::Uri) -> (String, String) {
    let segs: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    // Drop the `api/v1` or `apis/<group>/<version>` prefix.
    let rest: &[&str] = match segs.first() {
        Some(&"api") => segs.get(2..).unwrap_or_default(),
        Some(&"apis") => segs.get(3..).unwrap_or_default(),
        _ => &[],
    };
    let rest = match rest {
        ["namespaces", _ns, tail @ ..] if !tail.is_empty() => tail,
        other => other,
    };
    let (resource, name, sub) = (rest.first(), rest.get(1), rest.get(2));
    let resource = match (resource, sub) {
        (Some(r), Some(s)) => format!("{r}/{s}"),
        (Some(r), None) => (*r).to_string(),
        _ => String::new(),
    };
    let watch = uri
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    let verb = match *method {
        http::Method::POST => "create",
        http::Method::PUT => "update",
        http::Method::PATCH => "patch",
        http::Method::DELETE if name.is_some() => "delete",
        http::Method::DELETE => "deletecollection",
        http::Method::GET if watch => "watch",
        http::Method::GET if name.is_some() => "get",
        http::Method::GET => "list",
        _ => "other",
    };
    (verb.to_string(), resource)
}

/// A tower service that records every request of the client it wraps.
pub(super) struct Counting<S> {
    inner: S,
    log: RequestLog,
}

impl<S, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for Counting<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    ResBody: 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<ReqBody>) -> Self::Future {
        let key = classify(req.method(), req.uri());
        let log = self.log.clone();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let res = fut.await;
            let code = res.as_ref().map_or(0, |r| r.status().as_u16());
            log.record(key, code);
            res
        })
    }
}

/// A client of the server at `url` whose requests are recorded in `log`.
pub(super) fn counting_client(url: &http::Uri, log: &RequestLog) -> anyhow::Result<kube::Client> {
    let log = log.clone();
    let layer = tower::layer::layer_fn(move |inner| Counting {
        inner,
        log: log.clone(),
    });
    Ok(
        kube::client::ClientBuilder::try_from(kube::Config::new(url.clone()))?
            .with_layer(&layer)
            .build(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_paths() {
        let c = |m: http::Method, u: &str| classify(&m, &u.parse().expect("uri"));
        assert_eq!(
            c(
                http::Method::PUT,
                "/apis/apps/v1/namespaces/default/replicasets/a/status"
            ),
            ("update".into(), "replicasets/status".into())
        );
        assert_eq!(
            c(http::Method::POST, "/api/v1/namespaces/default/pods"),
            ("create".into(), "pods".into())
        );
        assert_eq!(
            c(http::Method::GET, "/api/v1/pods?watch=true&rv=1"),
            ("watch".into(), "pods".into())
        );
        assert_eq!(
            c(http::Method::GET, "/api/v1/namespaces/x"),
            ("get".into(), "namespaces".into())
        );
    }
}
