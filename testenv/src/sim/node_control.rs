//! Node failure controls for clients in other processes (`kcm-testenv sim` against any API
//! server): the Node annotation [`NODE_DOWN`] set to `"true"` takes the simulated node down, as
//! [`SimHandle::set_node_ready`](super::SimHandle::set_node_ready)`(name, false)` does; removing
//! it (or any other value) brings the node back. Only changes of the annotation act, so the two
//! controls can be mixed.
//!
//! ```text
//! kubectl annotate node node-1 sim.kcm-rs.io/node-down=true     # kubelet stops, NotReady, tainted
//! kubectl annotate node node-1 sim.kcm-rs.io/node-down-          # back up
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use kcm_informer::SharedIndexInformer;
use kube::ResourceExt;
use tokio_util::sync::CancellationToken;

use super::changes::{Change, changes};
use super::nodes::{self, NodeSet};

/// `"true"` on a simulated Node: the node is down.
pub const NODE_DOWN: &str = "sim.kcm-rs.io/node-down";

/// Whether a Node's annotations ask for the node to be up.
pub fn wants_ready(annotations: &BTreeMap<String, String>) -> bool {
    !annotations
        .get(NODE_DOWN)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Follows the simulated Nodes' annotations until `token` is cancelled.
pub(crate) async fn run(
    client: kube::Client,
    nodes: Arc<NodeSet>,
    informer: SharedIndexInformer<Node>,
    token: CancellationToken,
) {
    let (registration, mut rx) = match changes(&informer) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "sim: node controls cannot follow nodes");
            return;
        }
    };
    let mut asked: BTreeMap<String, bool> = BTreeMap::new();
    loop {
        let change = tokio::select! {
            _ = token.cancelled() => break,
            c = rx.recv() => match c { Some(c) => c, None => break },
        };
        let Change::Applied(node) = change else {
            continue;
        };
        let Some(sim_node) = nodes.get(&node.name_any()) else {
            continue;
        };
        // Act on changes of the annotation only, so that `SimHandle::set_node_ready` in the
        // same process is not undone by a node that carries no annotation.
        let ready = wants_ready(node.annotations());
        let before = asked.insert(sim_node.name.clone(), ready).unwrap_or(true);
        if ready == before || ready == sim_node.is_ready() {
            continue;
        }
        match nodes::set_ready(&client, sim_node, ready).await {
            Ok(_) => {
                tracing::info!(node = %sim_node.name, ready, "node state changed by its {NODE_DOWN} annotation")
            }
            Err(e) => {
                tracing::warn!(node = %sim_node.name, ready, error = %e, "could not change the node's state")
            }
        }
    }
    informer.remove_event_handler(&registration);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_annotation_takes_a_node_down() {
        let with = |v: &str| BTreeMap::from([(NODE_DOWN.to_string(), v.to_string())]);
        assert!(wants_ready(&BTreeMap::new()));
        assert!(!wants_ready(&with("true")));
        assert!(!wants_ready(&with(" TRUE ")));
        assert!(wants_ready(&with("false")));
        assert!(wants_ready(&with("")));
    }
}
