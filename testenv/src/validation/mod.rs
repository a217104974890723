//! Validation (spec §3.2; upstream `apps/validation`, `core/validation`,
//! `apimachinery/pkg/api/validation`): object metadata and the kind-specific rules, with
//! upstream's field paths, error types and texts.

mod apps;
mod core;

use serde_json::Value;

use crate::meta::{self, at};
use crate::registry::StorageId;
use crate::status::{FieldError, go_quote};

const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
pub(super) const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";
pub(super) const NONNEG: &str = "must be greater than or equal to 0";

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

pub(super) fn is_name_part(s: &str) -> bool {
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

pub(super) fn go_map(m: Option<&Value>) -> String {
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

pub(super) fn go_selector(s: &Value) -> String {
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

pub(super) fn int_at(v: &Value, path: &[&str]) -> Option<i64> {
    at(v, path).and_then(Value::as_i64)
}

pub(super) fn nonneg(obj: &Value, path: &[&str], field: &str, errs: &mut Vec<FieldError>) {
    if let Some(n) = int_at(obj, path)
        && n < 0
    {
        errs.push(FieldError::invalid(field, n.to_string(), NONNEG));
    }
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
            apps::workload(id, obj, old, &mut errs)
        }
        (StorageId::Deployments | StorageId::ReplicaSets, Some("status")) => {
            apps::workload_status(id, obj, old, &mut errs)
        }
        (StorageId::Pods, None) => {
            if let Some(spec) = obj.get("spec") {
                core::pod_spec(spec, "spec", &mut errs);
            }
            if let Some(old) = old {
                core::pod_update(obj, old, &mut errs);
            }
        }
        (StorageId::Events, _) => core::event(obj, &mut errs),
        (StorageId::Leases, _) => core::lease(obj, &mut errs),
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
