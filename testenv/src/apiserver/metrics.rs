//! Request accounting: counters per verb, resource and code, and watch events sent per
//! resource; rendered as Prometheus text at `/metrics` and readable through the handle.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::registry::{RESOURCES, ResourceInfo};

/// A snapshot of the counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// `(verb, resource[/subresource], code)` → count.
    pub requests: BTreeMap<(String, String, u16), u64>,
    /// `(client, verb, resource[/subresource], code)` → count, where the client is the
    /// product of the request's User-Agent ([`client_name`]): who made which requests.
    pub by_client: BTreeMap<(String, String, String, u16), u64>,
    /// resource → watch events sent (bookmarks and errors included).
    pub watch_events: BTreeMap<String, u64>,
}

impl RequestCounts {
    /// Requests with this verb and resource (`deployments` or `deployments/scale`), any code.
    pub fn count(&self, verb: &str, resource: &str) -> u64 {
        self.requests
            .iter()
            .filter(|((v, r, _), _)| v == verb && r == resource)
            .map(|(_, n)| n)
            .sum()
    }

    /// Requests that are reads (get, list, watch).
    pub fn reads(&self) -> u64 {
        self.requests
            .iter()
            .filter(|((v, _, _), _)| matches!(v.as_str(), "get" | "list" | "watch"))
            .map(|(_, n)| n)
            .sum()
    }

    /// Requests that are writes.
    pub fn writes(&self) -> u64 {
        self.requests
            .iter()
            .filter(|((v, _, _), _)| {
                matches!(
                    v.as_str(),
                    "create" | "update" | "patch" | "delete" | "deletecollection"
                )
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// Watch events sent for a resource.
    pub fn watch_events(&self, resource: &str) -> u64 {
        self.watch_events.get(resource).copied().unwrap_or(0)
    }
}

/// The live counters.
#[derive(Debug)]
pub struct Metrics {
    /// `(client, verb, resource[/subresource], code)` → count; the per-verb totals of
    /// [`RequestCounts::requests`] are summed from it in [`Metrics::snapshot`].
    by_client: Mutex<BTreeMap<(String, String, String, u16), u64>>,
    /// Watch events sent, per entry of [`RESOURCES`] (lock-free: hot path).
    watch: Vec<AtomicU64>,
    /// Watch events sent for custom resources, by plural.
    custom_watch: Mutex<BTreeMap<String, u64>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            by_client: Mutex::new(BTreeMap::new()),
            watch: RESOURCES.iter().map(|_| AtomicU64::new(0)).collect(),
            custom_watch: Mutex::new(BTreeMap::new()),
        }
    }
}

impl Metrics {
    /// Count one request of `client` (see [`client_name`]).
    pub fn record(&self, client: &str, verb: &str, resource: &str, sub: &str, code: u16) {
        let r = if sub.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}/{sub}")
        };
        *self
            .by_client
            .lock()
            .entry((client.to_string(), verb.to_string(), r, code))
            .or_insert(0) += 1;
    }

    /// Count watch events sent for a resource.
    pub fn watch_sent(&self, res: &ResourceInfo, n: u64) {
        if let Some(i) = RESOURCES.iter().position(|r| std::ptr::eq(r, res))
            && let Some(c) = self.watch.get(i)
        {
            c.fetch_add(n, Ordering::Relaxed);
        } else if res.is_custom() {
            *self
                .custom_watch
                .lock()
                .entry(res.plural.to_string())
                .or_insert(0) += n;
        }
    }

    /// A copy of the counters.
    pub fn snapshot(&self) -> RequestCounts {
        let by_client = self.by_client.lock().clone();
        let mut s = RequestCounts::default();
        for ((_, v, r, c), n) in &by_client {
            *s.requests.entry((v.clone(), r.clone(), *c)).or_insert(0) += n;
        }
        s.by_client = by_client;
        for (r, c) in RESOURCES.iter().zip(&self.watch) {
            let n = c.load(Ordering::Relaxed);
            if n > 0 {
                *s.watch_events.entry(r.plural.to_string()).or_insert(0) += n;
            }
        }
        for (r, n) in self.custom_watch.lock().iter() {
            *s.watch_events.entry(r.clone()).or_insert(0) += n;
        }
        s
    }

    /// Reset every counter.
    pub fn reset(&self) {
        self.by_client.lock().clear();
        for c in &self.watch {
            c.store(0, Ordering::Relaxed);
        }
        self.custom_watch.lock().clear();
    }

    /// Prometheus text exposition.
    pub fn render_prometheus(&self) -> String {
        let s = self.snapshot();
        let mut out = String::new();
        out.push_str(
            "# HELP testenv_requests_total API requests served, by verb, resource and code.\n",
        );
        out.push_str("# TYPE testenv_requests_total counter\n");
        for ((v, r, c), n) in &s.requests {
            let _ = writeln!(
                out,
                "testenv_requests_total{{verb=\"{v}\",resource=\"{r}\",code=\"{c}\"}} {n}"
            );
        }
        out.push_str(
            "# HELP testenv_requests_by_client_total API requests served, by client (the \
             User-Agent's product), verb, resource and code.\n",
        );
        out.push_str("# TYPE testenv_requests_by_client_total counter\n");
        for ((client, v, r, c), n) in &s.by_client {
            let _ = writeln!(
                out,
                "testenv_requests_by_client_total{{client=\"{client}\",verb=\"{v}\",resource=\"{r}\",code=\"{c}\"}} {n}"
            );
        }
        out.push_str("# HELP testenv_watch_events_sent_total Watch events sent, by resource.\n");
        out.push_str("# TYPE testenv_watch_events_sent_total counter\n");
        for (r, n) in &s.watch_events {
            let _ = writeln!(
                out,
                "testenv_watch_events_sent_total{{resource=\"{r}\"}} {n}"
            );
        }
        out
    }
}

