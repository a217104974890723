//! The simulated scheduler and kubelet against the real test server over HTTP: binding,
//! readiness, the pod annotations, deletion, events. The nodes and the simulation's lifecycle
//! are in `sim_nodes.rs`.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::sim_common::*;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, PostParams, WatchEvent, WatchParams};

#[tokio::test]
async fn pods_are_bound_spread_and_become_ready() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    // Watch from now on to see the intermediate states.
    let rv = pods
        .list(&Default::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    let stream = pods
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch");
    for i in 0..3 {
        pods.create(&PostParams::default(), &pod(&format!("web-{i}"), &[]))
            .await
            .expect("create");
    }
    let mut ready = Vec::new();
    for i in 0..3 {
        ready.push(wait_pod(&pods, &format!("web-{i}"), is_ready).await);
    }
    let mut nodes = BTreeSet::new();
    let mut ips = BTreeSet::new();
    for p in &ready {
        let spec = p.spec.as_ref().expect("spec");
        nodes.insert(spec.node_name.clone().expect("bound"));
        let st = p.status.as_ref().expect("status");
        assert_eq!(st.phase.as_deref(), Some("Running"));
        for t in [
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled",
        ] {
            let c = condition(p, t).unwrap_or_else(|| panic!("{t} missing"));
            assert_eq!(c.status, "True", "{t}");
            assert!(c.last_transition_time.is_some(), "{t} lastTransitionTime");
        }
        let cs = &st.container_statuses.as_ref().expect("containerStatuses")[0];
        assert_eq!(cs.name, "app");
        assert_eq!(cs.image, "docker.io/library/nginx:1.27");
        assert!(cs.image_id.starts_with("docker.io/library/nginx@sha256:"));
        assert!(
            cs.container_id
                .as_deref()
                .is_some_and(|c| c.starts_with("containerd://"))
        );
        assert!(cs.ready);
        assert_eq!(cs.started, Some(true));
        assert_eq!(cs.restart_count, 0);
        assert!(
            cs.state
                .as_ref()
                .and_then(|s| s.running.as_ref())
                .and_then(|r| r.started_at.as_ref())
                .is_some()
        );
        assert!(st.start_time.is_some());
        assert!(st.host_ip.is_some() && st.host_ips.is_some());
        let ip = st.pod_ip.clone().expect("podIP");
        assert_eq!(
            st.pod_ips.as_ref().map(|l| l[0].ip.clone()),
            Some(ip.clone())
        );
        ips.insert(ip);
    }
    assert_eq!(
        nodes.len(),
        3,
        "3 pods on 3 empty nodes are spread one per node"
    );
    assert_eq!(ips.len(), 3, "pod IPs are unique");

    // The watch saw: bound (nodeName set) → Pending/ContainerCreating → Running/Ready, as separate events.
    let mut stages: Vec<String> = Vec::new();
    let mut stream = std::pin::pin!(stream);
    while let Ok(Some(Ok(ev))) =
        tokio::time::timeout(Duration::from_millis(500), stream.next()).await
    {
        if let WatchEvent::Added(p) | WatchEvent::Modified(p) = ev
            && p.metadata.name.as_deref() == Some("web-0")
        {
            let bound = p.spec.as_ref().and_then(|s| s.node_name.clone()).is_some();
            let waiting = p
                .status
                .as_ref()
                .and_then(|s| s.container_statuses.as_ref())
                .and_then(|c| c[0].state.as_ref())
                .and_then(|s| s.waiting.as_ref())
                .and_then(|w| w.reason.clone());
            let stage = match (
                bound,
                phase(&p).as_deref(),
                waiting.as_deref(),
                is_ready(&p),
            ) {
                (false, _, _, _) => "created",
                (true, Some("Pending"), Some("ContainerCreating"), _) => "creating",
                (true, Some("Running"), _, true) => "ready",
                (true, _, _, _) => "bound",
            };
            if stages.last().map(String::as_str) != Some(stage) {
                stages.push(stage.to_string());
            }
        }
    }
    assert_eq!(stages, ["created", "bound", "creating", "ready"]);
    cluster.shutdown().await;
}

