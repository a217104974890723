//! The workload kinds without special code: StatefulSet, DaemonSet (upstream
//! `pkg/apis/apps/validation`), Job, CronJob (`pkg/apis/batch/validation`) and
//! ReplicationController (`pkg/apis/core/validation`): selectors and their templates' labels,
//! counts that may not be negative, restart policies, and the fields updates may not change.
//!
//! Values in `Invalid value:` texts are written as upstream writes versioned values (JSON);
//! where upstream prints an internal type (a Job's template), the text differs.

use serde_json::Value;

use super::core::{nonneg, pod_spec};
use super::selector::label_selector;
use crate::registry::StorageId;
use crate::registry::api_status::{FieldError, go_quote};
use crate::registry::meta::{at, semantic_eq};

const SELECTOR_MISMATCH: &str = "`selector` does not match template `labels`";
const IMMUTABLE: &str = "field is immutable";

/// The rules of the workload kinds (`old` on updates).
pub(super) fn workload(
    id: StorageId,
    obj: &Value,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    match id {
        StorageId::STATEFULSETS => stateful_set(obj, old, errs),
        StorageId::DAEMONSETS => daemon_set(obj, old, errs),
        StorageId::JOBS => job(obj, old, errs),
        StorageId::CRONJOBS => cron_job(obj, errs),
        StorageId::REPLICATIONCONTROLLERS => replication_controller(obj, errs),
        _ => {}
    }
}

fn is_empty_selector(sel: &Value) -> bool {
    let empty = |k: &str| {
        sel.get(k)
            .map(|v| {
                v.as_object()
                    .map_or(v.as_array().is_none_or(Vec::is_empty), |o| o.is_empty())
            })
            .unwrap_or(true)
    };
    empty("matchLabels") && empty("matchExpressions")
}

/// A compact JSON rendering of a value, as upstream renders versioned values in `Invalid value:`.
fn json_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".into(),
        Some(Value::String(s)) => go_quote(s),
        Some(v) => v.to_string(),
    }
}

/// The selector must select the template's labels; a missing one is `Required` when
/// `required` (a StatefulSet's), and selects nothing.
fn selector_and_template(
    obj: &Value,
    required: bool,
    empty_is_invalid: Option<&str>,
    errs: &mut Vec<FieldError>,
) {
    let labels = at(obj, &["spec", "template", "metadata", "labels"]);
    match at(obj, &["spec", "selector"]).filter(|s| !s.is_null()) {
        None => {
            if required {
                errs.push(FieldError::required("spec.selector", ""));
            }
            errs.push(FieldError::invalid(
                "spec.template.metadata.labels",
                json_text(labels),
                SELECTOR_MISMATCH,
            ));
        }
        Some(sel) if is_empty_selector(sel) => {
            if let Some(kind) = empty_is_invalid {
                errs.push(FieldError::invalid(
                    "spec.selector",
                    sel.to_string(),
                    format!("empty selector is invalid for {kind}"),
                ));
            }
        }
        // an invalid selector is reported alone (upstream cannot match with it)
        Some(sel) if !label_selector(sel, "spec.selector", errs) => {}
        Some(sel) if !crate::registry::label_selector::matches(sel, labels) => {
            errs.push(FieldError::invalid(
                "spec.template.metadata.labels",
                json_text(labels),
                SELECTOR_MISMATCH,
            ))
        }
        Some(_) => {}
    }
}

fn template_spec(obj: &Value, errs: &mut Vec<FieldError>) {
    if let Some(spec) = at(obj, &["spec", "template", "spec"]) {
        pod_spec(spec, "spec.template.spec", errs);
    }
}

/// `restartPolicy` of a template must be one of `allowed`; for a Job, `Always` counts as
/// unset (the PodSpec defaulter writes it when the client wrote none).
fn restart_policy(obj: &Value, allowed: &[&str], errs: &mut Vec<FieldError>) {
    let field = "spec.template.spec.restartPolicy";
    let quoted: Vec<String> = allowed.iter().map(|a| go_quote(a)).collect();
    let unset_always = !allowed.contains(&"Always");
    match at(obj, &["spec", "template", "spec", "restartPolicy"]).and_then(Value::as_str) {
        None | Some("") => errs.push(FieldError::required(
            field,
            format!("valid values: {}", quoted.join(", ")),
        )),
        Some("Always") if unset_always => errs.push(FieldError::required(
            field,
            format!("valid values: {}", quoted.join(", ")),
        )),
        Some(p) if !allowed.contains(&p) => {
            errs.push(FieldError::not_supported(field, go_quote(p), allowed))
        }
        Some(_) => {}
    }
}

fn immutable(obj: &Value, old: &Value, path: &[&str], errs: &mut Vec<FieldError>) {
    let new = at(obj, path);
    if !semantic_eq(new, at(old, path)) {
        errs.push(FieldError::invalid(
            path.join("."),
            json_text(new),
            IMMUTABLE,
        ));
    }
}

