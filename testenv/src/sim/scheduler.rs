//! The simulated scheduler: binds pending pods to the feasible node with the fewest pods through
//! `POST pods/{name}/binding`, and reports unschedulable pods with a `PodScheduled=False` condition.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::SimConfig;
use super::annotations::PodBehaviour;
use super::clock::now_time;
use super::events;
use super::informer::{Cache, Change, key_of, spawn_informer};
use super::nodes::NodeSet;

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

fn wants_scheduling(pod: &Pod) -> bool {
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

const BIND_RETRY: Duration = Duration::from_millis(100);

struct Scheduler {
    backoff: mpsc::UnboundedSender<String>,
    client: kube::Client,
    config: Arc<SimConfig>,
    pods: Arc<Cache<Pod>>,
    nodes: Arc<Cache<Node>>,
    /// Pods per node (cache and our own bindings).
    counts: PodCounts,
    /// Keys of the pods seen unbound and not yet seen bound, finished or deleted: the ones
    /// retried when nodes or pods change (whether they found no node or their binding failed).
    pending: BTreeSet<String>,
}

/// Pods per node, kept up to date from pod events and our own bindings, so scheduling one pod
/// does not walk every pod of the cluster. A pod counts on a node while the cache shows it
/// there and not finished, or while we bound it there and the cache has not caught up.
#[derive(Debug, Default)]
struct PodCounts {
    /// Pods bound by us and not yet seen bound in the cache: uid → node.
    assumed: HashMap<String, String>,
    /// Pods the cache shows on a node and not finished: uid → node.
    bound: HashMap<String, String>,
    /// `bound` plus `assumed`, per node.
    per_node: HashMap<String, usize>,
}

impl PodCounts {
    fn up(&mut self, node: &str) {
        *self.per_node.entry(node.to_string()).or_default() += 1;
    }

    fn down(&mut self, node: &str) {
        if let Some(n) = self.per_node.get_mut(node) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_node.remove(node);
            }
        }
    }

    /// Pods counted on `node`.
    fn on(&self, node: &str) -> usize {
        self.per_node.get(node).copied().unwrap_or(0)
    }

    fn is_assumed(&self, uid: &str) -> bool {
        self.assumed.contains_key(uid)
    }

    /// Records a pod as the cache now shows it.
    fn observe(&mut self, pod: &Pod) {
        let Some(uid) = pod.metadata.uid.as_deref() else {
            return;
        };
        let finished = matches!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        );
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .filter(|n| !n.is_empty() && !finished);
        if node.is_some() {
            // Seen bound: no longer an assumption of ours.
            self.forget_assumed(uid);
        }
        let old = self.bound.get(uid).cloned();
        if old.as_deref() == node {
            return;
        }
        if let Some(old) = old {
            self.down(&old);
            self.bound.remove(uid);
        }
        if let Some(new) = node {
            self.up(new);
            self.bound.insert(uid.to_string(), new.to_string());
        }
    }

    /// Forgets a deleted pod.
    fn forget(&mut self, uid: &str) {
        self.forget_assumed(uid);
        if let Some(old) = self.bound.remove(uid) {
            self.down(&old);
        }
    }

    fn forget_assumed(&mut self, uid: &str) {
        if let Some(node) = self.assumed.remove(uid) {
            self.down(&node);
        }
    }

    /// We bound `uid` to `node`; counts there until the cache shows it.
    fn assume(&mut self, uid: String, node: String) {
        if self.bound.contains_key(&uid) {
            return;
        }
        if let Some(old) = self.assumed.insert(uid, node.clone()) {
            self.down(&old);
        }
        self.up(&node);
    }
}

