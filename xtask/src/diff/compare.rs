//! Differences between what upstream's controllers (A) and kcm (B) left observable: one line per
//! differing leaf, with both values.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::audit::Writes;
use super::normalize::Snapshot;

/// One difference: where, and the value under upstream (A) and under kcm (B).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Difference {
    /// What differs (`ReplicaSet/web-{web#1} .spec.replicas`, `event Normal ...`, ...).
    pub what: String,
    /// Upstream's value (`-` when absent).
    pub upstream: String,
    /// kcm's value (`-` when absent).
    pub kcm: String,
    /// Why it differs, when the run's own evidence says (see [`super::explained::by_evidence`]).
    pub because: Option<&'static str>,
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// Leaf-by-leaf differences of two JSON values under `path`.
pub fn json_diff(path: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Difference>) {
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                json_diff(&format!("{path}.{k}"), x.get(k), y.get(k), out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                json_diff(&format!("{path}[{i}]"), Some(p), Some(q), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Difference {
            what: path.to_string(),
            upstream: show(a),
            kcm: show(b),
            because: None,
        }),
    }
}

/// Every difference between two snapshots of the same scenario step.
pub fn snapshots(a: &Snapshot, b: &Snapshot) -> Vec<Difference> {
    let mut out = Vec::new();
    if a.hashes != b.hashes {
        let show = |h: &BTreeMap<String, String>| {
            h.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        out.push(Difference {
            what: "pod-template-hash values".into(),
            upstream: show(&a.hashes),
            kcm: show(&b.hashes),
            because: None,
        });
    }
    let keys: BTreeSet<&String> = a.objects.keys().chain(b.objects.keys()).collect();
    for k in keys {
        json_diff(k, a.objects.get(k), b.objects.get(k), &mut out);
    }
    let keys: BTreeSet<&String> = a.pods.keys().chain(b.pods.keys()).collect();
    for k in keys {
        let (pa, pb) = (
            a.pods.get(k).cloned().unwrap_or_default(),
            b.pods.get(k).cloned().unwrap_or_default(),
        );
        if pa.len() != pb.len() {
            out.push(Difference {
                what: format!("pods {k}: count"),
                upstream: pa.len().to_string(),
                kcm: pb.len().to_string(),
                because: None,
            });
            continue;
        }
        for (p, q) in pa.iter().zip(&pb) {
            json_diff(&format!("Pod/{k}"), Some(p), Some(q), &mut out);
        }
    }
    out.extend(count_differences("event", &a.events, &b.events, |c| {
        c.map_or("-".into(), |c| format!("×{c}"))
    }));
    out.dedup();
    out
}

/// Differences of the controllers' writes: counts per (verb, resource, code), and the order of
/// ReplicaSet scale writes.
pub fn writes(a: &Writes, b: &Writes) -> Vec<Difference> {
    let mut out = count_differences("writes", &a.counts, &b.counts, |c| {
        c.map_or("0".into(), |c| c.to_string())
    });
    if a.scale_order != b.scale_order {
        out.push(Difference {
            what: "order of ReplicaSet scale writes".into(),
            upstream: a.scale_order.join(", "),
            kcm: b.scale_order.join(", "),
            because: None,
        });
    }
    out
}

/// One difference per key whose count differs between `a` (upstream) and `b` (kcm), named
/// `what key`, each side's count as `show` writes it (`None`: the key is absent).
fn count_differences<V: PartialEq>(
    what: &str,
    a: &BTreeMap<String, V>,
    b: &BTreeMap<String, V>,
    show: impl Fn(Option<&V>) -> String,
) -> Vec<Difference> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| Difference {
            what: format!("{what} {k}"),
            upstream: show(a.get(k)),
            kcm: show(b.get(k)),
            because: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_each_differing_leaf_with_both_values() {
        let mut out = Vec::new();
        json_diff(
            "Deployment/web",
            Some(&json!({"status": {"replicas": 3, "conditions": [{"reason": "A"}]}, "x": 1})),
            Some(&json!({"status": {"replicas": 4, "conditions": [{"reason": "A"}]}, "y": "z"})),
            &mut out,
        );
        let got: Vec<(String, String, String)> = out
            .into_iter()
            .map(|d| (d.what, d.upstream, d.kcm))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "Deployment/web.status.replicas".into(),
                    "3".into(),
                    "4".into()
                ),
                ("Deployment/web.x".into(), "1".into(), "-".into()),
                ("Deployment/web.y".into(), "-".into(), "z".into()),
            ]
        );
    }

    #[test]
    fn arrays_of_other_lengths_differ_whole() {
        let mut out = Vec::new();
        json_diff("p", Some(&json!([1, 2])), Some(&json!([1])), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].upstream.as_str(), out[0].kcm.as_str()),
            ("[1,2]", "[1]")
        );
    }

    #[test]
    fn equal_snapshots_have_no_difference() {
        let s = Snapshot::default();
        assert!(snapshots(&s, &s).is_empty());
        let w = Writes::default();
        assert!(writes(&w, &w).is_empty());
    }
}
