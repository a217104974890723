//! Object metadata rules every kind shares (upstream `apimachinery/pkg/api/validation`
//! `objectmeta.go`): name, labels, annotations, owner references, finalizers while deleting.

use serde_json::Value;

use super::formats::{
    LABEL_VALUE_MSG, dns1123_label, dns1123_subdomain, label_value_ok, qualified_name,
};
use crate::registry::StorageId;
use crate::registry::api_status::{FieldError, FieldErrorType, go_quote};
use crate::registry::meta::{self, at};

/// A kind's name rule (upstream: the `ValidateNameFunc` each kind's validation passes to
/// `ValidateObjectMeta`); `prefix` for a `generateName`, which may end in `-`.
type NameRule = fn(&str, bool) -> Vec<String>;

fn name_rule(id: StorageId) -> NameRule {
    match id {
        // NameIsDNSLabel: namespaces, StatefulSets, Services (RelaxedServiceNameValidation, GA)
        StorageId::NAMESPACES | StorageId::STATEFULSETS | StorageId::SERVICES => {
            |n, prefix| dns1123_label(&masked(n, prefix))
        }
        // ValidateRBACName and certificate requests: path segment names
        StorageId::ROLES
        | StorageId::CLUSTERROLES
        | StorageId::ROLEBINDINGS
        | StorageId::CLUSTERROLEBINDINGS
        | StorageId::CERTIFICATESIGNINGREQUESTS => |n, _| path_segment(n),
        // `<version>.<group>`, checked by the aggregator's own rule
        StorageId::APISERVICES | StorageId::IPADDRESSES => |_, _| Vec::new(),
        StorageId::CRONJOBS => |n, prefix| {
            let mut out = dns1123_subdomain(&masked(n, prefix));
            // the Jobs it creates add 11 characters (`-<timestamp>`)
            if !prefix && n.len() > 52 {
                out.push("must be no more than 52 characters".to_string());
            }
            out
        },
        _ => |n, prefix| dns1123_subdomain(&masked(n, prefix)),
    }
}

/// A generate-name prefix may end in `-` (upstream `maskTrailingDash`: the last two
/// characters become `a`).
fn masked(n: &str, prefix: bool) -> String {
    if prefix && n.len() > 1 && n.ends_with('-') && n.is_char_boundary(n.len() - 2) {
        format!("{}a", &n[..n.len() - 2])
    } else {
        n.to_string()
    }
}

/// `path.IsValidPathSegmentName`'s errors.
fn path_segment(n: &str) -> Vec<String> {
    match n {
        "." => return vec!["may not be '.'".to_string()],
        ".." => return vec!["may not be '..'".to_string()],
        _ => {}
    }
    let mut out = Vec::new();
    for c in ['/', '%'] {
        if n.contains(c) {
            out.push(format!("may not contain '{c}'"));
        }
    }
    out
}

/// Object metadata rules common to every kind.
pub(super) fn object_meta(
    id: StorageId,
    obj: &Value,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    let name = meta::name_of(obj);
    let rule = name_rule(id);
    let generate_name = meta::meta_str(obj, "generateName");
    if !generate_name.is_empty() {
        for m in rule(generate_name, true) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                go_quote(generate_name),
                m,
            ));
        }
    }
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for m in rule(name, false) {
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
                kind: FieldErrorType::TooLong,
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