impl Scheduler {
    async fn schedule(&mut self, pod: &Pod) {
        if !wants_scheduling(pod) {
            return;
        }
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        if self.counts.is_assumed(&uid) {
            return;
        }
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
        let behaviour = PodBehaviour::from_annotations(
            pod.metadata.annotations.as_ref(),
            self.config.pod_ready_after,
        );
        let nodes = self.nodes.list();
        let mut reasons = Vec::new();
        let mut best: Option<(usize, String)> = None;
        for node in &nodes {
            let node_name = node.metadata.name.clone().unwrap_or_default();
            let count = self.counts.on(&node_name);
            let why = if behaviour.unschedulable {
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
        let Some((_, target)) = best else {
            let message = unschedulable_message(nodes.len(), &reasons);
            self.report_unschedulable(&api, pod, &message).await;
            return;
        };
        let binding = json!({
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": ns, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": target},
        });
        match api
            .create_subresource::<Value, Value>("binding", &name, &PostParams::default(), &binding)
            .await
        {
            Ok(_) => {
                if self.config.events {
                    let note = format!("Successfully assigned {ns}/{name} to {target}");
                    let (client, pod) = (self.client.clone(), pod.clone());
                    tokio::spawn(async move {
                        events::scheduler_event(
                            &client,
                            &pod,
                            "Normal",
                            "Binding",
                            "Scheduled",
                            note,
                        )
                        .await;
                    });
                }
                self.counts.assume(uid, target);
            }
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
            Err(e) => {
                tracing::debug!(pod = %name, error = %e, "sim scheduler: binding failed");
                // Retried soon, as upstream's backoff queue does.
                let tx = self.backoff.clone();
                let key = key_of(pod);
                tokio::spawn(async move {
                    tokio::time::sleep(BIND_RETRY).await;
                    let _ = tx.send(key);
                });
            }
        }
    }

    async fn report_unschedulable(&self, api: &Api<Pod>, pod: &Pod, message: &str) {
        let conditions = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        if conditions.iter().any(|c| {
            c.type_ == "PodScheduled"
                && c.status == "False"
                && c.reason.as_deref() == Some("Unschedulable")
                && c.message.as_deref() == Some(message)
        }) {
            return;
        }
        let mut list: Vec<Value> = conditions
            .iter()
            .filter(|c| c.type_ != "PodScheduled")
            .filter_map(|c| serde_json::to_value(c).ok())
            .collect();
        list.push(json!({
            "type": "PodScheduled", "status": "False", "lastProbeTime": null,
            "lastTransitionTime": now_time(), "reason": "Unschedulable", "message": message,
        }));
        let patch = json!({"metadata": {"uid": pod.metadata.uid}, "status": {"conditions": list}});
        let name = pod.metadata.name.clone().unwrap_or_default();
        if let Err(e) = api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            tracing::debug!(pod = %name, error = %e, "sim scheduler: condition write failed");
        } else if self.config.events {
            events::scheduler_event(
                &self.client,
                pod,
                "Warning",
                "Scheduling",
                "FailedScheduling",
                message.to_string(),
            )
            .await;
        }
    }
}

/// Run the scheduler until `token` is cancelled.
pub(crate) async fn run(
    client: kube::Client,
    config: Arc<SimConfig>,
    sim_nodes: Arc<NodeSet>,
    token: CancellationToken,
) {
    let (ptx, mut prx) = mpsc::unbounded_channel();
    let (ntx, mut nrx) = mpsc::unbounded_channel();
    let (pods, pod_task) = spawn_informer(Api::<Pod>::all(client.clone()), ptx, token.clone());
    let (nodes, node_task) = spawn_informer(Api::<Node>::all(client.clone()), ntx, token.clone());
    nodes.wait_synced().await;
    let (backoff_tx, mut backoff_rx) = mpsc::unbounded_channel();
    let mut s = Scheduler {
        client,
        config,
        pods,
        nodes,
        counts: PodCounts::default(),
        pending: BTreeSet::new(),
        backoff: backoff_tx,
    };
    // Unschedulable pods are retried on node changes and every few seconds, as upstream's
    // unschedulable queue flushes.
    let mut retry = tokio::time::interval(Duration::from_secs(5));
    retry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = token.cancelled() => break,
            c = prx.recv() => match c {
                Some(Change::Applied(pod)) => {
                    s.counts.observe(&pod);
                    let bound = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
                    if bound || pod.metadata.deletion_timestamp.is_some() {
                        if let Some(u) = &pod.metadata.uid { s.counts.forget_assumed(u); }
                        s.pending.remove(&key_of(&*pod));
                        continue;
                    }
                    s.pending.insert(key_of(&*pod));
                    s.schedule(&pod).await;
                }
                Some(Change::Deleted(pod)) => {
                    if let Some(u) = &pod.metadata.uid { s.counts.forget(u); }
                    s.pending.remove(&key_of(&*pod));
                    // A freed slot may fit a waiting pod.
                    retry_all(&mut s).await;
                }
                None => break,
            },
            c = nrx.recv() => match c {
                Some(change) => {
                    retry_all(&mut s).await;
                    let node = match &change { Change::Applied(n) | Change::Deleted(n) => n };
                    if let Some(rv) = node.metadata.resource_version.as_deref().and_then(|v| v.parse().ok()) {
                        sim_nodes.scheduler_saw(rv);
                    }
                }
                None => break,
            },
            _ = retry.tick() => retry_all(&mut s).await,
            k = backoff_rx.recv() => {
                if let Some(pod) = k.and_then(|k| s.pods.get(&k)) {
                    s.schedule(&pod).await;
                }
            }
        }
    }
    let _ = pod_task.await;
    let _ = node_task.await;
}

