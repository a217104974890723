//! Nodes and pods for the scheduler's unit tests: a Ready node with room for two pods, a pod
//! with one container, each merged with `extra`.

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
