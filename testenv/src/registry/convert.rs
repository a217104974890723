//! Conversion between the versions of a built-in resource kcm-testenv stores in one form:
//! HorizontalPodAutoscalers are stored as autoscaling/v2 and served as v1 too, as upstream
//! converts them (`pkg/apis/autoscaling/v1/conversion.go`).
//!
//! What v1 can say maps both ways: the scale target, replica bounds, the CPU utilization target
//! (no metric in v1 is upstream's implicit 80 % CPU), the status counters and current CPU
//! utilization, and the conditions (kept in the `autoscaling.alpha.kubernetes.io/conditions`
//! annotation of the v1 view). Not converted: metrics other than CPU utilization and
//! `spec.behavior`, which upstream carries through v1 in the `…/metrics`,
//! `…/current-metrics` and `…/behavior` annotations.

use serde_json::{Map, Value, json};

use super::meta::at;
use super::resources::{ResourceInfo, StorageId, for_storage};

/// The v1 annotation carrying the v2 conditions.
const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// The round-trip annotations upstream drops when converting into the stored version.
const ROUND_TRIP_ANNOTATIONS: &[&str] = &[
    "autoscaling.alpha.kubernetes.io/metrics",
    "autoscaling.alpha.kubernetes.io/current-metrics",
    "autoscaling.alpha.kubernetes.io/behavior",
    CONDITIONS_ANNOTATION,
];
/// Upstream's `autoscaling.DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// Whether objects of `res` are stored in another version of the same resource.
pub fn converts(res: &ResourceInfo) -> bool {
    !res.is_custom()
        && !res.is_events_v1()
        && res.storage != StorageId::NONE
        && for_storage(res.storage).version != res.version
}

/// An object decoded in `res`'s version, in the stored version.
pub fn to_storage(res: &ResourceInfo, v: Value) -> Value {
    if res.storage == StorageId::HORIZONTALPODAUTOSCALERS && res.version == "v1" {
        return hpa_v1_to_v2(v);
    }
    v
}

/// A stored object as `res`'s version shows it.
pub fn from_storage(res: &ResourceInfo, v: &Value) -> Value {
    if res.storage == StorageId::HORIZONTALPODAUTOSCALERS && res.version == "v1" {
        return hpa_v2_to_v1(v);
    }
    v.clone()
}

fn cpu_utilization(name: &Value, holder: &Value, field: &str) -> Option<Value> {
    (name == "cpu")
        .then(|| holder.get(field)?.get("averageUtilization").cloned())
        .flatten()
}

fn hpa_v1_to_v2(mut v: Value) -> Value {
    let spec = v.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = v.get("status").cloned().unwrap_or_else(|| json!({}));
    let annotations = at(&v, &["metadata", "annotations"]).cloned();
    let mut new_spec = Map::new();
    for k in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(x) = spec.get(k) {
            new_spec.insert(k.into(), x.clone());
        }
    }
    let cpu = spec
        .get("targetCPUUtilizationPercentage")
        .cloned()
        .unwrap_or(json!(DEFAULT_CPU_UTILIZATION));
    new_spec.insert(
        "metrics".into(),
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": cpu}}}]),
    );
    let mut new_status = Map::new();
    for k in [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
    ] {
        if let Some(x) = status.get(k) {
            new_status.insert(k.into(), x.clone());
        }
    }
    if let Some(c) = status.get("currentCPUUtilizationPercentage") {
        new_status.insert(
            "currentMetrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": c}}}]),
        );
    }
    let conditions = annotations
        .as_ref()
        .and_then(|a| a.get(CONDITIONS_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .filter(Value::is_array);
    if let Some(c) = conditions {
        new_status.insert("conditions".into(), c);
    }
    if let Some(o) = v.as_object_mut() {
        o.insert("apiVersion".into(), json!("autoscaling/v2"));
        o.insert("spec".into(), Value::Object(new_spec));
        o.insert("status".into(), Value::Object(new_status));
        if let Some(a) = o
            .get_mut("metadata")
            .and_then(|m| m.get_mut("annotations"))
            .and_then(Value::as_object_mut)
        {
            a.retain(|k, _| !ROUND_TRIP_ANNOTATIONS.contains(&k.as_str()));
            if a.is_empty()
                && let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut)
            {
                m.remove("annotations");
            }
        }
    }
    v
}

