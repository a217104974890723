//! The simulated nodes and the simulation's own lifecycle against the real test server over
//! HTTP: node registration and leases, node failure and recovery, surviving compaction and
//! dropped watches, a restart.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::sim_common::*;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

#[tokio::test]
async fn nodes_register_ready_with_leases() {
    let cluster = start_sim(fast_config()).await;
    let sim = cluster.sim().expect("simulation");
    let nodes: Api<Node> = Api::all(cluster.client());
    let list = nodes.list(&Default::default()).await.expect("list nodes");
    let names: BTreeSet<String> = list
        .items
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["node-1".to_string(), "node-2".into(), "node-3".into()])
    );
    for n in &list.items {
        let st = n.status.as_ref().expect("status");
        let ready = st
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Ready")
            .expect("Ready");
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_deref()),
            ("True", Some("KubeletReady"))
        );
        let addr = st
            .addresses
            .iter()
            .flatten()
            .find(|a| a.type_ == "InternalIP")
            .expect("InternalIP");
        assert!(!addr.address.is_empty());
        assert_eq!(
            st.allocatable
                .as_ref()
                .and_then(|a| a.get("pods"))
                .map(|q| q.0.as_str()),
            Some("110")
        );
        assert_eq!(
            st.node_info.as_ref().map(|i| i.kubelet_version.as_str()),
            Some("v1.37.2")
        );
    }
    let leases: Api<Lease> = Api::namespaced(cluster.client(), "kube-node-lease");
    for name in sim.node_names() {
        let lease = wait_for("node lease", || {
            let leases = leases.clone();
            let name = name.clone();
            async move { leases.get_opt(&name).await.ok().flatten() }
        })
        .await;
        let spec = lease.spec.expect("lease spec");
        assert_eq!(spec.holder_identity.as_deref(), Some(name.as_str()));
        assert!(spec.renew_time.is_some());
        let owner = &lease.metadata.owner_references.expect("owned by the node")[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("Node", name.as_str())
        );
    }
    cluster.shutdown().await;
}

#[tokio::test]
async fn node_failure_and_recovery() {
    let cluster = start_sim(fast_config()).await;
    let sim = cluster.sim().expect("simulation");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let nodes: Api<Node> = Api::all(cluster.client());
    for i in 0..3 {
        pods.create(&PostParams::default(), &pod(&format!("p-{i}"), &[]))
            .await
            .expect("create");
    }
    let mut on_node1 = None;
    for i in 0..3 {
        let p = wait_pod(&pods, &format!("p-{i}"), is_ready).await;
        if p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some("node-1") {
            on_node1 = p.metadata.name.clone();
        }
    }
    let victim = on_node1.expect("one pod per node, one on node-1");

    sim.set_node_ready("node-1", false)
        .await
        .expect("node down");
    assert_eq!(sim.node_ready("node-1"), Some(false));
    let n1 = nodes.get("node-1").await.expect("node-1");
    let ready = n1
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .expect("conditions")
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_deref()),
        ("Unknown", Some("NodeStatusUnknown"))
    );
    let taints = n1.spec.and_then(|s| s.taints).expect("taints");
    assert!(
        taints
            .iter()
            .any(|t| t.key == "node.kubernetes.io/unreachable" && t.effect == "NoSchedule")
    );
    assert!(
        taints
            .iter()
            .any(|t| t.key == "node.kubernetes.io/unreachable" && t.effect == "NoExecute")
    );
    let p = pods.get(&victim).await.expect("victim");
    assert_eq!(
        condition(&p, "Ready").map(|c| c.status),
        Some("False".into())
    );
    assert_eq!(phase(&p).as_deref(), Some("Running"));

    // New pods avoid the failed node.
    for i in 0..3 {
        pods.create(&PostParams::default(), &pod(&format!("q-{i}"), &[]))
            .await
            .expect("create");
    }
    for i in 0..3 {
        let q = wait_pod(&pods, &format!("q-{i}"), is_ready).await;
        assert_ne!(q.spec.and_then(|s| s.node_name).as_deref(), Some("node-1"));
    }

    sim.set_node_ready("node-1", true).await.expect("node up");
    let n1 = nodes.get("node-1").await.expect("node-1");
    assert!(
        n1.spec
            .and_then(|s| s.taints)
            .unwrap_or_default()
            .iter()
            .all(|t| t.key != "node.kubernetes.io/unreachable")
    );
    wait_pod(&pods, &victim, is_ready).await;
    assert!(sim.set_node_ready("node-9", false).await.is_err());

    // The same through the Node annotation, as a client in another process does it.
    let annotate = |v: serde_json::Value| json!({"metadata": {"annotations": {kcm_testenv::sim::node_control::NODE_DOWN: v}}});
    nodes
        .patch(
            "node-2",
            &PatchParams::default(),
            &Patch::Merge(&annotate(json!("true"))),
        )
        .await
        .expect("annotate node-2 down");
    let unreachable = |n: &Node| {
        n.spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|t| t.iter().any(|t| t.key == "node.kubernetes.io/unreachable"))
    };
    wait_for("node-2 to go down by annotation", || async {
        (sim.node_ready("node-2") == Some(false)
            && nodes.get("node-2").await.is_ok_and(|n| unreachable(&n)))
        .then_some(())
    })
    .await;
    nodes
        .patch(
            "node-2",
            &PatchParams::default(),
            &Patch::Merge(&annotate(serde_json::Value::Null)),
        )
        .await
        .expect("remove the annotation");
    wait_for("node-2 to come back", || async {
        (sim.node_ready("node-2") == Some(true)
            && nodes.get("node-2").await.is_ok_and(|n| !unreachable(&n)))
        .then_some(())
    })
    .await;
    cluster.shutdown().await;
}

