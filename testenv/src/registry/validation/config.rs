//! ConfigMaps and Secrets (upstream `pkg/apis/core/validation`: `ValidateConfigMap`,
//! `ValidateSecret` and their updates): valid keys, the keys each Secret type needs, and what
//! `immutable: true` and a Secret's type freeze.

use serde_json::{Map, Value};

use crate::registry::api_status::{FieldError, FieldErrorType, go_quote};
use crate::registry::meta::at;

const CONFIG_KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const IMMUTABLE_SET: &str = "field is immutable when `immutable` is set";
/// Upstream's `MaxSecretSize` (also ConfigMaps').
const MAX_SIZE: usize = 1024 * 1024;

/// `IsConfigMapKey`'s errors.
fn config_key(k: &str) -> Vec<String> {
    let mut out = Vec::new();
    if k.len() > 253 {
        out.push("must be no more than 253 characters".to_string());
    }
    if k.is_empty()
        || !k
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        out.push(CONFIG_KEY_MSG.to_string());
    }
    if k == "." {
        out.push("must not be '.'".to_string());
    } else if k == ".." {
        out.push("must not be '..'".to_string());
    } else if k.starts_with("..") {
        out.push("must not start with '..'".to_string());
    }
    out
}

fn keys(map: Option<&Map<String, Value>>, field: &str, errs: &mut Vec<FieldError>) {
    for k in map.into_iter().flatten().map(|(k, _)| k) {
        for m in config_key(k) {
            errs.push(FieldError::invalid(format!("{field}[{k}]"), go_quote(k), m));
        }
    }
}

/// The stored size of a map of strings (Secret data holds base64 text: its decoded size).
fn size(map: Option<&Map<String, Value>>, base64: bool) -> usize {
    map.into_iter()
        .flatten()
        .map(|(k, v)| {
            let n = v.as_str().map_or(0, str::len);
            k.len() + if base64 { n / 4 * 3 } else { n }
        })
        .sum()
}

fn too_long(field: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::TooLong,
        field: field.into(),
        value: None,
        detail: format!("may not be more than {MAX_SIZE} bytes"),
    }
}

/// What `immutable: true` freezes on an update.
fn frozen(obj: &Value, old: &Value, fields: &[&str], errs: &mut Vec<FieldError>) {
    if at(old, &["immutable"]).and_then(Value::as_bool) != Some(true) {
        return;
    }
    if at(obj, &["immutable"]).and_then(Value::as_bool) != Some(true) {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE_SET));
    }
    for f in fields {
        if obj.get(*f) != old.get(*f) {
            errs.push(FieldError::forbidden(*f, IMMUTABLE_SET));
        }
    }
}

/// A ConfigMap.
pub(super) fn config_map(obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    let data = obj.get("data").and_then(Value::as_object);
    let binary = obj.get("binaryData").and_then(Value::as_object);
    keys(data, "data", errs);
    keys(binary, "binaryData", errs);
    for k in binary.into_iter().flatten().map(|(k, _)| k) {
        if data.is_some_and(|d| d.contains_key(k)) {
            errs.push(FieldError::invalid(
                format!("data[{k}]"),
                go_quote(k),
                "duplicate of key present in binaryData",
            ));
        }
    }
    if size(data, false) + size(binary, true) > MAX_SIZE {
        errs.push(too_long(""));
    }
    if let Some(old) = old {
        frozen(obj, old, &["data", "binaryData"], errs);
    }
}

/// A Secret: keys, the keys its type needs, and an update's frozen fields.
pub(super) fn secret(obj: &Value, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    let data = obj.get("data").and_then(Value::as_object);
    keys(data, "data", errs);
    if size(data, true) > MAX_SIZE {
        errs.push(too_long("data"));
    }
    let has = |k: &str| {
        data.and_then(|d| d.get(k))
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
    };
    let need = |k: &str, errs: &mut Vec<FieldError>| {
        if !has(k) {
            errs.push(FieldError::required(format!("data[{k}]"), ""));
        }
    };
    match obj.get("type").and_then(Value::as_str).unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let sa = at(
                obj,
                &[
                    "metadata",
                    "annotations",
                    "kubernetes.io/service-account.name",
                ],
            )
            .and_then(Value::as_str)
            .unwrap_or("");
            if sa.is_empty() {
                errs.push(FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" => need(".dockercfg", errs),
        "kubernetes.io/dockerconfigjson" => need(".dockerconfigjson", errs),
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            need("username", errs);
            need("password", errs);
        }
        "kubernetes.io/ssh-auth" => need("ssh-privatekey", errs),
        "kubernetes.io/tls" => {
            need("tls.crt", errs);
            need("tls.key", errs);
        }
        _ => {}
    }
    if let Some(old) = old {
        let (ty, old_ty) = (obj.get("type"), old.get("type"));
        if ty != old_ty {
            errs.insert(
                0,
                FieldError::invalid(
                    "type",
                    ty.and_then(Value::as_str).map(go_quote).unwrap_or_default(),
                    "field is immutable",
                ),
            );
        }
        frozen(obj, old, &["data"], errs);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(FieldError::text).collect()
    }

    #[test]
    fn immutable_config_maps_as_kube_apiserver_answered() {
        let old = json!({"immutable": true, "data": {"a": "1"}});
        let mut errs = Vec::new();
        config_map(
            &json!({"immutable": true, "data": {"a": "2"}}),
            Some(&old),
            &mut errs,
        );
        assert_eq!(
            texts(&errs),
            ["data: Forbidden: field is immutable when `immutable` is set"]
        );
        let mut errs = Vec::new();
        config_map(
            &json!({"immutable": false, "data": {"a": "1"}}),
            Some(&old),
            &mut errs,
        );
        assert_eq!(
            texts(&errs),
            ["immutable: Forbidden: field is immutable when `immutable` is set"]
        );
    }

    #[test]
    fn secret_types_and_keys() {
        let old = json!({"type": "Opaque"});
        let mut errs = Vec::new();
        secret(&json!({"type": "kubernetes.io/tls"}), Some(&old), &mut errs);
        assert_eq!(
            texts(&errs),
            [
                "type: Invalid value: \"kubernetes.io/tls\": field is immutable",
                "data[tls.crt]: Required value",
                "data[tls.key]: Required value"
            ]
        );
        let mut errs = Vec::new();
        secret(
            &json!({"type": "Opaque", "data": {"bad key": "eA=="}}),
            None,
            &mut errs,
        );
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "data[bad key]");
    }
}
