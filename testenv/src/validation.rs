//! Validation (spec §3.2; upstream `apps/validation`, `core/validation`,
//! `apimachinery/pkg/api/validation`): object metadata and the kind-specific rules, with
//! upstream's field paths, error types and texts.

use serde_json::Value;

use crate::meta::{self, at};
use crate::registry::StorageId;
use crate::status::{FieldError, go_quote};

const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";
const NONNEG: &str = "must be greater than or equal to 0";

fn is_label_part(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// RFC 1123 label errors (63 characters, `[a-z0-9]([-a-z0-9]*[a-z0-9])?`).
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push("must be no more than 63 characters".to_string());
    }
    if !is_label_part(&s[..s.len().min(63)]) || s.len() > 63 && !is_label_part(&s[63..]) {
        out.push(DNS1123_LABEL_MSG.to_string());
    }
    out
}

/// RFC 1123 subdomain errors (253 characters, dot-separated labels).
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push("must be no more than 253 characters".to_string());
    }
    if s.is_empty()
        || !s.split('.').all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !p.starts_with('-')
                && !p.ends_with('-')
        })
    {
        out.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    out
}

fn is_name_part(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.as_bytes()[s.len() - 1].is_ascii_alphanumeric()
}

fn qualified_name(s: &str) -> Vec<String> {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    let mut out = Vec::new();
    if let Some(p) = prefix {
        if p.is_empty() {
            out.push("prefix part must be non-empty".to_string());
        } else {
            out.extend(
                dns1123_subdomain(p)
                    .into_iter()
                    .map(|m| format!("prefix part {m}")),
            );
        }
    }
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        out.push("name part must be no more than 63 characters".to_string());
    } else if !is_name_part(name) {
        out.push(QUALIFIED_NAME_MSG.to_string());
    }
    out
}

fn label_value_ok(v: &str) -> bool {
    v.is_empty() || is_name_part(v)
}

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

/// Object metadata rules common to every kind.
fn object_meta(id: StorageId, obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    let name = meta::name_of(obj);
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        let msgs = if id == StorageId::Namespaces {
            dns1123_label(name)
        } else {
            dns1123_subdomain(name)
        };
        for m in msgs {
            errs.push(FieldError::invalid("metadata.name", go_quote(name), m));
        }
    }
    if let Some(labels) = at(obj, &["metadata", "labels"]).and_then(Value::as_object) {
        for (k, v) in labels {
            for m in qualified_name(k) {
                errs.push(FieldError::invalid("metadata.labels", go_quote(k), m));
            }
            let vs = v.as_str().unwrap_or("");
            if vs.len() > 63 {
                errs.push(FieldError::invalid(
                    "metadata.labels",
                    go_quote(vs),
                    "must be no more than 63 characters",
                ));
            } else if !label_value_ok(vs) {
                errs.push(FieldError::invalid(
                    "metadata.labels",
                    go_quote(vs),
                    LABEL_VALUE_MSG,
                ));
            }
        }
    }
    if let Some(ann) = at(obj, &["metadata", "annotations"]).and_then(Value::as_object) {
        let total: usize = ann
            .iter()
            .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
            .sum();
        if total > 256 * 1024 {
            errs.push(FieldError {
                kind: crate::status::FieldErrorType::TooLong,
                field: "metadata.annotations".into(),
                value: None,
                detail: "may not be more than 262144 bytes".into(),
            });
        }
        for k in ann.keys() {
            for m in qualified_name(&k.to_ascii_lowercase()) {
                errs.push(FieldError::invalid("metadata.annotations", go_quote(k), m));
            }
        }
    }
    if let Some(owners) = at(obj, &["metadata", "ownerReferences"]).and_then(Value::as_array) {
        let mut controllers = Vec::new();
        for o in owners {
            for f in ["apiVersion", "kind", "name", "uid"] {
                if o.get(f).and_then(Value::as_str).unwrap_or("").is_empty() {
                    errs.push(FieldError::invalid(
                        format!("metadata.ownerReferences.{f}"),
                        "\"\"",
                        format!("{f} must not be empty"),
                    ));
                }
            }
            if o.get("controller").and_then(Value::as_bool) == Some(true) {
                controllers.push(format!(
                    "{}/{}",
                    o.get("kind").and_then(Value::as_str).unwrap_or(""),
                    o.get("name").and_then(Value::as_str).unwrap_or("")
                ));
            }
        }
        if controllers.len() > 1 {
            errs.push(FieldError::invalid(
                "metadata.ownerReferences",
                format!("{owners:?}").replace('"', "'"),
                format!("Only one reference can have Controller set to true. Found \"true\" in references for {} and {}", controllers[0], controllers[1]),
            ));
        }
    }
    if let Some(old) = old
        && at(old, &["metadata", "deletionTimestamp"]).is_some()
    {
        let before = meta::finalizers(old);
        let added: Vec<String> = meta::finalizers(obj)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !added.is_empty() {
            let list = added
                .iter()
                .map(|f| go_quote(f))
                .collect::<Vec<_>>()
                .join(", ");
            errs.push(FieldError::forbidden(
                "metadata.finalizers",
                format!("no new finalizers can be added if the object is being deleted, found new finalizers []string{{{list}}}"),
            ));
        }
    }
}

