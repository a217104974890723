//! apps/v1 Deployment and ReplicaSet rules (upstream `pkg/apis/apps/validation`).

use serde_json::Value;

use super::core::{NONNEG, int_at, nonneg, pod_spec};
use super::formats::PERCENT_MSG;
use super::selector::label_selector;
use crate::registry::StorageId;
use crate::registry::api_status::{FieldError, go_quote};
use crate::registry::meta::{self, at};

fn go_int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            go_quote(s)
        ),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or(0)
        ),
    }
}

/// Percent or integer value of an IntOrString; `None` when malformed.
fn int_or_percent(v: &Value, field: &str, errs: &mut Vec<FieldError>) -> Option<(i64, bool)> {
    match v {
        Value::String(s) => {
            let digits = s
                .strip_suffix('%')
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            match digits.and_then(|d| d.parse::<i64>().ok()) {
                Some(n) => Some((n, true)),
                None => {
                    errs.push(FieldError::invalid(field, go_quote(s), PERCENT_MSG));
                    None
                }
            }
        }
        Value::Number(n) => {
            let n = n.as_i64().unwrap_or(0);
            if n < 0 {
                errs.push(FieldError::invalid(field, n.to_string(), NONNEG));
            }
            Some((n, false))
        }
        _ => None,
    }
}

pub(super) fn workload(
    id: StorageId,
    obj: &Value,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    nonneg(obj, &["spec", "replicas"], "spec.replicas", errs);
    if id == StorageId::REPLICASETS {
        nonneg(
            obj,
            &["spec", "minReadySeconds"],
            "spec.minReadySeconds",
            errs,
        );
    }
    let selector = spec.get("selector").filter(|s| !s.is_null());
    // the ReplicaSet validation uses the same text as the Deployment one
    let kind_word = "deployment";
    let sel_parsed = match selector {
        None => {
            errs.push(FieldError::required("spec.selector", ""));
            None
        }
        Some(s)
            if meta::is_empty_value(s.get("matchLabels"))
                && meta::is_empty_value(s.get("matchExpressions")) =>
        {
            errs.push(FieldError::invalid(
                "spec.selector",
                go_selector(s),
                format!("empty selector is invalid for {kind_word}"),
            ));
            None
        }
        // an invalid selector is reported alone (upstream cannot match with it)
        Some(s) if !label_selector(s, "spec.selector", errs) => None,
        Some(s) => Some(s.clone()),
    };
    let tpl_labels = at(&spec, &["template", "metadata", "labels"]);
    let matches = match (&sel_parsed, selector) {
        (Some(s), _) => crate::registry::label_selector::matches(s, tpl_labels),
        (None, None) => false,
        (None, Some(_)) => true,
    };
    if !matches {
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            go_map(tpl_labels),
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(ps) = at(&spec, &["template", "spec"]) {
        pod_spec(ps, "spec.template.spec", errs);
        if let Some(rp) = ps.get("restartPolicy").and_then(Value::as_str)
            && rp != "Always"
        {
            errs.push(FieldError::not_supported(
                "spec.template.spec.restartPolicy",
                go_quote(rp),
                &["Always"],
            ));
        }
        if ps
            .get("activeDeadlineSeconds")
            .is_some_and(|v| !v.is_null())
        {
            errs.push(FieldError::forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            ));
        }
    } else {
        errs.push(FieldError::required("spec.template", ""));
    }
    if id == StorageId::DEPLOYMENTS {
        deployment_spec(obj, &spec, errs);
    }
    // the apps/v1 strategies add the selector immutability check after spec validation
    if let Some(old) = old
        && !meta::semantic_eq(at(old, &["spec", "selector"]), selector)
    {
        errs.push(FieldError::invalid(
            "spec.selector",
            selector.map(go_selector).unwrap_or_else(|| "null".into()),
            "field is immutable",
        ));
    }
}

