//! The custom resource strategy (upstream `registry/customresource/strategy.go`,
//! `status_strategy.go`, `validator.go` and the CR handler's decoding): a body is decoded
//! (type checked, unknown metadata dropped, pruned, nulls dropped, defaulted), prepared
//! (status split when the status subresource is on, generation), validated (object meta,
//! schema with ratcheting, list sets and maps, scale replicas), and stored in the storage
//! version.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value, json};

use super::defaulting::apply_defaults;
use super::definition::CustomVersion;
use super::list_type::validate_list_types;
use super::prune::{prune, prune_nulls};
use super::validate::validate;
use crate::registry::api_status::{ApiError, ApiResult, FieldError, go_quote};
use crate::registry::meta::{at, meta_mut};
use crate::registry::resources::ResourceInfo;
use crate::registry::strategy::{keep_system_fields, unknown_fields};
use crate::registry::validation;

/// Decode a request body (`raw`: the bytes as sent, for the missing-kind message): `apiVersion`
/// and `kind` must be there (an unstructured object names its type), unknown metadata fields
/// are dropped, the object pruned, nulls of non-nullable fields dropped and defaults applied
/// with the version's schema. Returns the object and the dropped field paths (`metadata.foo`,
/// `spec.bar`) for `fieldValidation`. Another kind is left for validation to report.
pub fn decode(
    res: &ResourceInfo,
    cv: &CustomVersion,
    mut v: Value,
    raw: &[u8],
) -> ApiResult<(Value, Vec<String>)> {
    let Some(o) = v.as_object_mut() else {
        return Err(ApiError::bad_request(
            "the object provided is not a JSON object",
        ));
    };
    let want_av = res.api_version();
    let av = o.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if o.get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        let text = String::from_utf8_lossy(raw);
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): Object 'Kind' is missing in '{text}' ({})",
            res.kind,
            summarize(raw)
        )));
    }
    if av != want_av {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({want_av})"
        )));
    }
    let mut unknown = Vec::new();
    if let Some(m) = o.get_mut("metadata") {
        // managedFields stay: the field manager reads what the client sent (registry::apply)
        if let Some(mm) = m.as_object_mut() {
            mm.remove("selfLink");
        }
        let typed: ObjectMeta = serde_json::from_value(m.clone())
            .map_err(|e| ApiError::bad_request(format!("error decoding metadata: {e}")))?;
        let clean = serde_json::to_value(typed).unwrap_or_else(|_| json!({}));
        unknown_fields(m, &clean, "metadata", &mut unknown);
        *m = clean;
        // ObjectMeta's omitempty drops an empty managedFields list in upstream's metadata
        // round trip: for a custom resource `[]` does not clear them (`[{}]` does)
        if let Some(mm) = m.as_object_mut()
            && mm
                .get("managedFields")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
        {
            mm.remove("managedFields");
        }
    }
    unknown.extend(prune(&mut v, cv.schema.as_ref()));
    if let Some(s) = &cv.schema {
        prune_nulls(&mut v, Some(s));
        apply_defaults(&mut v, s);
    }
    Ok((v, unknown))
}