fn stateful_set(obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    nonneg(obj, &["spec", "replicas"], "spec.replicas", errs);
    nonneg(
        obj,
        &["spec", "minReadySeconds"],
        "spec.minReadySeconds",
        errs,
    );
    selector_and_template(obj, true, Some("statefulset"), errs);
    restart_policy(obj, &["Always"], errs);
    template_spec(obj, errs);
    if let Some(old) = old {
        for f in [
            "selector",
            "volumeClaimTemplates",
            "serviceName",
            "podManagementPolicy",
        ] {
            immutable(obj, old, &["spec", f], errs);
        }
    }
}

fn daemon_set(obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    nonneg(
        obj,
        &["spec", "minReadySeconds"],
        "spec.minReadySeconds",
        errs,
    );
    selector_and_template(obj, false, Some("daemonset"), errs);
    restart_policy(obj, &["Always"], errs);
    template_spec(obj, errs);
    if let Some(old) = old {
        immutable(obj, old, &["spec", "selector"], errs);
    }
}

fn job(obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    for f in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
    ] {
        nonneg(obj, &["spec", f], &format!("spec.{f}"), errs);
    }
    let manual = at(obj, &["spec", "manualSelector"]).and_then(Value::as_bool) == Some(true);
    // a generated selector always matches its template (conflicting labels a client set are
    // refused the same way)
    if manual && at(obj, &["spec", "selector"]).is_none() {
        errs.push(FieldError::required("spec.selector", ""));
    } else if at(obj, &["spec", "selector"]).is_some() {
        selector_and_template(obj, false, None, errs);
    }
    restart_policy(obj, &["OnFailure", "Never"], errs);
    template_spec(obj, errs);
    let Some(old) = old else {
        return;
    };
    immutable(obj, old, &["spec", "completions"], errs);
    immutable(obj, old, &["spec", "selector"], errs);
    // a suspended Job that never started may change its pods' scheduling directives
    let suspended = at(old, &["spec", "suspend"]).and_then(Value::as_bool) == Some(true)
        && at(old, &["status", "startTime"]).is_none();
    if suspended {
        let strip = |v: Option<&Value>| {
            let mut v = v.cloned().unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                for k in ["nodeSelector", "tolerations", "affinity", "schedulingGates"] {
                    o.remove(k);
                }
            }
            v
        };
        let path = ["spec", "template", "spec"];
        if strip(at(obj, &path)) != strip(at(old, &path)) {
            errs.push(FieldError::invalid(
                "spec.template.spec",
                json_text(at(obj, &path)),
                IMMUTABLE,
            ));
        }
    } else {
        immutable(obj, old, &["spec", "template"], errs);
    }
    for f in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        immutable(obj, old, &["spec", f], errs);
    }
}

/// The five fields of a cron schedule (or a `@` descriptor), as robfig/cron's standard parser
/// counts them.
fn schedule(obj: &Value, errs: &mut Vec<FieldError>) {
    let Some(s) = at(obj, &["spec", "schedule"]).and_then(Value::as_str) else {
        errs.push(FieldError::required("spec.schedule", ""));
        return;
    };
    if s.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
        return;
    }
    let body = s
        .strip_prefix("TZ=")
        .or_else(|| s.strip_prefix("CRON_TZ="))
        .map_or(s, |rest| rest.split_once(' ').map_or("", |(_, r)| r));
    if body.starts_with('@') {
        return;
    }
    let fields: Vec<&str> = body.split_whitespace().collect();
    if fields.len() != 5 {
        errs.push(FieldError::invalid(
            "spec.schedule",
            go_quote(s),
            format!(
                "expected exactly 5 fields, found {}: [{}]",
                fields.len(),
                fields.join(" ")
            ),
        ));
    }
}

