//! Events as the real components write them: the scheduler through events.k8s.io/v1
//! (`Scheduled`, `FailedScheduling`), the kubelet (`Pulling`, `Pulled`, `Failed`, `Created`,
//! `Started`, `BackOff`, `Killing`) and the garbage collector (`OwnerRefInvalidNamespace`) through
//! core/v1. Written only when [`SimConfig::events`](super::SimConfig::events) is on.

use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::core::v1::{Event, Pod};
use kube::Api;
use kube::api::{ApiResource, DynamicObject, PostParams};
use serde_json::{Value, json};

use super::timestamps::{now_micro, now_time};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// `<name>.<hex>`: unique per event, as client-go names events.
fn event_name(object: &str) -> String {
    let nanos = jiff::Timestamp::now().as_nanosecond() as u64;
    format!(
        "{object}.{:x}",
        nanos.wrapping_add(SEQ.fetch_add(1, Ordering::Relaxed))
    )
}

fn regarding(pod: &Pod, field_path: Option<&str>) -> Value {
    let mut r = json!({
        "apiVersion": "v1", "kind": "Pod",
        "name": pod.metadata.name, "namespace": pod.metadata.namespace,
        "uid": pod.metadata.uid, "resourceVersion": pod.metadata.resource_version,
    });
    if let Some(f) = field_path {
        r["fieldPath"] = f.into();
    }
    r
}

/// A kubelet event about `pod` (core/v1, source `kubelet` on `node`). Returns the event's name.
pub(crate) async fn kubelet_event(
    client: &kube::Client,
    pod: &Pod,
    node: &str,
    container: Option<&str>,
    type_: &str,
    reason: &str,
    message: String,
) -> Option<String> {
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let now = now_time();
    let field_path = container.map(|c| format!("spec.containers{{{c}}}"));
    let body = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": event_name(pod.metadata.name.as_deref().unwrap_or("pod")), "namespace": ns},
        "involvedObject": regarding(pod, field_path.as_deref()),
        "reason": reason, "message": message, "type": type_,
        "source": {"component": "kubelet", "host": node},
        "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        "eventTime": null,
        "reportingComponent": "kubelet", "reportingInstance": node,
    });
    let event = serde_json::from_value::<Event>(body).ok()?;
    let api: Api<Event> = Api::namespaced(client.clone(), &ns);
    match api.create(&PostParams::default(), &event).await {
        Ok(e) => e.metadata.name,
        Err(e) => {
            tracing::debug!(error = %e, %reason, "sim: kubelet event not written");
            None
        }
    }
}

/// An event of a controller (core/v1, source `component`) about `involved` (an
/// `involvedObject`), in `namespace` (`default` for a cluster-scoped object, as client-go's
/// recorder writes it).
pub(crate) async fn controller_event(
    client: &kube::Client,
    namespace: &str,
    involved: Value,
    component: &str,
    type_: &str,
    reason: &str,
    message: String,
) {
    let ns = if namespace.is_empty() {
        "default"
    } else {
        namespace
    };
    let name = involved["name"].as_str().unwrap_or("object").to_string();
    let now = now_time();
    let body = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": event_name(&name), "namespace": ns},
        "involvedObject": involved,
        "reason": reason, "message": message, "type": type_,
        "source": {"component": component},
        "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        "eventTime": null, "reportingComponent": component, "reportingInstance": "",
    });
    let Ok(event) = serde_json::from_value::<Event>(body) else {
        return;
    };
    let api: Api<Event> = Api::namespaced(client.clone(), ns);
    if let Err(e) = api.create(&PostParams::default(), &event).await {
        tracing::debug!(error = %e, %reason, "sim: {component} event not written");
    }
}

/// A repeat of an event: client-go's correlator patches `count` and `lastTimestamp` of the
/// existing event (strategic merge patch) instead of creating a new one. False if it is gone.
pub(crate) async fn repeat_event(client: &kube::Client, ns: &str, name: &str, count: i32) -> bool {
    let api: Api<Event> = Api::namespaced(client.clone(), ns);
    let patch = json!({"count": count, "lastTimestamp": now_time()});
    api.patch(
        name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Strategic(&patch),
    )
    .await
    .is_ok()
}

/// A scheduler event about `pod` (events.k8s.io/v1, controller `default-scheduler`).
pub(crate) async fn scheduler_event(
    client: &kube::Client,
    pod: &Pod,
    type_: &str,
    action: &str,
    reason: &str,
    note: String,
) {
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let ar = ApiResource {
        group: "events.k8s.io".into(),
        version: "v1".into(),
        api_version: "events.k8s.io/v1".into(),
        kind: "Event".into(),
        plural: "events".into(),
    };
    let body = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": event_name(pod.metadata.name.as_deref().unwrap_or("pod")), "namespace": ns},
        "eventTime": now_micro(),
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-kcm-testenv",
        "action": action, "reason": reason, "note": note, "type": type_,
        "regarding": regarding(pod, None),
    });
    let Ok(event) = serde_json::from_value::<DynamicObject>(body) else {
        return;
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &ar);
    if let Err(e) = api.create(&PostParams::default(), &event).await {
        tracing::debug!(error = %e, %reason, "sim: scheduler event not written");
    }
}
