//! The controllers' writes of one phase on kcm-testenv, which writes no audit log: from its
//! request counters by client (`testenv_requests_by_client_total{client,verb,resource,code}`
//! in its `/metrics` text), read before and after the phase.

use std::collections::BTreeMap;

use super::controllers_audit::{PhaseWrites, totals};

/// The writes of `clients` (User-Agent products: `kcm`, `kube-controller-manager`) in one phase
/// on kcm-testenv, from its `/metrics` text before and after the phase
/// (`testenv_requests_by_client_total{client,verb,resource,code}`); the harness's kubectl and
/// the simulated nodes count under other clients.
pub(super) fn phase_writes_from_metrics(
    before: &str,
    after: &str,
    clients: &[&str],
) -> PhaseWrites {
    let (before, after) = (
        request_counters(before, clients),
        request_counters(after, clients),
    );
    let mut counts = BTreeMap::new();
    for (key, n) in &after {
        let delta = n.saturating_sub(before.get(key).copied().unwrap_or(0));
        let is_write = matches!(
            key.split(' ').next(),
            Some("create" | "update" | "patch" | "delete" | "deletecollection")
        );
        if delta > 0 && is_write {
            *counts.entry(key.clone()).or_insert(0) += delta;
        }
    }
    totals(counts)
}

/// `verb resource code` → count of `clients`' requests, from kcm-testenv's Prometheus text.
fn request_counters(text: &str, clients: &[&str]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("testenv_requests_by_client_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.split_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix("=\""))
                .and_then(|v| v.strip_suffix('"'))
        };
        if let (Some(client), Some(verb), Some(res), Some(code), Ok(n)) = (
            label("client"),
            label("verb"),
            label("resource"),
            label("code"),
            value.trim().parse::<u64>(),
        ) && clients.contains(&client)
        {
            *out.entry(format!("{verb} {res} {code}")).or_insert(0) += n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testenv_counters_give_the_phase_delta_of_the_controllers_writes() {
        let line = |who: &str, v: &str, r: &str, c: u16, n: u64| {
            format!(
                "testenv_requests_by_client_total{{client=\"{who}\",verb=\"{v}\",resource=\"{r}\",code=\"{c}\"}} {n}\n"
            )
        };
        let before = [
            "# TYPE testenv_requests_by_client_total counter\n".to_string(),
            line("kcm", "create", "pods", 201, 10),
            line("kcm", "list", "pods", 200, 3),
            line("kubectl", "create", "deployments", 201, 2),
        ]
        .concat();
        let after = [
            line("kcm", "create", "pods", 201, 30),
            line("kcm", "list", "pods", 200, 9),
            line("kubectl", "create", "deployments", 201, 4),
            line("kcm-testenv", "patch", "pods/status", 200, 50),
            line("kcm", "update", "replicasets/status", 200, 5),
            line("kcm", "update", "deployments/status", 409, 1),
            line("kcm", "create", "events", 201, 7),
            "testenv_requests_total{verb=\"create\",resource=\"pods\",code=\"201\"} 99\n"
                .to_string(),
        ]
        .concat();
        let w = phase_writes_from_metrics(&before, &after, &["kcm", "kube-controller-manager"]);
        let keys: Vec<&str> = w.counts.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "create events 201",
                "create pods 201",
                "update deployments/status 409",
                "update replicasets/status 200"
            ]
        );
        assert_eq!(w.counts["create pods 201"], 20);
        assert_eq!((w.total, w.conflicts), (26, 1));
    }
}