#[tokio::test]
async fn annotations_give_the_documented_states() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let pp = PostParams::default();
    pods.create(&pp, &pod("never", &[("sim.kcm-rs.io/never-ready", "true")]))
        .await
        .expect("create");
    pods.create(&pp, &pod("crash", &[("sim.kcm-rs.io/crash-loop", "true")]))
        .await
        .expect("create");
    pods.create(&pp, &pod("fail", &[("sim.kcm-rs.io/fail-after", "100ms")]))
        .await
        .expect("create");
    pods.create(
        &pp,
        &pod("unsched", &[("sim.kcm-rs.io/unschedulable", "true")]),
    )
    .await
    .expect("create");
    pods.create(&pp, &pod("slow", &[("sim.kcm-rs.io/ready-after", "300ms")]))
        .await
        .expect("create");

    let never = wait_pod(&pods, "never", |p| phase(p).as_deref() == Some("Running")).await;
    let ready = condition(&never, "Ready").expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_deref()),
        ("False", Some("ContainersNotReady"))
    );
    assert_eq!(
        ready.message.as_deref(),
        Some("containers with unready status: [app]")
    );
    assert_eq!(
        condition(&never, "ContainersReady").map(|c| c.status),
        Some("False".into())
    );
    let cs = &never
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.clone())
        .expect("cs")[0];
    assert!(!cs.ready);
    assert_eq!(cs.started, Some(true));

    let crash = wait_pod(&pods, "crash", |p| restart_count(p) >= 2).await;
    assert_eq!(phase(&crash).as_deref(), Some("Running"));
    assert!(!is_ready(&crash));
    let cs = &crash
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.clone())
        .expect("cs")[0];
    let waiting = cs
        .state
        .as_ref()
        .and_then(|s| s.waiting.as_ref())
        .expect("waiting");
    assert_eq!(waiting.reason.as_deref(), Some("CrashLoopBackOff"));
    assert!(
        waiting
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("back-off ")
                && m.contains("restarting failed container=app pod=crash_default("))
    );
    let last = cs
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .expect("lastState.terminated");
    assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));

    let fail = wait_pod(&pods, "fail", |p| phase(p).as_deref() == Some("Failed")).await;
    let cs = &fail
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.clone())
        .expect("cs")[0];
    let term = cs
        .state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .expect("terminated");
    assert_eq!((term.exit_code, term.reason.as_deref()), (1, Some("Error")));
    assert_eq!(
        condition(&fail, "Ready").and_then(|c| c.reason),
        Some("PodFailed".into())
    );

    let unsched = wait_pod(&pods, "unsched", |p| condition(p, "PodScheduled").is_some()).await;
    let c = condition(&unsched, "PodScheduled").expect("PodScheduled");
    assert_eq!(
        (c.status.as_str(), c.reason.as_deref()),
        ("False", Some("Unschedulable"))
    );
    assert_eq!(
        c.message.as_deref(),
        Some(
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        )
    );
    assert_eq!(phase(&unsched).as_deref(), Some("Pending"));
    assert!(
        unsched
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .is_none()
    );

    let slow = wait_pod(&pods, "slow", is_ready).await;
    assert_eq!(phase(&slow).as_deref(), Some("Running"));
    // The unschedulable pod is still unbound after all the others settled.
    let again = pods.get("unsched").await.expect("get");
    assert!(again.spec.and_then(|s| s.node_name).is_none());
    cluster.shutdown().await;
}

#[tokio::test]
async fn bound_pod_deletion_waits_for_the_kubelet() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    pods.create(&PostParams::default(), &pod("graceful", &[]))
        .await
        .expect("create");
    wait_pod(&pods, "graceful", is_ready).await;
    // 30 s grace by default, capped by max_grace (300 ms in the fast config).
    pods.delete("graceful", &DeleteParams::default())
        .await
        .expect("delete");
    let terminating = pods
        .get("graceful")
        .await
        .expect("still there while terminating");
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert_eq!(terminating.metadata.deletion_grace_period_seconds, Some(30));
    wait_gone(&pods, "graceful").await;
    cluster.shutdown().await;
}