/// Tries every pending pod again, in key order (those we bound and the cache has not shown
/// bound yet are skipped by `schedule`).
async fn retry_all(s: &mut Scheduler) {
    let keys: Vec<String> = s.pending.iter().cloned().collect();
    for key in keys {
        match s.pods.get(&key) {
            Some(pod) if wants_scheduling(&pod) => s.schedule(&pod).await,
            _ => {
                s.pending.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(extra: Value) -> Node {
        let mut n = json!({
            "metadata": {"name": "node-1", "labels": {"kubernetes.io/os": "linux"}},
            "spec": {},
            "status": {"allocatable": {"pods": "2"}, "conditions": [{"type": "Ready", "status": "True"}]},
        });
        json_patch::merge(&mut n, &extra);
        serde_json::from_value(n).expect("node")
    }

    fn pod(extra: Value) -> Pod {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}});
        json_patch::merge(&mut p, &extra);
        serde_json::from_value(p).expect("pod")
    }

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

    /// The incremental counts equal a recount over the cache after every step of a sequence
    /// of cache events and bindings (the way `schedule` counted before it kept them).
    #[test]
    fn pod_counts_match_a_full_recount() {
        fn p(uid: &str, node: Option<&str>, phase: Option<&str>) -> Pod {
            pod(
                json!({"metadata": {"uid": uid}, "spec": {"nodeName": node}, "status": {"phase": phase}}),
            )
        }
        enum Step {
            Cache(Box<Pod>),
            Delete(&'static str),
            Bind(&'static str, &'static str),
        }
        let steps = vec![
            Step::Cache(Box::new(p("a", None, None))),
            Step::Bind("a", "n1"),
            Step::Cache(Box::new(p("b", None, None))),
            Step::Bind("b", "n1"),
            // The cache catches up with our binding of a.
            Step::Cache(Box::new(p("a", Some("n1"), None))),
            Step::Cache(Box::new(p("c", Some("n2"), Some("Running")))),
            // c finishes: no longer counted.
            Step::Cache(Box::new(p("c", Some("n2"), Some("Succeeded")))),
            // b is deleted before the cache showed it bound.
            Step::Delete("b"),
            // A binding someone else made.
            Step::Cache(Box::new(p("d", Some("n2"), None))),
            Step::Cache(Box::new(p("d", Some("n2"), Some("Running")))),
            Step::Delete("a"),
            Step::Delete("never-seen"),
        ];
        let mut counts = PodCounts::default();
        let mut cache: BTreeMap<String, Pod> = BTreeMap::new();
        let mut ours: HashMap<String, String> = HashMap::new();
        for (i, step) in steps.into_iter().enumerate() {
            match step {
                Step::Cache(pod) => {
                    counts.observe(&pod);
                    let uid = pod.metadata.uid.clone().unwrap_or_default();
                    if pod
                        .spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_ref())
                        .is_some()
                    {
                        ours.remove(&uid);
                    }
                    cache.insert(uid, *pod);
                }
                Step::Delete(uid) => {
                    counts.forget(uid);
                    cache.remove(uid);
                    ours.remove(uid);
                }
                Step::Bind(uid, node) => {
                    counts.assume(uid.into(), node.into());
                    ours.insert(uid.into(), node.into());
                }
            }
            let mut recount: HashMap<String, usize> = HashMap::new();
            for pod in cache.values() {
                let finished = matches!(
                    pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                    Some("Succeeded" | "Failed")
                );
                if let Some(n) = pod.spec.as_ref().and_then(|s| s.node_name.clone())
                    && !finished
                {
                    *recount.entry(n).or_default() += 1;
                }
            }
            for node in ours.values() {
                *recount.entry(node.clone()).or_default() += 1;
            }
            for node in ["n1", "n2"] {
                assert_eq!(
                    counts.on(node),
                    recount.get(node).copied().unwrap_or(0),
                    "step {i}, node {node}"
                );
            }
        }
        assert_eq!(counts.on("n1"), 0);
        assert_eq!(counts.on("n2"), 1);
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
