//! How long a namespace's controllers paused after a replica was SIGKILLed, from the audit log:
//! for each namespace, the time from the benchmark's scale request (`deployments/scale`, received
//! after the kill) to the controllers' first write there after it. The killed replica's
//! namespaces wait for the handover (its Lease to expire, the ring to move, a fresh list); the
//! others' should not wait at all.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::controllers::controllers_audit::micros;
use crate::diff::audit;

/// Per-namespace pauses in seconds, the killed replica's apart from the others'.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Pauses {
    /// The killed replica's namespaces.
    pub(super) killed: Vec<f64>,
    /// Every other namespace.
    pub(super) others: Vec<f64>,
    /// Namespaces scaled after the kill where no controller wrote afterwards.
    pub(super) never_resumed: usize,
}

fn received(e: &Value) -> Option<i64> {
    micros(e["requestReceivedTimestamp"].as_str()?)
}

/// The pauses among audit `events` after `since` (µs since the epoch, the kill), with
/// `killed` the killed replica's namespaces.
pub(super) fn pauses(events: &[Value], since: i64, killed: &BTreeSet<String>) -> Pauses {
    let mut scaled: BTreeMap<&str, i64> = BTreeMap::new();
    let mut writes: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for e in events {
        let Some(at) = received(e).filter(|t| *t >= since) else {
            continue;
        };
        if e["stage"] != "ResponseComplete" {
            continue;
        }
        let ns = e["objectRef"]["namespace"].as_str().unwrap_or_default();
        let verb = e["verb"].as_str().unwrap_or_default();
        let resource = e["objectRef"]["resource"].as_str().unwrap_or_default();
        let sub = e["objectRef"]["subresource"].as_str().unwrap_or_default();
        if !matches!(verb, "create" | "update" | "patch" | "delete") || ns.is_empty() {
            continue;
        }
        if audit::by_controllers(e) {
            if resource != "events" {
                writes.entry(ns).or_default().push(at);
            }
        } else if resource == "deployments" && sub == "scale" {
            let first = scaled.entry(ns).or_insert(at);
            *first = (*first).min(at);
        }
    }
    let mut out = Pauses::default();
    for (ns, at) in scaled {
        let resumed = writes
            .get(ns)
            .and_then(|w| w.iter().copied().filter(|t| *t >= at).min());
        let Some(resumed) = resumed else {
            out.never_resumed += 1;
            continue;
        };
        let pause = (resumed - at) as f64 / 1e6;
        if killed.contains(ns) {
            out.killed.push(pause);
        } else {
            out.others.push(pause);
        }
    }
    out
}

/// The median and the maximum of `v` (`None` when empty).
pub(super) fn median_max(v: &[f64]) -> Option<(f64, f64)> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let max = *v.last()?;
    Some((v[v.len() / 2], max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(user: &str, verb: &str, resource: &str, sub: &str, ns: &str, second: u32) -> Value {
        json!({"stage": "ResponseComplete", "verb": verb, "user": {"username": user},
               "objectRef": {"resource": resource, "subresource": sub, "namespace": ns},
               "requestReceivedTimestamp": format!("2026-11-28T10:00:{second:02}.000000Z")})
    }

    const KCM: &str = "system:serviceaccount:kube-system:kcm";

    #[test]
    fn a_pause_runs_from_the_scale_to_the_first_controller_write() {
        let since = micros("2026-11-28T10:00:10.000000Z").expect("ts");
        let events = [
            // Before the kill: ignored.
            event("admin", "patch", "deployments", "scale", "a", 5),
            event(KCM, "update", "replicasets", "", "a", 6),
            // a (the killed replica's): scaled at 11, resumed at 30.
            event("admin", "patch", "deployments", "scale", "a", 11),
            event(KCM, "create", "events", "", "a", 12),
            event(KCM, "update", "replicasets", "", "a", 30),
            // b: scaled at 12, written at 12 and 13.
            event("admin", "patch", "deployments", "scale", "b", 12),
            event(KCM, "update", "replicasets", "", "b", 13),
            event(KCM, "create", "pods", "", "b", 12),
            // c: scaled, never written.
            event("admin", "patch", "deployments", "scale", "c", 14),
        ];
        let killed: BTreeSet<String> = ["a".to_string()].into();
        let p = pauses(&events, since, &killed);
        assert_eq!(
            p,
            Pauses {
                killed: vec![19.0],
                others: vec![0.0],
                never_resumed: 1
            }
        );
        assert_eq!(median_max(&[3.0, 1.0, 2.0]), Some((2.0, 3.0)));
        assert_eq!(median_max(&[]), None);
    }
}
