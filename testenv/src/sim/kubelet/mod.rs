//! The simulated kubelets: one pod worker per pod bound to a simulated node ([`pod_worker`])
//! writes `/status` through the pod's life — Pending/ContainerCreating, image pull failures
//! ([`image_pull`]), Running/Ready, crash loop, failure — and finishes graceful deletions with
//! `DELETE gracePeriodSeconds=0` and a uid precondition. Pods come from the simulation's shared
//! pod informer; the stage transitions are [`script`], the statuses [`pod_status`].

pub(crate) mod image_pull;
mod image_reference;
mod pod_status;
#[cfg(test)]
mod pod_status_tests;
mod pod_worker;
mod script;

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kcm_informer::SharedIndexInformer;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::changes::{Change, changes};
use super::config::SimConfig;
use super::nodes::NodeSet;
use pod_worker::pod_worker;

/// Run the kubelets of every simulated node until `token` is cancelled.
pub(crate) async fn run(
    client: kube::Client,
    nodes: Arc<NodeSet>,
    config: Arc<SimConfig>,
    pods: SharedIndexInformer<Pod>,
    token: CancellationToken,
) {
    let (registration, mut rx) = match changes(&pods) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "sim kubelet: cannot follow pods");
            return;
        }
    };
    let mut workers: HashMap<String, (watch::Sender<Arc<Pod>>, CancellationToken)> = HashMap::new();
    loop {
        let change = tokio::select! {
            _ = token.cancelled() => break,
            c = rx.recv() => match c { Some(c) => c, None => break },
        };
        match change {
            Change::Applied(pod) => {
                let Some(uid) = pod.metadata.uid.clone() else {
                    continue;
                };
                if let Some((tx, _)) = workers.get(&uid) {
                    tx.send_replace(pod);
                    continue;
                }
                let node_name = pod.spec.as_ref().and_then(|s| s.node_name.clone());
                let Some(node) = node_name.and_then(|n| nodes.get(&n).cloned()) else {
                    continue;
                };
                let (ptx, prx) = watch::channel(pod);
                let child = token.child_token();
                tokio::spawn(pod_worker(
                    client.clone(),
                    node,
                    config.clone(),
                    prx,
                    child.clone(),
                ));
                workers.insert(uid, (ptx, child));
            }
            Change::Deleted(pod) => {
                if let Some((_, t)) = pod.metadata.uid.as_ref().and_then(|u| workers.remove(u)) {
                    t.cancel();
                }
            }
        }
    }
    for (_, (_, t)) in workers {
        t.cancel();
    }
    pods.remove_event_handler(&registration);
}
