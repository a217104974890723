//! Label selectors (upstream `apimachinery/pkg/apis/meta/v1/validation`
//! `ValidateLabelSelector`): operators, their values, and the keys and values of `matchLabels`.

use serde_json::Value;

use super::formats::{LABEL_VALUE_MSG, label_value_ok, qualified_name};
use crate::registry::api_status::{FieldError, go_quote};

/// Validate the selector at `path` (`spec.selector`); whether it is valid.
pub(super) fn label_selector(sel: &Value, path: &str, errs: &mut Vec<FieldError>) -> bool {
    let before = errs.len();
    for (i, e) in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = e
            .get("values")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" | "NotIn" if values == 0 => errs.push(FieldError::required(
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if values > 0 => errs.push(FieldError::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            op => errs.push(FieldError::invalid(
                format!("{at}.operator"),
                go_quote(op),
                "not a valid selector operator",
            )),
        }
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        for m in qualified_name(key) {
            errs.push(FieldError::invalid(format!("{at}.key"), go_quote(key), m));
        }
    }
    for (k, v) in sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let field = format!("{path}.matchLabels");
        for m in qualified_name(k) {
            errs.push(FieldError::invalid(field.clone(), go_quote(k), m));
        }
        let value = v.as_str().unwrap_or("");
        if value.len() > 63 {
            errs.push(FieldError::invalid(
                field,
                go_quote(value),
                "must be no more than 63 characters",
            ));
        } else if !label_value_ok(value) {
            errs.push(FieldError::invalid(field, go_quote(value), LABEL_VALUE_MSG));
        }
    }
    errs.len() == before
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(sel: Value) -> Vec<String> {
        let mut errs = Vec::new();
        label_selector(&sel, "spec.selector", &mut errs);
        errs.iter().map(FieldError::text).collect()
    }

    /// Texts kube-apiserver v1.37.2 answered for a DaemonSet with these selectors.
    #[test]
    fn selectors_as_kube_apiserver_answered() {
        assert_eq!(
            texts(json!({"matchExpressions": [{"key": "a", "operator": "In"}]})),
            [
                "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ]
        );
        assert_eq!(
            texts(
                json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})
            ),
            [
                "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            ]
        );
        assert_eq!(
            texts(json!({"matchExpressions": [{"key": "a", "operator": "Bad", "values": ["b"]}]})),
            [
                "spec.selector.matchExpressions[0].operator: Invalid value: \"Bad\": not a valid selector operator"
            ]
        );
        assert_eq!(texts(json!({"matchLabels": {"bad key": "b"}})).len(), 1);
        assert!(
            texts(json!({"matchLabels": {"a": "bad value!"}}))[0].starts_with(
                "spec.selector.matchLabels: Invalid value: \"bad value!\": a valid label"
            )
        );
        assert!(texts(json!({"matchLabels": {"a": "b"}})).is_empty());
    }
}
