//! Services (upstream `pkg/apis/core/validation` `ValidateService`): the ports a Service needs,
//! their names and numbers, and an `ExternalName` Service's name.

use std::collections::HashSet;

use serde_json::Value;

use super::formats::dns1123_label;
use crate::registry::api_status::{FieldError, go_quote};
use crate::registry::meta::at;

const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

/// A Service's spec.
pub(super) fn service(obj: &Value, errs: &mut Vec<FieldError>) {
    let ty = at(obj, &["spec", "type"])
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let headless = at(obj, &["spec", "clusterIP"]).and_then(Value::as_str) == Some("None");
    let ports = at(obj, &["spec", "ports"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if ty == "ExternalName" {
        let name = at(obj, &["spec", "externalName"])
            .and_then(Value::as_str)
            .unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required("spec.externalName", ""));
        }
    } else if ports.is_empty() && !headless {
        errs.push(FieldError::required("spec.ports", ""));
    }
    let mut names = HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let name = p.get("name").and_then(Value::as_str).unwrap_or("");
        let field = |f: &str| format!("spec.ports[{i}].{f}");
        if ports.len() > 1 && name.is_empty() {
            errs.push(FieldError::required(field("name"), ""));
        } else if !name.is_empty() {
            for m in dns1123_label(name) {
                errs.push(FieldError::invalid(field("name"), go_quote(name), m));
            }
            if !names.insert(name) {
                errs.push(FieldError::duplicate(field("name"), go_quote(name)));
            }
        }
        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&port) {
            errs.push(FieldError::invalid(
                field("port"),
                port.to_string(),
                PORT_RANGE,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(obj: Value) -> Vec<String> {
        let mut errs = Vec::new();
        service(&obj, &mut errs);
        errs.iter().map(FieldError::text).collect()
    }

    #[test]
    fn ports_as_kube_apiserver_answered() {
        assert_eq!(texts(json!({"spec": {}})), ["spec.ports: Required value"]);
        assert!(texts(json!({"spec": {"clusterIP": "None"}})).is_empty());
        assert_eq!(
            texts(json!({"spec": {"type": "ExternalName"}})),
            ["spec.externalName: Required value"]
        );
        assert_eq!(
            texts(json!({"spec": {"ports": [{"port": 80}, {"name": "b", "port": 0}]}})),
            [
                "spec.ports[0].name: Required value",
                "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive"
            ]
        );
    }
}
