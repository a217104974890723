//! The scheduler's decision, free of I/O: which nodes can take a pod (upstream's filter plugins:
//! NodeUnschedulable, TaintToleration, node readiness, NodeAffinity's `nodeSelector`, the pod
//! limit), which one it gets (the fewest pods), and upstream's `PodScheduled=False` message when
//! none can.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};

/// Upstream's default scheduler name.
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// Why a node cannot take a pod (upstream filter plugin messages).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Unfit {
    NotReady,
    Taint(String),
    Unschedulable,
    TooManyPods,
    Selector,
}

impl Unfit {
    fn text(&self) -> String {
        match self {
            Unfit::NotReady => "node(s) were not ready".into(),
            Unfit::Taint(t) => format!("node(s) had untolerated taint {{{t}: }}"),
            Unfit::Unschedulable => "node(s) were unschedulable".into(),
            Unfit::TooManyPods => "Too many pods".into(),
            Unfit::Selector => "node(s) didn't match Pod's node affinity/selector".into(),
        }
    }
}

/// The `PodScheduled=False` message upstream writes: `0/3 nodes are available: <counts>. preemption: ...`.
pub(crate) fn unschedulable_message(total: usize, reasons: &[Unfit]) -> String {
    if total == 0 {
        return "no nodes available to schedule pods".into();
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for r in reasons {
        *counts.entry(r.text()).or_default() += 1;
    }
    let mut parts: Vec<String> = counts.iter().map(|(t, n)| format!("{n} {t}")).collect();
    parts.sort();
    format!(
        "0/{total} nodes are available: {}. preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling.",
        parts.join(", ")
    )
}

fn tolerates(pod: &Pod, key: &str, effect: &str) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.tolerations.as_ref())
        .is_some_and(|ts| {
            ts.iter().any(|t| {
                let key_ok = match t.key.as_deref() {
                    None | Some("") => t.operator.as_deref() == Some("Exists"),
                    Some(k) => k == key,
                };
                let effect_ok = t
                    .effect
                    .as_deref()
                    .is_none_or(|e| e.is_empty() || e == effect);
                key_ok && effect_ok
            })
        })
}

/// Why `node` cannot run `pod`, or None when it can. `count` is the node's pods.
pub(crate) fn unfit(pod: &Pod, node: &Node, count: usize) -> Option<Unfit> {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True");
    let spec = node.spec.as_ref();
    if spec.and_then(|s| s.unschedulable).unwrap_or(false) {
        return Some(Unfit::Unschedulable);
    }
    for taint in spec.and_then(|s| s.taints.as_ref()).into_iter().flatten() {
        if (taint.effect == "NoSchedule" || taint.effect == "NoExecute")
            && !tolerates(pod, &taint.key, &taint.effect)
        {
            return Some(Unfit::Taint(taint.key.clone()));
        }
    }
    if !ready {
        return Some(Unfit::NotReady);
    }
    if let Some(selector) = pod.spec.as_ref().and_then(|s| s.node_selector.as_ref()) {
        let labels = node.metadata.labels.clone().unwrap_or_default();
        if selector.iter().any(|(k, v)| labels.get(k) != Some(v)) {
            return Some(Unfit::Selector);
        }
    }
    let max_pods = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .and_then(|a| a.get("pods"))
        .and_then(|q| q.0.parse::<usize>().ok())
        .unwrap_or(110);
    if count >= max_pods {
        return Some(Unfit::TooManyPods);
    }
    None
}

/// Whether the pod is this scheduler's to place: unbound, ours, not finished, not deleting.
pub(crate) fn wants_scheduling(pod: &Pod) -> bool {
    let spec = pod.spec.as_ref();
    let unbound = spec
        .and_then(|s| s.node_name.as_deref())
        .is_none_or(str::is_empty);
    let ours = spec
        .and_then(|s| s.scheduler_name.as_deref())
        .is_none_or(|n| n.is_empty() || n == DEFAULT_SCHEDULER);
    let finished = matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    );
    unbound && ours && !finished && pod.metadata.deletion_timestamp.is_none()
}

/// Where a pod goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Bind it to this node.
    Bind(String),
    /// No node fits: the `PodScheduled=False` message.
    Unschedulable(String),
}

