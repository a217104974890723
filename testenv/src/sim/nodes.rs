//! Simulated nodes: registration, the kubelet's Lease heartbeats, and node failure as the node
//! lifecycle controller reports it (conditions Unknown, `unreachable` taints, pods marked NotReady).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::config::SimConfig;
use super::error::SimError;
use super::timestamps::{now_micro, now_time};

/// Namespace of node Leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
/// Lease duration the kubelet uses (upstream `nodeLeaseDurationSeconds`: 40).
const LEASE_DURATION_SECONDS: i32 = 40;
/// The taint the node lifecycle controller puts on an unreachable node.
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";

/// One simulated node.
#[derive(Debug)]
pub(crate) struct SimNode {
    /// `node-<index>`.
    pub name: String,
    /// 1-based.
    pub index: usize,
    /// InternalIP.
    pub host_ip: String,
    ready: watch::Sender<bool>,
    used_ips: Mutex<BTreeSet<u8>>,
}

impl SimNode {
    fn new(index: usize) -> Self {
        let (ready, _) = watch::channel(true);
        SimNode {
            name: SimConfig::node_name(index),
            index,
            host_ip: format!("172.18.{}.{}", index / 250, index % 250 + 2),
            ready,
            used_ips: Mutex::new(BTreeSet::new()),
        }
    }

    /// Whether the node's kubelet is up.
    pub fn is_ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// Follow the node's readiness.
    pub fn subscribe_ready(&self) -> watch::Receiver<bool> {
        self.ready.subscribe()
    }

    /// The pod CIDR (`10.<a>.<b>.0/24`, unique per node).
    pub fn pod_cidr(&self) -> String {
        format!("10.{}.{}.0/24", 244 + self.index / 256, self.index % 256)
    }

    /// A free pod IP in the node's CIDR, released with [`SimNode::release_ip`].
    pub fn allocate_ip(&self) -> Option<String> {
        let mut used = self.used_ips.lock();
        let host = (2u8..=254).find(|h| !used.contains(h))?;
        used.insert(host);
        Some(format!(
            "10.{}.{}.{host}",
            244 + self.index / 256,
            self.index % 256
        ))
    }

    /// Take a given IP of the node's CIDR (false when it is taken or not in the CIDR).
    pub fn reserve_ip(&self, ip: &str) -> bool {
        let prefix = format!("10.{}.{}.", 244 + self.index / 256, self.index % 256);
        let Some(host) = ip.strip_prefix(&prefix).and_then(|h| h.parse::<u8>().ok()) else {
            return false;
        };
        (2..=254).contains(&host) && self.used_ips.lock().insert(host)
    }

    /// Give an IP back.
    pub fn release_ip(&self, ip: &str) {
        if let Some(h) = ip.rsplit('.').next().and_then(|h| h.parse::<u8>().ok()) {
            self.used_ips.lock().remove(&h);
        }
    }
}

/// The simulated nodes.
#[derive(Debug)]
pub(crate) struct NodeSet {
    nodes: Vec<Arc<SimNode>>,
    /// The highest Node resourceVersion the scheduler has processed.
    scheduler_seen: watch::Sender<u64>,
}

impl NodeSet {
    pub(crate) fn new(count: usize) -> Self {
        NodeSet {
            nodes: (1..=count).map(|i| Arc::new(SimNode::new(i))).collect(),
            scheduler_seen: watch::channel(0).0,
        }
    }

    /// Record that the scheduler has seen Node changes up to `rv`.
    pub(crate) fn scheduler_saw(&self, rv: u64) {
        self.scheduler_seen.send_if_modified(|seen| {
            let newer = rv > *seen;
            if newer {
                *seen = rv;
            }
            newer
        });
    }

    /// Wait until the scheduler has seen Node changes up to `rv`.
    pub(crate) async fn scheduler_caught_up(&self, rv: u64) {
        let mut rx = self.scheduler_seen.subscribe();
        let _ = rx.wait_for(|seen| *seen >= rv).await;
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<SimNode>> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub(crate) fn all(&self) -> &[Arc<SimNode>] {
        &self.nodes
    }
}

fn ready_conditions(ready: bool, now: &str) -> Value {
    let cond = |t: &str, status: &str, reason: &str, message: &str| {
        json!({"type": t, "status": status, "reason": reason, "message": message,
               "lastHeartbeatTime": now, "lastTransitionTime": now})
    };
    if ready {
        json!([
            cond(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available"
            ),
            cond(
                "DiskPressure",
                "False",
                "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure"
            ),
            cond(
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available"
            ),
            cond(
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status"
            ),
        ])
    } else {
        let lost = "Kubelet stopped posting node status.";
        json!([
            cond("MemoryPressure", "Unknown", "NodeStatusUnknown", lost),
            cond("DiskPressure", "Unknown", "NodeStatusUnknown", lost),
            cond("PIDPressure", "Unknown", "NodeStatusUnknown", lost),
            cond("Ready", "Unknown", "NodeStatusUnknown", lost),
        ])
    }
}

/// The Node object a kubelet registers.
pub(crate) fn node_object(node: &SimNode, now: &str) -> Value {
    let resources = json!({
        "cpu": "4", "memory": "16323492Ki", "pods": "110",
        "ephemeral-storage": "102626232Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
    });
    let id = format!("{:032x}", node.index as u128 * 0x9e37_79b9_7f4a_7c15);
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.name,
            "labels": {
                "kubernetes.io/hostname": node.name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": node.pod_cidr(),
            "podCIDRs": [node.pod_cidr()],
            "providerID": format!("kcm-testenv://{}", node.name),
        },
        "status": node_status(node, true, now, &id, resources),
    })
}

