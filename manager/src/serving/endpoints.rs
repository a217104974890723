//! The metrics and health endpoints: `/metrics`, `/healthz`, `/livez`, `/readyz`.
//!
//! Health answers follow the Kubernetes component convention: `200 ok` when every check
//! passes; otherwise `500` with one line per check (`[+]name ok` / `[-]name failed: reason
//! withheld`) and `healthz check failed`. `?verbose` lists the checks on success too,
//! `?exclude=name` leaves a check out, and `/healthz/<name>` (`/livez/<name>`,
//! `/readyz/<name>`) runs one check. `/metrics` answers in Prometheus' text format 0.0.4
//! unless the client asks for OpenMetrics.

use std::sync::Arc;

use hyper::StatusCode;
use parking_lot::RwLock;
use prometheus_client::registry::Registry;

use super::debug::Debugging;

/// Content type of Prometheus' text exposition format.
pub const TEXT_0_0_4: &str = "text/plain; version=0.0.4; charset=utf-8";
/// Content type of OpenMetrics.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// Content type of health answers.
pub const PLAIN: &str = "text/plain; charset=utf-8";

/// A named health check: `Ok(())` when healthy, else the reason (logged, not served).
pub type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// Which endpoints a check belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// `/healthz` and `/livez`: the process works (e.g. the leader still renews its lease).
    Live,
    /// `/readyz` only: the process is ready (e.g. caches synced).
    Ready,
}

/// Health checks and the metrics registry served by [`serve`](super::serve).
#[derive(Clone, Default)]
pub struct Endpoints {
    checks: Arc<RwLock<Vec<(String, Probe, Check)>>>,
    registry: Arc<RwLock<Registry>>,
    debugging: Arc<RwLock<Option<Debugging>>>,
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .checks
            .read()
            .iter()
            .map(|(n, _, _)| n.clone())
            .collect();
        f.debug_struct("Endpoints")
            .field("checks", &names)
            .finish_non_exhaustive()
    }
}

impl Endpoints {
    /// Endpoints with only the always-passing `ping` check.
    pub fn new() -> Self {
        let endpoints = Endpoints::default();
        endpoints.add_check("ping", Probe::Live, Arc::new(|| Ok(())));
        endpoints
    }

    /// Adds a check; `Live` checks also count for readiness, as in kube-controller-manager.
    pub fn add_check(&self, name: &str, probe: Probe, check: Check) {
        self.checks.write().push((name.to_string(), probe, check));
    }

    /// Serves the `/debug/pprof` and `/debug/flags` endpoints too (`--profiling`).
    pub fn enable_debugging(&self, debugging: Debugging) {
        *self.debugging.write() = Some(debugging);
    }

    /// The debugging endpoints, when enabled.
    pub fn debugging(&self) -> Option<Debugging> {
        self.debugging.read().clone()
    }

    /// The registry rendered at `/metrics`; register collectors here.
    pub fn registry(&self) -> Arc<RwLock<Registry>> {
        self.registry.clone()
    }