fn cron_job(obj: &Value, errs: &mut Vec<FieldError>) {
    schedule(obj, errs);
    for f in [
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
    ] {
        nonneg(obj, &["spec", f], &format!("spec.{f}"), errs);
    }
    let base = ["spec", "jobTemplate", "spec", "template", "spec"];
    let field = "spec.jobTemplate.spec.template.spec.restartPolicy";
    match at(obj, &base)
        .and_then(|s| s.get("restartPolicy"))
        .and_then(Value::as_str)
    {
        None | Some("" | "Always") => errs.push(FieldError::required(
            field,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        Some(p) if p != "OnFailure" && p != "Never" => errs.push(FieldError::not_supported(
            field,
            go_quote(p),
            &["OnFailure", "Never"],
        )),
        Some(_) => {}
    }
    if let Some(spec) = at(obj, &base) {
        pod_spec(spec, "spec.jobTemplate.spec.template.spec", errs);
    }
}

fn replication_controller(obj: &Value, errs: &mut Vec<FieldError>) {
    nonneg(obj, &["spec", "replicas"], "spec.replicas", errs);
    nonneg(
        obj,
        &["spec", "minReadySeconds"],
        "spec.minReadySeconds",
        errs,
    );
    let labels = at(obj, &["spec", "template", "metadata", "labels"]);
    let selector = at(obj, &["spec", "selector"]).and_then(Value::as_object);
    match selector.filter(|s| !s.is_empty()) {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(sel) => {
            let matches = sel
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)).and_then(Value::as_str) == v.as_str());
            if at(obj, &["spec", "template"]).is_some() && !matches {
                errs.push(FieldError::invalid(
                    "spec.template.metadata.labels",
                    json_text(labels),
                    SELECTOR_MISMATCH,
                ));
            }
        }
    }
    if at(obj, &["spec", "template"]).is_some() {
        restart_policy(obj, &["Always"], errs);
        template_spec(obj, errs);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(id: StorageId, obj: Value, old: Option<&Value>) -> Vec<String> {
        let mut errs = Vec::new();
        workload(id, &obj, old, &mut errs);
        errs.iter().map(FieldError::text).collect()
    }

    fn template() -> Value {
        json!({"metadata": {"labels": {"a": "b"}}, "spec": {"restartPolicy": "Always",
               "containers": [{"name": "c", "image": "nginx"}]}})
    }

    /// Texts kube-apiserver v1.37.2 answered for the same objects.
    #[test]
    fn selectors_and_templates() {
        assert_eq!(
            texts(
                StorageId::STATEFULSETS,
                json!({"spec": {"template": template()}}),
                None
            ),
            [
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: `selector` does not match template `labels`"
            ]
        );
        assert_eq!(
            texts(
                StorageId::STATEFULSETS,
                json!({"spec": {"selector": {}, "template": template()}}),
                None
            ),
            ["spec.selector: Invalid value: {}: empty selector is invalid for statefulset"]
        );
        assert_eq!(
            texts(
                StorageId::DAEMONSETS,
                json!({"spec": {"template": template()}}),
                None
            ),
            [
                "spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: `selector` does not match template `labels`"
            ]
        );
        let mut never = template();
        never["spec"]["restartPolicy"] = json!("Never");
        assert_eq!(
            texts(
                StorageId::DAEMONSETS,
                json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": never}}),
                None
            ),
            [
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""
            ]
        );
        assert_eq!(
            texts(
                StorageId::REPLICATIONCONTROLLERS,
                json!({"spec": {"selector": {"a": "x"}, "template": template()}}),
                None
            ),
            [
                "spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: `selector` does not match template `labels`"
            ]
        );
    }

    #[test]
    fn jobs_and_cron_jobs() {
        assert_eq!(
            texts(
                StorageId::JOBS,
                json!({"spec": {"template": template()}}),
                None
            ),
            [
                "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
            ]
        );
        let mut never = template();
        never["spec"]["restartPolicy"] = json!("Never");
        assert_eq!(
            texts(
                StorageId::JOBS,
                json!({"spec": {"parallelism": -1, "template": never.clone()}}),
                None
            ),
            ["spec.parallelism: Invalid value: -1: must be greater than or equal to 0"]
        );
        let old = json!({"spec": {"completions": 1, "template": never.clone()}});
        assert_eq!(
            texts(
                StorageId::JOBS,
                json!({"spec": {"completions": 3, "template": never.clone()}}),
                Some(&old)
            ),
            ["spec.completions: Invalid value: 3: field is immutable"]
        );
        assert_eq!(
            texts(
                StorageId::CRONJOBS,
                json!({"spec": {"schedule": "nope", "jobTemplate": {"spec": {"template": never}}}}),
                None
            ),
            ["spec.schedule: Invalid value: \"nope\": expected exactly 5 fields, found 1: [nope]"]
        );
    }

    #[test]
    fn immutable_fields() {
        let sel = json!({"matchLabels": {"a": "b"}});
        let old = json!({"spec": {"selector": sel, "template": template()}});
        let mut new = old.clone();
        new["spec"]["selector"] = json!({"matchLabels": {"a": "b", "c": "d"}});
        new["spec"]["template"]["metadata"]["labels"]["c"] = json!("d");
        assert_eq!(
            texts(StorageId::DAEMONSETS, new, Some(&old)),
            [
                "spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\",\"c\":\"d\"}}: field is immutable"
            ]
        );
        let old = json!({"spec": {"selector": sel, "template": template(), "serviceName": ""}});
        let mut new = old.clone();
        new["spec"]["serviceName"] = json!("x");
        assert_eq!(
            texts(StorageId::STATEFULSETS, new, Some(&old)),
            ["spec.serviceName: Invalid value: \"x\": field is immutable"]
        );
    }
}