/// The start of a body as upstream quotes it in decoding errors (30 bytes, hex unless JSON).
fn summarize(raw: &[u8]) -> String {
    let cut = &raw[..raw.len().min(30)];
    let more = if raw.len() > 30 { " ..." } else { "" };
    match raw.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(cut)),
        Some(_) => {
            let hex: String = cut.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// The 422 of an invalid custom resource, named by the kind the object claims.
pub fn invalid(res: &ResourceInfo, obj: &Value, errs: &[FieldError]) -> ApiError {
    let kind = obj["kind"].as_str().unwrap_or(res.kind);
    ApiError::invalid(
        &format!("{kind}.{}", res.group),
        res.group,
        kind,
        crate::registry::meta::name_of(obj),
        errs,
    )
}

/// `PrepareForCreate`: no status with the status subresource on; generation 1.
pub fn prepare_for_create(cv: &CustomVersion, obj: &mut Value) {
    if cv.status
        && let Some(o) = obj.as_object_mut()
    {
        o.remove("status");
    }
    meta_mut(obj).insert("generation".into(), json!(1));
}

fn without_metadata(v: &Value) -> Map<String, Value> {
    v.as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| k.as_str() != "metadata" && k.as_str() != "apiVersion")
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// `PrepareForUpdate` of the main resource (`sub: None`) or of `/status`. The main resource
/// keeps the stored status when the status subresource is on, and its generation moves when
/// anything but metadata changed (the status too, without the subresource); `/status`
/// changes only the status.
pub fn prepare_for_update(cv: &CustomVersion, sub: Option<&str>, old: &Value, new: &mut Value) {
    if sub == Some("status") {
        let status = new.get("status").cloned();
        // managedFields stay the new object's: they track this status write
        let managed = at(new, &["metadata", "managedFields"]).cloned();
        let mut merged = old.clone();
        if let Some(o) = merged.as_object_mut() {
            match status {
                Some(s) => o.insert("status".into(), s),
                None => o.remove("status"),
            };
            if let Some(av) = new.get("apiVersion") {
                o.insert("apiVersion".into(), av.clone());
            }
        }
        let m = meta_mut(&mut merged);
        match managed {
            Some(mf) => m.insert("managedFields".into(), mf),
            None => m.remove("managedFields"),
        };
        *new = merged;
        return;
    }
    keep_system_fields(old, new);
    if cv.status
        && let Some(o) = new.as_object_mut()
    {
        match old.get("status") {
            Some(s) => o.insert("status".into(), s.clone()),
            None => o.remove("status"),
        };
    }
    if without_metadata(old) != without_metadata(new) {
        let g = at(old, &["metadata", "generation"])
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(new).insert("generation".into(), json!(g + 1));
    }
}

/// Validate a custom resource about to be stored (in the request's version): object meta,
/// the schema (only the status for `/status`; values unchanged from `old` are not reported),
/// list sets and maps, and the scale replicas paths.
pub fn validate_object(
    res: &ResourceInfo,
    cv: &CustomVersion,
    obj: &Value,
    old: Option<&Value>,
    sub: Option<&str>,
) -> Vec<FieldError> {
    // the type first: another kind is the only error reported
    let kind = obj["kind"].as_str().unwrap_or("");
    if kind != res.kind {
        return vec![FieldError::invalid(
            "kind",
            go_quote(kind),
            format!("must be {}", res.kind),
        )];
    }
    let mut errs = validation::validate(res.storage, obj, old, None);
    let schema = cv.schema.as_ref();
    if sub == Some("status") {
        let status_schema = schema.and_then(|s| s.properties.get("status"));
        if let (Some(st), Some(s)) = (obj.get("status"), status_schema) {
            errs.extend(validate(st, old.and_then(|o| o.get("status")), s, "status"));
        }
    } else if let Some(s) = schema {
        errs.extend(validate(obj, old, s, ""));
    }
    if let Some(s) = schema {
        let new_list = validate_list_types(obj, s);
        let old_ok = old.is_none_or(|o| validate_list_types(o, s).is_empty());
        if old_ok {
            errs.extend(new_list);
        }
    }
    if let Some(scale) = &cv.scale {
        if sub != Some("status") {
            errs.extend(replicas_errors(obj, &scale.spec_replicas));
        }
        errs.extend(replicas_errors(obj, &scale.status_replicas));
        if let Some(p) = &scale.label_selector
            && let Some(v) = lookup(obj, p)
            && !v.is_string()
        {
            errs.push(FieldError::invalid(
                p.clone(),
                go_quote(""),
                accessor_error(p, v, "string"),
            ));
        }
    }
    errs
}

/// The value at a simple JSONPath (`.spec.replicas`).
pub fn lookup<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let parts: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    at(obj, &parts)
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::String(_) => "string",
        Value::Number(n) if n.as_i64().is_some() => "int64",
        Value::Number(_) => "float64",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// unstructured's `Nested*` accessor error.
fn accessor_error(path: &str, v: &Value, want: &str) -> String {
    let shown = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!(
        "{path} accessor error: {shown} is of the type {}, expected {want}",
        go_type(v)
    )
}

fn replicas_errors(obj: &Value, path: &str) -> Vec<FieldError> {
    let Some(v) = lookup(obj, path) else {
        return Vec::new();
    };
    let Some(n) = v.as_i64() else {
        return vec![FieldError::invalid(
            path,
            "0",
            accessor_error(path, v, "int64"),
        )];
    };
    if n < 0 {
        vec![FieldError::invalid(
            path,
            n.to_string(),
            "should be a non-negative integer",
        )]
    } else if n > i64::from(i32::MAX) {
        vec![FieldError::invalid(
            path,
            n.to_string(),
            format!("should be less than or equal to {}", i32::MAX),
        )]
    } else {
        Vec::new()
    }
}

/// The object in the storage version (conversion strategy None: only `apiVersion`), pruned
/// with the storage version's schema when that is another version's.
pub fn to_storage_version(res: &ResourceInfo, cv: &CustomVersion, obj: &mut Value) {
    if let Some(o) = obj.as_object_mut() {
        o.insert(
            "apiVersion".into(),
            Value::String(format!("{}/{}", res.group, cv.storage_version)),
        );
    }
    if let Some(s) = &cv.storage_schema {
        prune(obj, Some(s));
        prune_nulls(obj, Some(s));
    }
}

/// The 403 for a create while the CRD is being deleted (upstream's admission refusal).
pub fn terminating_create(res: &ResourceInfo, name: &str) -> ApiError {
    let qualified = format!("{}.{}", res.plural, res.group);
    let msg = "create not allowed while custom resource definition is terminating";
    let mut e = ApiError::new(
        403,
        "Forbidden",
        if name.is_empty() {
            format!("{qualified} is forbidden: {msg}")
        } else {
            format!("{qualified} {name:?} is forbidden: {msg}")
        },
    );
    e.details = Some(json!({"name": name, "group": res.group, "kind": res.plural}));
    e
}

#[cfg(test)]
mod tests;
