//! The simulated scheduler: binds pending pods to the feasible node with the fewest pods through
//! `POST pods/{name}/binding`, and reports unschedulable pods with a `PodScheduled=False` condition.
//!
//! This file is the loop and its writes (informers, retries, bindings, conditions, events); the
//! decision itself is [`filter`], a free function over plain data; [`pod_counts`] keeps the
//! pods per node.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod filter;
mod pod_counts;

use super::annotations::PodBehaviour;
use super::config::SimConfig;
use super::events;
use super::informer::{Cache, Change, key_of, spawn_informer};
use super::nodes::NodeSet;
use super::timestamps::now_time;
pub use filter::DEFAULT_SCHEDULER;
use filter::{Decision, decide, wants_scheduling};
use pod_counts::PodCounts;

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
        let target = match decide(
            pod,
            nodes.iter().map(|n| &**n),
            |node| self.counts.on(node),
            behaviour.unschedulable,
        ) {
            Decision::Bind(node) => node,
            Decision::Unschedulable(message) => {
                self.report_unschedulable(&api, pod, &message).await;
                return;
            }
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
    // Schedule once the nodes are listed; a shutdown before that ends the scheduler too.
    if token
        .run_until_cancelled(nodes.wait_synced())
        .await
        .is_none()
    {
        return;
    }
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

/// Nodes and pods for the scheduler's unit tests: a Ready node with room for two pods, a pod
/// with one container, each merged with `extra`.
#[cfg(test)]
mod test_objects {
    use k8s_openapi::api::core::v1::{Node, Pod};
    use serde_json::{Value, json};

    pub(super) fn node(extra: Value) -> Node {
        let mut n = json!({
            "metadata": {"name": "node-1", "labels": {"kubernetes.io/os": "linux"}},
            "spec": {},
            "status": {"allocatable": {"pods": "2"}, "conditions": [{"type": "Ready", "status": "True"}]},
        });
        json_patch::merge(&mut n, &extra);
        serde_json::from_value(n).expect("node")
    }

    pub(super) fn pod(extra: Value) -> Pod {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}});
        json_patch::merge(&mut p, &extra);
        serde_json::from_value(p).expect("pod")
    }
}