fn node_status(node: &SimNode, ready: bool, now: &str, id: &str, resources: Value) -> Value {
    json!({
        "capacity": resources,
        "allocatable": resources,
        "conditions": ready_conditions(ready, now),
        "addresses": [
            {"type": "InternalIP", "address": node.host_ip},
            {"type": "Hostname", "address": node.name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": id,
            "systemUUID": id,
            "bootID": id,
            "kernelVersion": "6.8.0-kcm-testenv",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "containerRuntimeVersion": "containerd://1.7.24",
            "kubeletVersion": "v1.37.2",
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    })
}

/// Register every node (create, or take over an existing one) and make `kube-node-lease` exist.
pub(crate) async fn register(client: &kube::Client, nodes: &NodeSet) -> Result<(), SimError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": NODE_LEASE_NAMESPACE}}))
        .map_err(|e| SimError::Internal(e.to_string()))?;
    match namespaces.create(&PostParams::default(), &ns).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => return Err(SimError::api("creating namespace kube-node-lease", e)),
    }
    let api: Api<Node> = Api::all(client.clone());
    for node in nodes.all() {
        let now = now_time();
        let obj = node_object(node, &now);
        let typed: Node =
            serde_json::from_value(obj.clone()).map_err(|e| SimError::Internal(e.to_string()))?;
        match api.create(&PostParams::default(), &typed).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(SimError::api(format!("registering node {}", node.name), e)),
        }
        // The kubelet posts its status right after registering (create may drop it).
        let patch = json!({"status": obj["status"]});
        api.patch_status(&node.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| SimError::api(format!("posting status of node {}", node.name), e))?;
    }
    Ok(())
}

/// Renew the node's Lease every `interval` while the node is ready.
pub(crate) async fn heartbeat(
    client: kube::Client,
    node: Arc<SimNode>,
    interval: Duration,
    token: CancellationToken,
) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), NODE_LEASE_NAMESPACE);
    let nodes: Api<Node> = Api::all(client);
    let mut ready = node.subscribe_ready();
    loop {
        if *ready.borrow_and_update()
            && let Err(e) = renew_lease(&leases, &nodes, &node).await
        {
            tracing::debug!(node = %node.name, error = %e, "sim: lease renewal failed");
        }
        tokio::select! {
            _ = token.cancelled() => return,
            _ = tokio::time::sleep(interval) => {}
            _ = ready.changed() => {}
        }
    }
}