/// The Deployment-only part of the spec: strategy, minReadySeconds, revisionHistoryLimit,
/// progressDeadlineSeconds (in upstream order).
fn deployment_spec(obj: &Value, spec: &Value, errs: &mut Vec<FieldError>) {
    let strategy = spec.get("strategy").cloned().unwrap_or(Value::Null);
    let stype = strategy.get("type").and_then(Value::as_str).unwrap_or("");
    let ru = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match stype {
        "Recreate" => {
            if ru.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => match ru {
            None => errs.push(FieldError::required(
                "spec.strategy.rollingUpdate",
                "this should be defaulted and never be nil",
            )),
            Some(ru) => {
                let mu_f = "spec.strategy.rollingUpdate.maxUnavailable";
                let ms_f = "spec.strategy.rollingUpdate.maxSurge";
                let mu = ru
                    .get("maxUnavailable")
                    .and_then(|v| int_or_percent(v, mu_f, errs));
                let ms = ru
                    .get("maxSurge")
                    .and_then(|v| int_or_percent(v, ms_f, errs));
                if mu.is_some_and(|(n, _)| n == 0) && ms.is_some_and(|(n, _)| n == 0) {
                    let v = ru
                        .get("maxUnavailable")
                        .map(go_int_or_string)
                        .unwrap_or_default();
                    errs.push(FieldError::invalid(
                        mu_f,
                        v,
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
                if let Some((n, true)) = mu
                    && n > 100
                {
                    errs.push(FieldError::invalid(
                        mu_f,
                        go_quote(&format!("{n}%")),
                        "must not be greater than 100%",
                    ));
                }
            }
        },
        other => {
            let ru_text = if ru.is_some() {
                "(*apps.RollingUpdateDeployment)(...)"
            } else {
                "(*apps.RollingUpdateDeployment)(nil)"
            };
            errs.push(FieldError::not_supported(
                "spec.strategy",
                format!(
                    "apps.DeploymentStrategy{{Type:{}, RollingUpdate:{ru_text}}}",
                    go_quote(other)
                ),
                &["Recreate", "RollingUpdate"],
            ))
        }
    }
    nonneg(
        obj,
        &["spec", "minReadySeconds"],
        "spec.minReadySeconds",
        errs,
    );
    nonneg(
        obj,
        &["spec", "revisionHistoryLimit"],
        "spec.revisionHistoryLimit",
        errs,
    );
    if let Some(pds) = int_at(obj, &["spec", "progressDeadlineSeconds"]) {
        let mrs = int_at(obj, &["spec", "minReadySeconds"]).unwrap_or(0);
        if pds < 0 {
            errs.push(FieldError::invalid(
                "spec.progressDeadlineSeconds",
                pds.to_string(),
                NONNEG,
            ));
        }
        if pds <= mrs {
            errs.push(FieldError::invalid(
                "spec.progressDeadlineSeconds",
                pds.to_string(),
                "must be greater than minReadySeconds",
            ));
        }
    }
}

pub(super) fn workload_status(
    id: StorageId,
    obj: &Value,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    let st = obj.get("status").cloned().unwrap_or(Value::Null);
    let f = |k: &str| st.get(k).and_then(Value::as_i64).unwrap_or(0);
    let mut fields = vec![
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
        "collisionCount",
    ];
    if id == StorageId::REPLICASETS {
        fields = vec![
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ];
    }
    for k in &fields {
        if f(k) < 0 {
            errs.push(FieldError::invalid(
                format!("status.{k}"),
                f(k).to_string(),
                NONNEG,
            ));
        }
    }
    let msg = "cannot be greater than status.replicas";
    let bounded: &[&str] = if id == StorageId::DEPLOYMENTS {
        &["updatedReplicas", "readyReplicas", "availableReplicas"]
    } else {
        &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"]
    };
    for k in bounded {
        if f(k) > f("replicas") {
            errs.push(FieldError::invalid(
                format!("status.{k}"),
                f(k).to_string(),
                msg,
            ));
        }
    }
    if f("availableReplicas") > f("readyReplicas") {
        errs.push(FieldError::invalid(
            "status.availableReplicas",
            f("availableReplicas").to_string(),
            "cannot be greater than readyReplicas",
        ));
    }
    if id == StorageId::DEPLOYMENTS
        && let Some(old) = old
        && let Some(oc) = int_at(old, &["status", "collisionCount"])
    {
        let nc = st.get("collisionCount").and_then(Value::as_i64);
        if nc.is_none_or(|n| n < oc) {
            errs.push(FieldError::invalid(
                "status.collisionCount",
                nc.map_or("null".into(), |n| n.to_string()),
                "cannot be decremented",
            ));
        }
    }
}

/// A label map as Go's `%v` prints it in an Invalid value.
fn go_map(m: Option<&Value>) -> String {
    match m.and_then(Value::as_object) {
        None => "map[string]string(nil)".to_string(),
        Some(o) => {
            let mut kv: Vec<(&String, String)> = o
                .iter()
                .map(|(k, v)| (k, go_quote(v.as_str().unwrap_or(""))))
                .collect();
            kv.sort();
            let inner = kv
                .iter()
                .map(|(k, v)| format!("{}:{v}", go_quote(k)))
                .collect::<Vec<_>>()
                .join(", ");
            format!("map[string]string{{{inner}}}")
        }
    }
}

/// A metav1.LabelSelector as Go's `%v` prints it in an Invalid value.
fn go_selector(s: &Value) -> String {
    let exprs = match s.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(a) => format!("[]v1.LabelSelectorRequirement{{/* {} items */}}", a.len()),
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{exprs}}}",
        go_map(s.get("matchLabels"))
    )
}