/// The feasible node with the fewest pods (the first of equals, in `nodes` order), or why none
/// is. `pods_on` counts a node's pods; `never` is a pod that asked never to be scheduled (the
/// `sim.kcm-rs.io/unschedulable` annotation), reported as matching no node.
pub(crate) fn decide<'a>(
    pod: &Pod,
    nodes: impl ExactSizeIterator<Item = &'a Node>,
    pods_on: impl Fn(&str) -> usize,
    never: bool,
) -> Decision {
    let total = nodes.len();
    let mut reasons = Vec::new();
    let mut best: Option<(usize, String)> = None;
    for node in nodes {
        let node_name = node.metadata.name.clone().unwrap_or_default();
        let count = pods_on(&node_name);
        let why = if never {
            Some(Unfit::Selector)
        } else {
            unfit(pod, node, count)
        };
        match why {
            Some(r) => reasons.push(r),
            None => {
                if best.as_ref().is_none_or(|(c, _)| count < *c) {
                    best = Some((count, node_name));
                }
            }
        }
    }
    match best {
        Some((_, node)) => Decision::Bind(node),
        None => Decision::Unschedulable(unschedulable_message(total, &reasons)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_objects::{node, pod};
    use super::*;
    use serde_json::{Value, json};
    #[test]
    fn filters() {
        let cases: Vec<(&str, Value, Value, usize, Option<Unfit>)> = vec![
            ("fits", json!({}), json!({}), 0, None),
            ("full", json!({}), json!({}), 2, Some(Unfit::TooManyPods)),
            (
                "not ready",
                json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}),
                json!({}),
                0,
                Some(Unfit::NotReady),
            ),
            (
                "tainted",
                json!({"spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]}}),
                json!({}),
                0,
                Some(Unfit::Taint("node.kubernetes.io/unreachable".into())),
            ),
            (
                "tolerated",
                json!({"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}),
                json!({"spec": {"tolerations": [{"key": "k", "operator": "Exists"}]}}),
                0,
                None,
            ),
            (
                "cordoned",
                json!({"spec": {"unschedulable": true}}),
                json!({}),
                0,
                Some(Unfit::Unschedulable),
            ),
            (
                "selector",
                json!({}),
                json!({"spec": {"nodeSelector": {"disk": "ssd"}}}),
                0,
                Some(Unfit::Selector),
            ),
            (
                "selector ok",
                json!({}),
                json!({"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}}}),
                0,
                None,
            ),
        ];
        for (name, n, p, count, want) in cases {
            assert_eq!(unfit(&pod(p), &node(n), count), want, "{name}");
        }
    }

    #[test]
    fn decisions() {
        let named = |name: &str, extra: Value| {
            let mut n = node(extra);
            n.metadata.name = Some(name.into());
            n
        };
        let nodes = [
            named("node-1", json!({})),
            named("node-2", json!({})),
            named("node-3", json!({"spec": {"unschedulable": true}})),
        ];
        let counts = |c1: usize, c2: usize| {
            move |n: &str| match n {
                "node-1" => c1,
                "node-2" => c2,
                _ => 0,
            }
        };
        let p = pod(json!({}));
        // the fewest pods wins; the first of equals; a cordoned node never
        assert_eq!(
            decide(&p, nodes.iter(), counts(1, 0), false),
            Decision::Bind("node-2".into())
        );
        assert_eq!(
            decide(&p, nodes.iter(), counts(1, 1), false),
            Decision::Bind("node-1".into())
        );
        assert_eq!(
            decide(&p, nodes.iter(), counts(2, 2), false),
            Decision::Unschedulable(unschedulable_message(
                3,
                &[Unfit::TooManyPods, Unfit::TooManyPods, Unfit::Unschedulable]
            ))
        );
        // the unschedulable annotation: no node matches
        assert_eq!(
            decide(&p, nodes.iter(), counts(0, 0), true),
            Decision::Unschedulable(unschedulable_message(3, &vec![Unfit::Selector; 3]))
        );
        assert_eq!(
            decide(&p, [].iter(), counts(0, 0), false),
            Decision::Unschedulable("no nodes available to schedule pods".into())
        );
    }

    #[test]
    fn messages() {
        assert_eq!(
            unschedulable_message(3, &[Unfit::Selector, Unfit::Selector, Unfit::Selector]),
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
        assert_eq!(
            unschedulable_message(
                3,
                &[
                    Unfit::TooManyPods,
                    Unfit::Taint("node.kubernetes.io/unreachable".into()),
                    Unfit::Taint("node.kubernetes.io/unreachable".into())
                ]
            ),
            "0/3 nodes are available: 1 Too many pods, 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
        assert_eq!(
            unschedulable_message(0, &[]),
            "no nodes available to schedule pods"
        );
    }
}
