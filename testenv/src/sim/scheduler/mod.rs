//! The simulated scheduler: binds pending pods to the feasible node with the fewest pods through
//! `POST pods/{name}/binding`, and reports unschedulable pods with a `PodScheduled=False` condition.
//!
//! This file is the loop and its writes (informers, retries, bindings, conditions, events); the
//! decision itself is [`filter`], a free function over plain data; [`pod_counts`] keeps the
//! pods per node. Pods and nodes come from the simulation's shared informers; a pod whose binding
//! failed waits on a kcm-workqueue rate-limited queue (upstream's backoff queue).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kcm_informer::SharedIndexInformer;
use kcm_store::ObjectKey;
use kcm_workqueue::{ItemExponentialFailureRateLimiter, RateLimitingQueue};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod filter;
mod pod_counts;

use super::annotations::PodBehaviour;
use super::changes::{Change, changes};
use super::config::SimConfig;
use super::events;
use super::nodes::NodeSet;
use super::timestamps::now_time;
pub use filter::DEFAULT_SCHEDULER;
use filter::{Decision, decide, wants_scheduling};
use pod_counts::PodCounts;

/// First and longest wait before a failed binding is tried again (upstream's pod backoff: 1 s
/// to 10 s; shorter here, as the simulation's other delays).
const BIND_RETRY: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(10));

fn key_of(pod: &Pod) -> ObjectKey {
    ObjectKey::from_meta(&pod.metadata)
}

struct Scheduler {
    backoff: RateLimitingQueue<ObjectKey>,
    client: kube::Client,
    config: Arc<SimConfig>,
    pods: SharedIndexInformer<Pod>,
    nodes: SharedIndexInformer<Node>,
    /// Pods per node (cache and our own bindings).
    counts: PodCounts,
    /// Keys of the pods seen unbound and not yet seen bound, finished or deleted: the ones
    /// retried when nodes or pods change (whether they found no node or their binding failed).
    pending: BTreeSet<ObjectKey>,
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
        let nodes = self.nodes.store().list();
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
                self.backoff.forget(&key_of(pod));
            }
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {
                self.backoff.forget(&key_of(pod));
            }
            Err(e) => {
                tracing::debug!(pod = %name, error = %e, "sim scheduler: binding failed");
                self.backoff.add_rate_limited(key_of(pod));
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
    pods: SharedIndexInformer<Pod>,
    nodes: SharedIndexInformer<Node>,
    token: CancellationToken,
) {
    let (Ok((pod_handler, mut prx)), Ok((node_handler, mut nrx))) =
        (changes(&pods), changes(&nodes))
    else {
        tracing::warn!("sim scheduler: cannot follow pods and nodes");
        return;
    };
    // Schedule once the nodes are listed; a shutdown before that ends the scheduler too.
    if !nodes.wait_for_cache_sync(None, &token).await {
        return;
    }
    let backoff = RateLimitingQueue::builder()
        .name("scheduler_backoff")
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            BIND_RETRY.0,
            BIND_RETRY.1,
        ))
        .build();
    let mut s = Scheduler {
        client,
        config,
        pods: pods.clone(),
        nodes: nodes.clone(),
        counts: PodCounts::default(),
        pending: BTreeSet::new(),
        backoff: backoff.clone(),
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
                        s.pending.remove(&key_of(&pod));
                        continue;
                    }
                    s.pending.insert(key_of(&pod));
                    s.schedule(&pod).await;
                }
                Some(Change::Deleted(pod)) => {
                    if let Some(u) = &pod.metadata.uid { s.counts.forget(u); }
                    s.pending.remove(&key_of(&pod));
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
            k = backoff.get() => {
                let Some(key) = k else { break };
                if let Some(pod) = s.pods.store().get_by_key(&key) {
                    s.schedule(&pod).await;
                }
                backoff.done(&key);
            }
        }
    }
    backoff.shutdown();
    pods.remove_event_handler(&pod_handler);
    nodes.remove_event_handler(&node_handler);
}

/// Tries every pending pod again, in key order (those we bound and the cache has not shown
/// bound yet are skipped by `schedule`).
async fn retry_all(s: &mut Scheduler) {
    let keys: Vec<ObjectKey> = s.pending.iter().cloned().collect();
    for key in keys {
        match s.pods.store().get_by_key(&key) {
            Some(pod) if wants_scheduling(&pod) => s.schedule(&pod).await,
            _ => {
                s.pending.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod test_objects;