    /// Answers one GET: status, content type and body. `accept` is the request's Accept
    /// header (for `/metrics`).
    pub fn respond(
        &self,
        path: &str,
        query: Option<&str>,
        accept: Option<&str>,
    ) -> (StatusCode, &'static str, String) {
        let params: Vec<(&str, &str)> = query
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        let verbose = params
            .iter()
            .any(|(k, v)| *k == "verbose" && matches!(*v, "" | "true" | "1"));
        let exclude: Vec<&str> = params
            .iter()
            .filter(|(k, _)| *k == "exclude")
            .map(|(_, v)| *v)
            .collect();
        if path == "/metrics" {
            let open_metrics = accept.is_some_and(|a| a.contains("application/openmetrics-text"));
            let mut out = String::new();
            return match prometheus_client::encoding::text::encode(&mut out, &self.registry.read())
            {
                Ok(()) if open_metrics => (StatusCode::OK, OPENMETRICS, out),
                Ok(()) => (
                    StatusCode::OK,
                    TEXT_0_0_4,
                    crate::metrics_text::to_text_0_0_4(&out),
                ),
                Err(e) => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    PLAIN,
                    format!("encoding metrics: {e}\n"),
                ),
            };
        }
        let (endpoint, check) = match path[1..].split_once('/') {
            Some((endpoint, check)) => (format!("/{endpoint}"), Some(check)),
            None => (path.to_string(), None),
        };
        let probes: &[Probe] = match endpoint.as_str() {
            "/healthz" | "/livez" => &[Probe::Live],
            "/readyz" => &[Probe::Live, Probe::Ready],
            _ => {
                return (
                    StatusCode::NOT_FOUND,
                    PLAIN,
                    "404 page not found\n".to_string(),
                );
            }
        };
        let (status, body) = match check {
            Some(name) => self.one(probes, name),
            None => self.health(probes, verbose, &exclude),
        };
        (status, PLAIN, body)
    }

    fn one(&self, probes: &[Probe], name: &str) -> (StatusCode, String) {
        let checks = self.checks.read();
        let Some((_, _, check)) = checks
            .iter()
            .find(|(n, probe, _)| n == name && probes.contains(probe))
        else {
            return (StatusCode::NOT_FOUND, "404 page not found\n".to_string());
        };
        match check() {
            Ok(()) => (StatusCode::OK, "ok".to_string()),
            Err(reason) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {reason}\n"),
            ),
        }
    }

    fn health(&self, probes: &[Probe], verbose: bool, exclude: &[&str]) -> (StatusCode, String) {
        let mut lines = String::new();
        let mut failed = false;
        for (name, probe, check) in self.checks.read().iter() {
            if !probes.contains(probe) {
                continue;
            }
            if exclude.contains(&name.as_str()) {
                lines.push_str(&format!("[+]{name} excluded: ok\n"));
                continue;
            }
            match check() {
                Ok(()) => lines.push_str(&format!("[+]{name} ok\n")),
                Err(reason) => {
                    tracing::info!(check = %name, %reason, "health check failed");
                    lines.push_str(&format!("[-]{name} failed: reason withheld\n"));
                    failed = true;
                }
            }
        }
        if failed {
            lines.push_str("healthz check failed\n");
            (StatusCode::INTERNAL_SERVER_ERROR, lines)
        } else if verbose {
            lines.push_str("healthz check passed\n");
            (StatusCode::OK, lines)
        } else {
            (StatusCode::OK, "ok".to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// (status, body) of a health GET.
    fn get(endpoints: &Endpoints, path: &str, query: Option<&str>) -> (StatusCode, String) {
        let (status, content_type, body) = endpoints.respond(path, query, None);
        assert_eq!(content_type, PLAIN);
        (status, body)
    }

    #[test]
    fn health_answers_follow_the_component_convention() {
        let endpoints = Endpoints::new();
        let synced = Arc::new(AtomicBool::new(false));
        let s = synced.clone();
        endpoints.add_check(
            "informer-sync",
            Probe::Ready,
            Arc::new(move || {
                if s.load(Ordering::SeqCst) {
                    Ok(())
                } else {
                    Err("not synced".into())
                }
            }),
        );
        let ok = (StatusCode::OK, "ok".to_string());
        let failing = (
            StatusCode::INTERNAL_SERVER_ERROR,
            "[+]ping ok\n[-]informer-sync failed: reason withheld\nhealthz check failed\n"
                .to_string(),
        );
        let cases: &[(&str, Option<&str>, (StatusCode, String))] = &[
            ("/healthz", None, ok.clone()),
            ("/livez", None, ok.clone()),
            ("/readyz", None, failing),
            ("/readyz/ping", None, ok.clone()),
            ("/healthz/ping", None, ok.clone()),
            (
                "/readyz/informer-sync",
                None,
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal server error: not synced\n".into(),
                ),
            ),
            // informer-sync is a readiness check only.
            (
                "/livez/informer-sync",
                None,
                (StatusCode::NOT_FOUND, "404 page not found\n".into()),
            ),
            ("/readyz", Some("exclude=informer-sync"), ok.clone()),
            (
                "/readyz",
                Some("verbose&exclude=informer-sync"),
                (
                    StatusCode::OK,
                    "[+]ping ok\n[+]informer-sync excluded: ok\nhealthz check passed\n".into(),
                ),
            ),
        ];
        for (path, query, want) in cases {
            assert_eq!(&get(&endpoints, path, *query), want, "{path} {query:?}");
        }
        synced.store(true, Ordering::SeqCst);
        assert_eq!(get(&endpoints, "/readyz", None), ok);
        assert_eq!(
            get(&endpoints, "/readyz", Some("verbose")),
            (
                StatusCode::OK,
                "[+]ping ok\n[+]informer-sync ok\nhealthz check passed\n".into()
            )
        );
        assert_eq!(
            endpoints.respond("/nope", None, None).0,
            StatusCode::NOT_FOUND
        );
    }

    #[test]
    fn metrics_are_text_0_0_4_unless_openmetrics_is_asked_for() {
        let endpoints = Endpoints::new();
        let gauge = prometheus_client::metrics::gauge::Gauge::<i64>::default();
        gauge.set(1);
        endpoints.registry().write().register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.",
            gauge,
        );
        let (status, content_type, body) = endpoints.respond("/metrics", None, None);
        assert_eq!((status, content_type), (StatusCode::OK, TEXT_0_0_4));
        assert!(body.contains("leader_election_master_status 1"), "{body}");
        assert!(!body.contains("# EOF"), "{body}");
        let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
        let (_, content_type, body) = endpoints.respond("/metrics", None, Some(accept));
        assert_eq!(content_type, OPENMETRICS);
        assert!(body.ends_with("# EOF\n"), "{body}");
    }
}
