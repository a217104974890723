//! Whether a `metav1.LabelSelector` in JSON selects a set of labels: every `matchLabels` pair
//! and every `matchExpressions` requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`), as
//! apimachinery's `LabelSelectorAsSelector` builds it
//! (`staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go`). One matcher for the
//! validation of workloads' selectors and the PodDisruptionBudgets of an eviction.

use serde_json::Value;

/// A label selector matches a set of labels (apimachinery `LabelSelectorAsSelector`).
pub fn matches(sel: &Value, labels: Option<&Value>) -> bool {
    let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let labels_ok = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| get(k) == v.as_str());
    let exprs_ok = sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|e| {
            let k = e.get("key").and_then(Value::as_str).unwrap_or("");
            let vals: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                "In" => get(k).is_some_and(|x| vals.contains(&x)),
                "NotIn" => !get(k).is_some_and(|x| vals.contains(&x)),
                "Exists" => get(k).is_some(),
                "DoesNotExist" => get(k).is_none(),
                _ => false,
            }
        });
    labels_ok && exprs_ok
}
