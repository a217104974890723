//! core/v1 rules: pod specs and pod updates, events, leases (upstream
//! `pkg/apis/core/validation`, `pkg/apis/coordination/validation`).

use serde_json::Value;

use super::formats::{dns1123_label, dns1123_subdomain};
use crate::registry::api_status::{FieldError, go_quote};
use crate::registry::meta::{self, at};

/// Upstream `ValidateNonnegativeField`'s message.
pub(super) const NONNEG: &str = "must be greater than or equal to 0";

/// An integer field.
pub(super) fn int_at(v: &Value, path: &[&str]) -> Option<i64> {
    at(v, path).and_then(Value::as_i64)
}

/// `field` at `path` must not be negative (upstream `ValidateNonnegativeField`).
pub(super) fn nonneg(obj: &Value, path: &[&str], field: &str, errs: &mut Vec<FieldError>) {
    if let Some(n) = int_at(obj, path)
        && n < 0
    {
        errs.push(FieldError::invalid(field, n.to_string(), NONNEG));
    }
}

fn containers(list: &str, spec: &Value, base: &str, errs: &mut Vec<FieldError>) {
    let Some(cs) = spec.get(list).and_then(Value::as_array) else {
        if list == "containers" {
            errs.push(FieldError::required(format!("{base}.containers"), ""));
        }
        return;
    };
    if list == "containers" && cs.is_empty() {
        errs.push(FieldError::required(format!("{base}.containers"), ""));
    }
    let mut names = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        let f = format!("{base}.{list}[{i}]");
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{f}.name"), ""));
        } else {
            for m in dns1123_label(name) {
                errs.push(FieldError::invalid(format!("{f}.name"), go_quote(name), m));
            }
            if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{f}.name"), go_quote(name)));
            }
            names.push(name);
        }
        if c.get("image")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .is_empty()
        {
            errs.push(FieldError::required(format!("{f}.image"), ""));
        }
        if let Some(p) = c.get("imagePullPolicy").and_then(Value::as_str)
            && !matches!(p, "Always" | "IfNotPresent" | "Never")
        {
            errs.push(FieldError::not_supported(
                format!("{f}.imagePullPolicy"),
                go_quote(p),
                &["Always", "IfNotPresent", "Never"],
            ));
        }
        for (j, p) in c
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let cp = p.get("containerPort").and_then(Value::as_i64).unwrap_or(0);
            if !(1..=65535).contains(&cp) {
                errs.push(FieldError::invalid(
                    format!("{f}.ports[{j}].containerPort"),
                    cp.to_string(),
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
}

pub(super) fn pod_spec(spec: &Value, base: &str, errs: &mut Vec<FieldError>) {
    containers("containers", spec, base, errs);
    containers("initContainers", spec, base, errs);
    if let Some(rp) = spec.get("restartPolicy").and_then(Value::as_str)
        && !matches!(rp, "Always" | "OnFailure" | "Never")
    {
        errs.push(FieldError::not_supported(
            format!("{base}.restartPolicy"),
            go_quote(rp),
            &["Always", "OnFailure", "Never"],
        ));
    }
}

/// Fields of a pod spec a main-resource update may change.
pub(super) fn pod_update(obj: &Value, old: &Value, errs: &mut Vec<FieldError>) {
    let strip = |v: &Value| -> Value {
        let mut s = v.get("spec").cloned().unwrap_or(Value::Null);
        if let Some(o) = s.as_object_mut() {
            o.remove("activeDeadlineSeconds");
            o.remove("tolerations");
            o.remove("terminationGracePeriodSeconds");
            o.remove("schedulingGates");
            for l in ["containers", "initContainers"] {
                if let Some(cs) = o.get_mut(l).and_then(Value::as_array_mut) {
                    for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                        c.remove("image");
                    }
                }
            }
        }
        s
    };
    if !meta::semantic_eq(Some(&strip(obj)), Some(&strip(old))) {
        errs.push(FieldError::forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
        ));
    }
}

pub(super) fn event(obj: &Value, errs: &mut Vec<FieldError>) {
    let ns = meta::namespace_of(obj);
    let ins = at(obj, &["involvedObject", "namespace"])
        .and_then(Value::as_str)
        .unwrap_or("");
    let event_time = obj.get("eventTime").is_some_and(|v| !v.is_null());
    if !event_time {
        let bad = if ins.is_empty() {
            !ns.is_empty() && ns != "default"
        } else {
            ins != ns
        };
        if bad {
            errs.push(FieldError::invalid(
                "involvedObject.namespace",
                go_quote(ins),
                "does not match event.namespace",
            ));
        }
    } else {
        for f in [
            "reportingComponent",
            "reportingInstance",
            "action",
            "reason",
        ] {
            if obj.get(f).and_then(Value::as_str).unwrap_or("").is_empty() {
                errs.push(FieldError::required(f, ""));
            }
        }
        for f in ["reportingInstance", "action", "reason"] {
            if obj
                .get(f)
                .and_then(Value::as_str)
                .is_some_and(|s| s.len() > 128)
            {
                errs.push(FieldError::invalid(
                    f,
                    "\"\"",
                    "can have at most 128 characters",
                ));
            }
        }
        if obj
            .get("message")
            .and_then(Value::as_str)
            .is_some_and(|s| s.len() > 1024)
        {
            errs.push(FieldError::invalid(
                "message",
                "\"\"",
                "can have at most 1024 characters",
            ));
        }
    }
    for m in dns1123_subdomain(if ns.is_empty() { "default" } else { ns }) {
        errs.push(FieldError::invalid("metadata.namespace", go_quote(ns), m));
    }
}

pub(super) fn lease(obj: &Value, errs: &mut Vec<FieldError>) {
    if let Some(d) = int_at(obj, &["spec", "leaseDurationSeconds"])
        && d <= 0
    {
        errs.push(FieldError::invalid(
            "spec.leaseDurationSeconds",
            d.to_string(),
            "must be greater than 0",
        ));
    }
    nonneg(
        obj,
        &["spec", "leaseTransitions"],
        "spec.leaseTransitions",
        errs,
    );
}