#[tokio::test]
async fn unbound_pod_deletion_is_immediate() {
    let config = kcm_testenv::sim::SimConfig {
        scheduler: false,
        ..fast_config()
    };
    let cluster = start_sim(config).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    pods.create(&PostParams::default(), &pod("lonely", &[]))
        .await
        .expect("create");
    pods.delete("lonely", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        pods.get_opt("lonely").await.expect("get").is_none(),
        "a pod never scheduled has no grace"
    );
    cluster.shutdown().await;
}

#[tokio::test]
async fn pod_deleted_while_its_containers_are_created() {
    let cluster = start_sim(fast_config()).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    pods.create(
        &PostParams::default(),
        &pod("early", &[("sim.kcm-rs.io/ready-after", "10m")]),
    )
    .await
    .expect("create");
    let creating = wait_pod(&pods, "early", |p| {
        p.status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|c| c.first()?.state.as_ref()?.waiting.as_ref()?.reason.clone())
            .as_deref()
            == Some("ContainerCreating")
    })
    .await;
    assert_eq!(phase(&creating).as_deref(), Some("Pending"));
    pods.delete("early", &DeleteParams::default())
        .await
        .expect("delete");
    wait_gone(&pods, "early").await;
    cluster.shutdown().await;
}

#[tokio::test]
async fn events_as_the_scheduler_and_kubelet_write_them() {
    use k8s_openapi::api::core::v1::Event;
    let config = kcm_testenv::sim::SimConfig {
        events: true,
        ..fast_config()
    };
    let cluster = start_sim(config).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let events: Api<Event> = Api::namespaced(cluster.client(), "default");
    pods.create(&PostParams::default(), &pod("ev", &[]))
        .await
        .expect("create");
    pods.create(
        &PostParams::default(),
        &pod("nowhere", &[("sim.kcm-rs.io/unschedulable", "true")]),
    )
    .await
    .expect("create");
    let p = wait_pod(&pods, "ev", is_ready).await;
    let node = p.spec.and_then(|s| s.node_name).expect("bound");
    pods.delete("ev", &DeleteParams::default())
        .await
        .expect("delete");
    wait_gone(&pods, "ev").await;
    let want = [
        ("ev", "Normal", "Scheduled", format!("Successfully assigned default/ev to {node}")),
        ("ev", "Normal", "Pulled", "Container image \"nginx:1.27\" already present on machine".to_string()),
        ("ev", "Normal", "Created", "Created container: app".to_string()),
        ("ev", "Normal", "Started", "Started container app".to_string()),
        ("ev", "Normal", "Killing", "Stopping container app".to_string()),
        ("nowhere", "Warning", "FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.".to_string()),
    ];
    let list = wait_for("all events", || async {
        let list = events.list(&Default::default()).await.ok()?.items;
        let have = |(obj, t, r, m): &(&str, &str, &str, String)| {
            list.iter().any(|e| {
                e.involved_object.name.as_deref() == Some(*obj)
                    && e.type_.as_deref() == Some(*t)
                    && e.reason.as_deref() == Some(*r)
                    && e.message.as_deref() == Some(m.as_str())
            })
        };
        want.iter().all(have).then_some(list)
    })
    .await;
    // Repeated back-offs are one event whose count grows, as client-go's correlator does.
    pods.create(
        &PostParams::default(),
        &pod("crashy", &[("sim.kcm-rs.io/crash-loop", "true")]),
    )
    .await
    .expect("create");
    wait_pod(&pods, "crashy", |p| restart_count(p) >= 3).await;
    let backoffs = wait_for("BackOff repeated", || async {
        let list = events.list(&Default::default()).await.ok()?.items;
        let b: Vec<Event> = list
            .into_iter()
            .filter(|e| {
                e.involved_object.name.as_deref() == Some("crashy")
                    && e.reason.as_deref() == Some("BackOff")
            })
            .collect();
        b.iter().any(|e| e.count.unwrap_or(0) >= 2).then_some(b)
    })
    .await;
    assert_eq!(backoffs.len(), 1, "{backoffs:?}");
    assert_eq!(backoffs[0].type_.as_deref(), Some("Warning"));
    let kubelet = list
        .iter()
        .find(|e| e.reason.as_deref() == Some("Started"))
        .expect("Started");
    assert_eq!(
        kubelet.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("kubelet")
    );
    assert_eq!(
        kubelet.involved_object.field_path.as_deref(),
        Some("spec.containers{app}")
    );
    cluster.shutdown().await;
}