#[tokio::test]
async fn simulation_survives_compaction_and_dropped_watches() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    pods.create(&PostParams::default(), &pod("before", &[]))
        .await
        .expect("create");
    wait_pod(&pods, "before", is_ready).await;
    cluster.env().compact();
    cluster.env().drop_watches();
    pods.create(&PostParams::default(), &pod("after", &[]))
        .await
        .expect("create");
    wait_pod(&pods, "after", is_ready).await;
    cluster.env().set_watch_window(5);
    for i in 0..4 {
        pods.create(&PostParams::default(), &pod(&format!("burst-{i}"), &[]))
            .await
            .expect("create");
    }
    for i in 0..4 {
        wait_pod(&pods, &format!("burst-{i}"), is_ready).await;
    }
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_restarted_simulation_adopts_running_pods() {
    let mut cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    pods.create(&PostParams::default(), &pod("kept", &[]))
        .await
        .expect("create");
    let before = wait_pod(&pods, "kept", is_ready).await;
    cluster.take_sim().expect("simulation").shutdown().await;
    let sim = kcm_testenv::sim::Simulation::start(cluster.client(), fast_config())
        .await
        .expect("restart");
    // Another pod gets a different IP on the same node pool; the adopted pod keeps its state.
    pods.create(&PostParams::default(), &pod("new", &[]))
        .await
        .expect("create");
    let new = wait_pod(&pods, "new", is_ready).await;
    let after = pods.get("kept").await.expect("kept");
    let st = |p: &Pod| p.status.clone().expect("status");
    assert_eq!(st(&after).pod_ip, st(&before).pod_ip);
    assert_eq!(
        st(&after).container_statuses,
        st(&before).container_statuses
    );
    assert_eq!(phase(&after).as_deref(), Some("Running"));
    assert_ne!(st(&new).pod_ip, st(&after).pod_ip);
    sim.shutdown().await;
    cluster.shutdown().await;
}

/// Stopping a cluster at once, before the scheduler's node informer has listed, ends every
/// component (the scheduler used to wait for that list forever).
#[tokio::test]
async fn a_simulation_stopped_right_after_its_start_ends() {
    let cluster = start_sim(fast_config()).await;
    tokio::time::timeout(Duration::from_secs(30), cluster.shutdown())
        .await
        .expect("the simulation stops");
}