fn int_at(v: &Value, path: &[&str]) -> Option<i64> {
    at(v, path).and_then(Value::as_i64)
}

fn nonneg(obj: &Value, path: &[&str], field: &str, errs: &mut Vec<FieldError>) {
    if let Some(n) = int_at(obj, path)
        && n < 0
    {
        errs.push(FieldError::invalid(field, n.to_string(), NONNEG));
    }
}

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

fn pod_spec(spec: &Value, base: &str, errs: &mut Vec<FieldError>) {
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

fn workload(id: StorageId, obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    nonneg(obj, &["spec", "replicas"], "spec.replicas", errs);
    if id == StorageId::ReplicaSets {
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
        Some(s) => Some(s.clone()),
    };
    let tpl_labels = at(&spec, &["template", "metadata", "labels"]);
    let matches = match (&sel_parsed, selector) {
        (Some(s), _) => selector_matches(s, tpl_labels),
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
    if id == StorageId::Deployments {
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

fn selector_matches(sel: &Value, labels: Option<&Value>) -> bool {
    let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    if let Some(ml) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in ml {
            if get(k) != v.as_str() {
                return false;
            }
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let k = e.get("key").and_then(Value::as_str).unwrap_or("");
        let vals: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let ok = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => get(k).is_some_and(|x| vals.contains(&x)),
            "NotIn" => !get(k).is_some_and(|x| vals.contains(&x)),
            "Exists" => get(k).is_some(),
            "DoesNotExist" => get(k).is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

fn workload_status(id: StorageId, obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
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
    if id == StorageId::ReplicaSets {
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
    let bounded: &[&str] = if id == StorageId::Deployments {
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
    if id == StorageId::Deployments
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

/// Fields of a pod spec a main-resource update may change.
fn pod_update(obj: &Value, old: &Value, errs: &mut Vec<FieldError>) {
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

fn event(obj: &Value, errs: &mut Vec<FieldError>) {
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

fn lease(obj: &Value, errs: &mut Vec<FieldError>) {
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

/// Validate an object about to be stored. `old` is the stored object on updates; `sub` the
/// subresource being written.
pub fn validate(
    id: StorageId,
    obj: &Value,
    old: Option<&Value>,
    sub: Option<&str>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    object_meta(id, obj, old, &mut errs);
    match (id, sub) {
        (StorageId::Deployments | StorageId::ReplicaSets, None) => {
            workload(id, obj, old, &mut errs)
        }
        (StorageId::Deployments | StorageId::ReplicaSets, Some("status")) => {
            workload_status(id, obj, old, &mut errs)
        }
        (StorageId::Pods, None) => {
            if let Some(spec) = obj.get("spec") {
                pod_spec(spec, "spec", &mut errs);
            }
            if let Some(old) = old {
                pod_update(obj, old, &mut errs);
            }
        }
        (StorageId::Events, _) => event(obj, &mut errs),
        (StorageId::Leases, _) => lease(obj, &mut errs),
        _ => {}
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deploy(spec: Value) -> Value {
        json!({"metadata": {"name": "web"}, "spec": spec})
    }

    fn base_spec() -> Value {
        json!({"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}, "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
               "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"restartPolicy": "Always", "containers": [{"name": "web", "image": "nginx", "imagePullPolicy": "Always"}]}}})
    }

    fn fields(errs: &[FieldError]) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}|{:?}", e.field, e.kind))
            .collect()
    }

    #[test]
    fn valid_deployment_passes() {
        assert!(validate(StorageId::Deployments, &deploy(base_spec()), None, None).is_empty());
    }

    #[test]
    fn deployment_rules_table() {
        // (mutation, expected field|type, detail substring) — after upstream TestValidateDeployment
        let cases: Vec<(Value, &str, &str)> = vec![
            (
                json!({"template": {"metadata": {"labels": {"app": "other"}}, "spec": {"restartPolicy": "Always", "containers": [{"name": "web", "image": "nginx"}]}}}),
                "spec.template.metadata.labels|Invalid",
                "`selector` does not match template `labels`",
            ),
            (
                json!({"replicas": -1}),
                "spec.replicas|Invalid",
                "must be greater than or equal to 0",
            ),
            (
                json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}),
                "spec.strategy.rollingUpdate.maxUnavailable|Invalid",
                "may not be 0 when `maxSurge` is 0",
            ),
            (
                json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "0%"}}}),
                "spec.strategy.rollingUpdate.maxUnavailable|Invalid",
                "may not be 0",
            ),
            (
                json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "110%"}}}),
                "spec.strategy.rollingUpdate.maxUnavailable|Invalid",
                "must not be greater than 100%",
            ),
            (
                json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "x", "maxUnavailable": 1}}}),
                "spec.strategy.rollingUpdate.maxSurge|Invalid",
                "a valid percent string",
            ),
            (
                json!({"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}),
                "spec.strategy.rollingUpdate|Forbidden",
                "may not be specified when strategy `type` is 'Recreate'",
            ),
            (
                json!({"minReadySeconds": 10, "progressDeadlineSeconds": 5}),
                "spec.progressDeadlineSeconds|Invalid",
                "must be greater than minReadySeconds",
            ),
            (
                json!({"revisionHistoryLimit": -1}),
                "spec.revisionHistoryLimit|Invalid",
                "must be greater than or equal to 0",
            ),
            (
                json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"restartPolicy": "Never", "containers": [{"name": "web", "image": "nginx"}]}}}),
                "spec.template.spec.restartPolicy|NotSupported",
                "supported values: \"Always\"",
            ),
            (
                json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"activeDeadlineSeconds": 5, "containers": [{"name": "web", "image": "nginx"}]}}}),
                "spec.template.spec.activeDeadlineSeconds|Forbidden",
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            ),
            (
                json!({"selector": {"matchLabels": null}}),
                "spec.selector|Invalid",
                "empty selector is invalid for deployment",
            ),
        ];
        for (patch, want, detail) in cases {
            let mut spec = base_spec();
            json_patch::merge(&mut spec, &patch);
            let errs = validate(StorageId::Deployments, &deploy(spec), None, None);
            let f = fields(&errs);
            let hit = errs.iter().zip(&f).find(|(_, f)| f.as_str() == want);
            let (e, _) = hit.unwrap_or_else(|| panic!("{patch}: want {want}, got {f:?}"));
            assert!(e.body().contains(detail), "{patch}: {}", e.body());
        }
    }

    #[test]
    fn missing_selector_gives_two_causes() {
        let mut spec = base_spec();
        spec.as_object_mut().map(|o| o.remove("selector"));
        let errs = validate(StorageId::Deployments, &deploy(spec), None, None);
        assert_eq!(
            fields(&errs),
            vec![
                "spec.selector|Required",
                "spec.template.metadata.labels|Invalid"
            ]
        );
    }

    #[test]
    fn names_and_immutable_selector() {
        let mut d = deploy(base_spec());
        d["metadata"]["name"] = json!("Web_1");
        let errs = validate(StorageId::Deployments, &d, None, None);
        assert!(
            errs[0]
                .body()
                .starts_with("Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain")
        );
        let old = deploy(base_spec());
        let mut new = deploy(base_spec());
        new["spec"]["selector"] = json!({"matchLabels": {"app": "web", "x": "y"}});
        new["spec"]["template"]["metadata"]["labels"]["x"] = json!("y");
        let errs = validate(StorageId::Deployments, &new, Some(&old), None);
        assert_eq!(fields(&errs), vec!["spec.selector|Invalid"]);
        assert!(errs[0].body().ends_with("field is immutable"));
        assert!(dns1123_label("a.b").len() == 1);
        assert!(dns1123_label(&"a".repeat(64)).len() == 1);
    }

    #[test]
    fn finalizers_cannot_be_added_while_deleting() {
        let old = json!({"metadata": {"name": "x", "deletionTimestamp": "2025-01-01T00:00:00Z", "finalizers": ["example.com/x"]}});
        let new = json!({"metadata": {"name": "x", "deletionTimestamp": "2025-01-01T00:00:00Z", "finalizers": ["example.com/x", "example.com/y"]}});
        let errs = validate(StorageId::Leases, &new, Some(&old), None);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].text(),
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/y\"}"
        );
    }

    #[test]
    fn status_rules() {
        let d = json!({"metadata": {"name": "x"}, "status": {"replicas": 1, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1}});
        let errs = validate(StorageId::Deployments, &d, None, Some("status"));
        assert_eq!(fields(&errs), vec!["status.updatedReplicas|Invalid"]);
        let old = json!({"status": {"collisionCount": 2}});
        let d = json!({"metadata": {"name": "x"}, "status": {"collisionCount": 1}});
        let errs = validate(StorageId::Deployments, &d, Some(&old), Some("status"));
        assert!(errs[0].body().contains("cannot be decremented"));
    }

    #[test]
    fn events_namespace_rule() {
        let e = json!({"metadata": {"name": "e", "namespace": "t1"}, "involvedObject": {"namespace": "other"}});
        let errs = validate(StorageId::Events, &e, None, None);
        assert_eq!(fields(&errs), vec!["involvedObject.namespace|Invalid"]);
        let ok = json!({"metadata": {"name": "e", "namespace": "default"}, "involvedObject": {"kind": "Node"}});
        assert!(validate(StorageId::Events, &ok, None, None).is_empty());
    }

    #[test]
    fn pod_update_forbidden_fields() {
        let old = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "x"}], "nodeName": ""}});
        let mut ok = old.clone();
        ok["spec"]["containers"][0]["image"] = json!("y");
        assert!(validate(StorageId::Pods, &ok, Some(&old), None).is_empty());
        let mut bad = old.clone();
        bad["spec"]["nodeName"] = json!("n1");
        assert_eq!(
            fields(&validate(StorageId::Pods, &bad, Some(&old), None)),
            vec!["spec|Forbidden"]
        );
    }
}