fn hpa_v2_to_v1(v: &Value) -> Value {
    let mut out = v.clone();
    let spec = v.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = v.get("status").cloned().unwrap_or_else(|| json!({}));
    let mut new_spec = Map::new();
    for k in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(x) = spec.get(k) {
            new_spec.insert(k.into(), x.clone());
        }
    }
    let metrics = spec.get("metrics").and_then(Value::as_array);
    let target_cpu = metrics.into_iter().flatten().find_map(|m| {
        let r = m.get("resource").filter(|_| m["type"] == "Resource")?;
        cpu_utilization(&r["name"], r, "target")
    });
    if let Some(c) = target_cpu {
        new_spec.insert("targetCPUUtilizationPercentage".into(), c);
    }
    let mut new_status = Map::new();
    for k in [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
    ] {
        if let Some(x) = status.get(k) {
            new_status.insert(k.into(), x.clone());
        }
    }
    // the status a v1 HPA always writes
    new_status
        .entry("currentReplicas")
        .or_insert_with(|| json!(0));
    new_status
        .entry("desiredReplicas")
        .or_insert_with(|| json!(0));
    let current = status.get("currentMetrics").and_then(Value::as_array);
    let current_cpu = current.into_iter().flatten().find_map(|m| {
        let r = m.get("resource").filter(|_| m["type"] == "Resource")?;
        cpu_utilization(&r["name"], r, "current")
    });
    if let Some(c) = current_cpu {
        new_status.insert("currentCPUUtilizationPercentage".into(), c);
    }
    let conditions = status
        .get("conditions")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
        .map(|c| Value::String(Value::Array(c.clone()).to_string()));
    if let Some(o) = out.as_object_mut() {
        o.insert("apiVersion".into(), json!("autoscaling/v1"));
        o.insert("spec".into(), Value::Object(new_spec));
        o.insert("status".into(), Value::Object(new_status));
        if let Some(c) = conditions {
            let m = o
                .entry("metadata")
                .or_insert_with(|| json!({}))
                .as_object_mut();
            if let Some(m) = m {
                let a = m.entry("annotations").or_insert_with(|| json!({}));
                if let Some(a) = a.as_object_mut() {
                    a.insert(CONDITIONS_ANNOTATION.into(), c);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn hpa_round_trips_through_v1() {
        let v1 = find("autoscaling", "v1", "horizontalpodautoscalers").expect("v1");
        assert!(converts(v1));
        let v2 = find("autoscaling", "v2", "horizontalpodautoscalers").expect("v2");
        assert!(!converts(v2));
        let body = json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                     "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60},
        });
        let stored = to_storage(v1, body);
        assert_eq!(stored["apiVersion"], "autoscaling/v2");
        assert_eq!(
            stored["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 60}}}])
        );
        let back = from_storage(v1, &stored);
        assert_eq!(back["spec"]["targetCPUUtilizationPercentage"], 60);
        assert_eq!(back["spec"]["maxReplicas"], 5);
        assert_eq!(
            back["status"],
            json!({"currentReplicas": 0, "desiredReplicas": 0})
        );
    }

    #[test]
    fn no_v1_target_is_upstreams_implicit_80_percent() {
        let v1 = find("autoscaling", "v1", "horizontalpodautoscalers").expect("v1");
        let stored = to_storage(v1, json!({"spec": {"maxReplicas": 3}}));
        assert_eq!(
            stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
    }

    #[test]
    fn conditions_travel_in_an_annotation() {
        let v1 = find("autoscaling", "v1", "horizontalpodautoscalers").expect("v1");
        let stored = json!({
            "metadata": {"name": "h"},
            "spec": {"maxReplicas": 3},
            "status": {"currentReplicas": 1, "desiredReplicas": 2,
                       "conditions": [{"type": "AbleToScale", "status": "True"}],
                       "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                           "current": {"averageUtilization": 40, "averageValue": "100m"}}}]},
        });
        let view = from_storage(v1, &stored);
        assert_eq!(view["status"]["currentCPUUtilizationPercentage"], 40);
        let ann = view["metadata"]["annotations"][CONDITIONS_ANNOTATION]
            .as_str()
            .expect("annotation");
        assert_eq!(
            serde_json::from_str::<Value>(ann).expect("json"),
            json!([{"type": "AbleToScale", "status": "True"}])
        );
        let again = to_storage(v1, view);
        assert_eq!(
            again["status"]["conditions"],
            stored["status"]["conditions"]
        );
        assert!(at(&again, &["metadata", "annotations"]).is_none());
    }
}
