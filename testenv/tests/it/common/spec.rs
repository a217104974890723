//! Fixtures of the spec checks (`spec_*.rs`; README.md, "Agreement with kube-apiserver v1.37.2").

use serde_json::{Value, json};

pub const AGG_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/// A scheduler nobody runs: the checks' pods stay unscheduled and Pending on a real cluster,
/// where simulated nodes and kubelets would otherwise bind and start them.
pub const NO_SCHEDULER: &str = "kcm-spec-checks-none";

pub fn deployment(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
}

pub fn pod(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}},
           "spec": {"schedulerName": NO_SCHEDULER, "containers": [{"name": "c", "image": "nginx"}]}})
}

pub fn rv(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("rv")
}