async fn renew_lease(
    leases: &Api<Lease>,
    nodes: &Api<Node>,
    node: &SimNode,
) -> Result<(), kube::Error> {
    let now = now_micro();
    match leases.get_opt(&node.name).await? {
        Some(mut lease) => {
            let spec = lease.spec.get_or_insert_with(Default::default);
            spec.renew_time = serde_json::from_value(Value::from(now)).ok();
            leases
                .replace(&node.name, &PostParams::default(), &lease)
                .await?;
        }
        None => {
            let owner = nodes.get(&node.name).await?;
            let lease: Lease = serde_json::from_value(json!({
                "metadata": {
                    "name": node.name,
                    "namespace": NODE_LEASE_NAMESPACE,
                    "ownerReferences": [{
                        "apiVersion": "v1", "kind": "Node", "name": node.name,
                        "uid": owner.metadata.uid.unwrap_or_default(),
                    }],
                },
                "spec": {
                    "holderIdentity": node.name,
                    "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                    "renewTime": now,
                },
            }))
            .map_err(kube::Error::SerdeError)?;
            match leases.create(&PostParams::default(), &lease).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// Mark a node Ready or NotReady, as its kubelet and the node lifecycle controller would.
/// Returns the resourceVersion of the last Node write.
pub(crate) async fn set_ready(
    client: &kube::Client,
    node: &SimNode,
    ready: bool,
) -> Result<u64, SimError> {
    let api: Api<Node> = Api::all(client.clone());
    let now = now_time();
    let ctx = |what: &str| format!("{what} node {}", node.name);
    if !ready {
        node.ready.send_replace(false);
    }
    // Conditions (kubelet when ready, node lifecycle controller when not).
    let patch = json!({"status": {"conditions": ready_conditions(ready, &now)}});
    api.patch_status(&node.name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| SimError::api(ctx("updating conditions of"), e))?;
    // Taints: unreachable NoSchedule + NoExecute while not ready.
    let mut written = 0;
    for attempt in 0..5 {
        let current = api
            .get(&node.name)
            .await
            .map_err(|e| SimError::api(ctx("reading"), e))?;
        let mut taints: Vec<Value> = current
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .map(|t| {
                t.iter()
                    .filter(|t| t.key != UNREACHABLE_TAINT)
                    .filter_map(|t| serde_json::to_value(t).ok())
                    .collect()
            })
            .unwrap_or_default();
        if !ready {
            taints.push(json!({"key": UNREACHABLE_TAINT, "effect": "NoSchedule"}));
            taints.push(json!({"key": UNREACHABLE_TAINT, "effect": "NoExecute", "timeAdded": now}));
        }
        let patch = json!({"metadata": {"resourceVersion": current.metadata.resource_version},
                           "spec": {"taints": taints}});
        match api
            .patch(&node.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(n) => {
                written = n
                    .metadata
                    .resource_version
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                break;
            }
            Err(kube::Error::Api(s)) if s.code == 409 && attempt < 4 => continue,
            Err(e) => return Err(SimError::api(ctx("tainting"), e)),
        }
    }
    if !ready {
        mark_pods_not_ready(client, &node.name).await?;
    } else {
        node.ready.send_replace(true);
    }
    Ok(written)
}

/// Upstream `MarkPodsNotReady`: the Ready condition of every pod on the node becomes False.
async fn mark_pods_not_ready(client: &kube::Client, node: &str) -> Result<(), SimError> {
    let pods: Api<Pod> = Api::all(client.clone());
    let lp = ListParams::default().fields(&format!("spec.nodeName={node}"));
    let list = pods
        .list(&lp)
        .await
        .map_err(|e| SimError::api(format!("listing pods of node {node}"), e))?;
    let now = now_time();
    for pod in list.items {
        let Some(conditions) = pod.status.as_ref().and_then(|s| s.conditions.clone()) else {
            continue;
        };
        if !conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
        {
            continue;
        }
        let conditions: Vec<Value> = conditions
            .iter()
            .filter_map(|c| {
                let mut v = serde_json::to_value(c).ok()?;
                if c.type_ == "Ready" {
                    v["status"] = "False".into();
                    v["lastTransitionTime"] = now.as_str().into();
                }
                Some(v)
            })
            .collect();
        let (Some(ns), Some(name)) = (
            pod.metadata.namespace.as_deref(),
            pod.metadata.name.as_deref(),
        ) else {
            continue;
        };
        let patch =
            json!({"metadata": {"uid": pod.metadata.uid}, "status": {"conditions": conditions}});
        let api: Api<Pod> = Api::namespaced(client.clone(), ns);
        match api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
            Err(e) => {
                return Err(SimError::api(
                    format!("marking pod {ns}/{name} not ready"),
                    e,
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_are_unique_and_recycled() {
        let set = NodeSet::new(3);
        let n1 = set.get("node-1").expect("node-1");
        let n2 = set.get("node-2").expect("node-2");
        assert_eq!(n1.pod_cidr(), "10.244.1.0/24");
        let a = n1.allocate_ip().expect("ip");
        let b = n1.allocate_ip().expect("ip");
        let c = n2.allocate_ip().expect("ip");
        assert_eq!(
            (a.as_str(), b.as_str(), c.as_str()),
            ("10.244.1.2", "10.244.1.3", "10.244.2.2")
        );
        n1.release_ip(&a);
        assert_eq!(n1.allocate_ip().as_deref(), Some("10.244.1.2"));
        assert!(!n1.reserve_ip("10.244.1.2"), "taken");
        assert!(!n1.reserve_ip("10.244.2.9"), "another node's CIDR");
        assert!(n1.reserve_ip("10.244.1.9"));
        assert_ne!(n1.allocate_ip().as_deref(), Some("10.244.1.9"));
        let all: Vec<_> = (0..300).filter_map(|_| n2.allocate_ip()).collect();
        assert_eq!(all.len(), 252, "a /24 holds 253 pod IPs, one already used");
        assert_ne!(n1.host_ip, n2.host_ip);
    }

    #[test]
    fn node_object_shape() {
        let set = NodeSet::new(1);
        let n = node_object(&set.all()[0], "2025-01-01T00:00:00Z");
        assert_eq!(n["metadata"]["name"], "node-1");
        assert_eq!(n["status"]["addresses"][0]["type"], "InternalIP");
        assert_eq!(n["status"]["allocatable"]["pods"], "110");
        let ready = n["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .expect("Ready");
        assert_eq!(ready["status"], "True");
        assert_eq!(ready["reason"], "KubeletReady");
        let typed: Result<Node, _> = serde_json::from_value(n);
        assert!(typed.is_ok(), "{typed:?}");
    }
}