/// The client a request counts under: the product of its User-Agent, the text before the
/// first `/` (`kubectl/v1.33.0 (linux/amd64) kubernetes/…` → `kubectl`), limited to the
/// characters of a product token and 64 bytes; `unknown` when there is none.
pub fn client_name(user_agent: &str) -> String {
    let product: String = user_agent
        .split('/')
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(64)
        .collect();
    if product.is_empty() {
        "unknown".to_string()
    } else {
        product
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_text() {
        let m = Metrics::default();
        m.record("kubectl", "get", "pods", "", 200);
        m.record("kcm", "get", "pods", "", 404);
        m.record("kcm", "patch", "deployments", "scale", 200);
        m.watch_sent(crate::registry::find("", "v1", "pods").expect("pods"), 3);
        let s = m.snapshot();
        assert_eq!(s.count("get", "pods"), 2);
        assert_eq!(s.count("patch", "deployments/scale"), 1);
        assert_eq!(s.reads(), 2);
        assert_eq!(s.writes(), 1);
        assert_eq!(s.watch_events("pods"), 3);
        let t = m.render_prometheus();
        assert!(
            t.contains("testenv_requests_total{verb=\"get\",resource=\"pods\",code=\"404\"} 1")
        );
        assert!(t.contains("testenv_watch_events_sent_total{resource=\"pods\"} 3"));
        assert!(t.contains(
            "testenv_requests_by_client_total{client=\"kcm\",verb=\"patch\",resource=\"deployments/scale\",code=\"200\"} 1"
        ));
        assert_eq!(s.by_client.len(), 3);
    }

    #[test]
    fn clients_are_user_agent_products() {
        let cases = [
            (
                "kubectl/v1.33.0 (linux/amd64) kubernetes/abc1234",
                "kubectl",
            ),
            (
                "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/x/replicaset-controller",
                "kube-controller-manager",
            ),
            (
                "kcm/v0.1.0 (linux/amd64) kubernetes/unknown/deployment-controller",
                "kcm",
            ),
            ("", "unknown"),
            ("/v1", "unknown"),
            ("we\"ird}{\n", "weird"),
        ];
        for (agent, want) in cases {
            assert_eq!(client_name(agent), want, "{agent:?}");
        }
        assert_eq!(client_name(&"x".repeat(100)).len(), 64);
    }
}
