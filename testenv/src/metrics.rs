//! Request accounting: counters per verb, resource and code, and watch events sent per
//! resource; rendered as Prometheus text at `/metrics` and readable through the handle.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use parking_lot::Mutex;

/// A snapshot of the counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// `(verb, resource[/subresource], code)` → count.
    pub requests: BTreeMap<(String, String, u16), u64>,
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
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<RequestCounts>,
}

impl Metrics {
    /// Count one request.
    pub fn record(&self, verb: &str, resource: &str, sub: &str, code: u16) {
        let r = if sub.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}/{sub}")
        };
        *self
            .inner
            .lock()
            .requests
            .entry((verb.to_string(), r, code))
            .or_insert(0) += 1;
    }

    /// Count watch events sent.
    pub fn watch_sent(&self, resource: &str, n: u64) {
        if n == 0 {
            return;
        }
        let mut g = self.inner.lock();
        if let Some(c) = g.watch_events.get_mut(resource) {
            *c += n;
        } else {
            g.watch_events.insert(resource.to_string(), n);
        }
    }

    /// A copy of the counters.
    pub fn snapshot(&self) -> RequestCounts {
        self.inner.lock().clone()
    }

    /// Reset every counter.
    pub fn reset(&self) {
        *self.inner.lock() = RequestCounts::default();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_text() {
        let m = Metrics::default();
        m.record("get", "pods", "", 200);
        m.record("get", "pods", "", 404);
        m.record("patch", "deployments", "scale", 200);
        m.watch_sent("pods", 3);
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
    }
}
