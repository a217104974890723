//! The defaulting functions of the workload kinds: apps/v1 (`pkg/apis/apps/v1/defaults.go`),
//! batch/v1 (`pkg/apis/batch/v1/defaults.go`) and autoscaling/v2
//! (`pkg/apis/autoscaling/v2/defaults.go`), with v1.37's feature gates at their defaults
//! (`MaxUnavailableStatefulSet` on).

use serde_json::{Map, Value, json};

use super::{Defaulter, default, default_str, obj_entry, str_of};

/// The function of a type of these groups.
pub(super) fn defaulter(group_version: &str, ty: &str) -> Option<Defaulter> {
    Some(match (group_version, ty) {
        ("apps.v1", "Deployment") => deployment,
        ("apps.v1", "DaemonSet") => daemon_set,
        ("apps.v1", "StatefulSet") => stateful_set,
        ("apps.v1", "ReplicaSet") => replica_set,
        ("batch.v1", "Job") => job,
        ("batch.v1", "CronJob") => cron_job,
        ("batch.v1", "PodFailurePolicyOnPodConditionsPattern") => pod_conditions_pattern,
        ("autoscaling.v2", "HorizontalPodAutoscaler") => hpa,
        _ => return None,
    })
}

/// `SetDefaults_Deployment`.
fn deployment(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    default(spec, "replicas", json!(1));
    let strategy = obj_entry(spec, "strategy");
    default_str(strategy, "type", "RollingUpdate");
    if str_of(strategy, "type") == "RollingUpdate" {
        let ru = obj_entry(strategy, "rollingUpdate");
        default(ru, "maxUnavailable", json!("25%"));
        default(ru, "maxSurge", json!("25%"));
    }
    default(spec, "revisionHistoryLimit", json!(10));
    default(spec, "progressDeadlineSeconds", json!(600));
}

/// `SetDefaults_DaemonSet`.
fn daemon_set(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    let strategy = obj_entry(spec, "updateStrategy");
    default_str(strategy, "type", "RollingUpdate");
    if str_of(strategy, "type") == "RollingUpdate" {
        let ru = obj_entry(strategy, "rollingUpdate");
        default(ru, "maxUnavailable", json!(1));
        default(ru, "maxSurge", json!(0));
    }
    default(spec, "revisionHistoryLimit", json!(10));
}

/// `SetDefaults_StatefulSet`.
fn stateful_set(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    default_str(spec, "podManagementPolicy", "OrderedReady");
    let strategy = obj_entry(spec, "updateStrategy");
    if str_of(strategy, "type").is_empty() {
        strategy.insert("type".into(), json!("RollingUpdate"));
        default(strategy, "rollingUpdate", json!({}));
    }
    if str_of(strategy, "type") == "RollingUpdate"
        && let Some(ru) = strategy
            .get_mut("rollingUpdate")
            .and_then(Value::as_object_mut)
    {
        default(ru, "partition", json!(0));
        default(ru, "maxUnavailable", json!(1));
    }
    let retention = obj_entry(spec, "persistentVolumeClaimRetentionPolicy");
    default_str(retention, "whenDeleted", "Retain");
    default_str(retention, "whenScaled", "Retain");
    default(spec, "replicas", json!(1));
    default(spec, "revisionHistoryLimit", json!(10));
}

/// `SetDefaults_ReplicaSet`.
fn replica_set(o: &mut Map<String, Value>) {
    default(obj_entry(o, "spec"), "replicas", json!(1));
}

/// `SetDefaults_Job`.
fn job(o: &mut Map<String, Value>) {
    let template_labels = o
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .filter(|l| l.is_object())
        .cloned();
    let spec = obj_entry(o, "spec");
    let unset = |s: &Map<String, Value>, k: &str| s.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    default(spec, "parallelism", json!(1));
    if unset(spec, "backoffLimit") {
        let limit = if unset(spec, "backoffLimitPerIndex") {
            6
        } else {
            i64::from(i32::MAX)
        };
        spec.insert("backoffLimit".into(), json!(limit));
    }
    default(spec, "completionMode", json!("NonIndexed"));
    default(spec, "suspend", json!(false));
    if unset(spec, "podReplacementPolicy") {
        let p = if unset(spec, "podFailurePolicy") {
            "TerminatingOrFailed"
        } else {
            "Failed"
        };
        spec.insert("podReplacementPolicy".into(), json!(p));
    }
    default(spec, "manualSelector", json!(false));
    let meta = obj_entry(o, "metadata");
    let no_labels = meta
        .get("labels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if no_labels && let Some(l) = template_labels {
        meta.insert("labels".into(), l);
    }
}

/// `SetDefaults_CronJob`.
fn cron_job(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    default_str(spec, "concurrencyPolicy", "Allow");
    default(spec, "suspend", json!(false));
    default(spec, "successfulJobsHistoryLimit", json!(3));
    default(spec, "failedJobsHistoryLimit", json!(1));
}

/// `SetDefaults_PodFailurePolicyOnPodConditionsPattern`.
fn pod_conditions_pattern(o: &mut Map<String, Value>) {
    default_str(o, "status", "True");
}

/// `SetDefaults_HorizontalPodAutoscaler` (autoscaling/v2): one replica at least, 80 % CPU
/// utilization without metrics, and a behavior's unset rules from upstream's defaults.
fn hpa(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    default(spec, "minReplicas", json!(1));
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    if let Some(b) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        let down = json!({"selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        scaling_rules(b, "scaleUp", up);
        scaling_rules(b, "scaleDown", down);
    }
}

/// Upstream's `copyHPAScalingRules` onto the default rules.
fn scaling_rules(behavior: &mut Map<String, Value>, key: &str, mut rules: Value) {
    if let (Some(given), Some(out)) = (
        behavior.get(key).and_then(Value::as_object),
        rules.as_object_mut(),
    ) {
        for k in [
            "selectPolicy",
            "stabilizationWindowSeconds",
            "policies",
            "tolerance",
        ] {
            if let Some(v) = given.get(k).filter(|v| !v.is_null()) {
                out.insert(k.into(), v.clone());
            }
        }
    }
    behavior.insert(key.into(), rules);
}
