//! Object metadata rules every kind shares (upstream `apimachinery/pkg/api/validation`
//! `objectmeta.go`): name, labels, annotations, owner references, finalizers while deleting.

use serde_json::Value;

use super::formats::{
    LABEL_VALUE_MSG, dns1123_label, dns1123_subdomain, label_value_ok, qualified_name,
};
use crate::registry::StorageId;
use crate::registry::api_status::{FieldError, FieldErrorType, go_quote};
use crate::registry::meta::{self, at};

/// Object metadata rules common to every kind.
pub(super) fn object_meta(
    id: StorageId,
    obj: &Value,
    old: Option<&Value>,
    errs: &mut Vec<FieldError>,
) {
    let name = meta::name_of(obj);
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        let msgs = if id == StorageId::NAMESPACES {
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
