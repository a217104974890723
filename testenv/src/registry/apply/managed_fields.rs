//! `metadata.managedFields` read and written as kube-apiserver does (apimachinery's
//! `util/managedfields/internal/managedfields.go`): each entry is one manager's
//! [`VersionedSet`] under an identifier (the entry's JSON without time and fields, and
//! without the API version for appliers), with its time kept aside; entries are written
//! sorted by operation (`Apply` first), time, manager, API version and subresource.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fields_v1;
use super::set::Set;
use super::value::write_json_string;
use crate::registry::api_status::{FieldError, FieldErrorType};
use crate::registry::meta::parse_time;
use kcm_util::go_quote::go_quote;

/// A manager's fields, the API version it used, and whether it applied them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedSet {
    /// The fields.
    pub set: Set,
    /// `apps/v1`.
    pub api_version: String,
    /// Whether the operation was Apply (else Update).
    pub applied: bool,
}

/// Managers by identifier.
pub type Managers = BTreeMap<String, VersionedSet>;

/// The managers of an object and when each last changed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Managed {
    /// Fields by manager identifier.
    pub fields: Managers,
    /// RFC 3339 times by manager identifier (`None`: the entry had none).
    pub times: BTreeMap<String, Option<String>>,
}

/// What identifies a manager.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagerId {
    /// The field manager's name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// The API version, for `Update` managers only.
    pub api_version: String,
    /// The subresource written through (`status`), if any.
    pub subresource: String,
}

impl ManagerId {
    /// The identifier: the entry's JSON as Go writes it, empty fields left out.
    pub fn identifier(&self) -> String {
        let mut out = String::from("{");
        let mut first = true;
        for (key, v) in [
            ("manager", &self.manager),
            ("operation", &self.operation),
            ("apiVersion", &self.api_version),
            ("subresource", &self.subresource),
        ] {
            if v.is_empty() {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            write_json_string(&mut out, key);
            out.push(':');
            write_json_string(&mut out, v);
        }
        out.push('}');
        out
    }

    /// Read an identifier back.
    pub fn parse(identifier: &str) -> Option<ManagerId> {
        let v: Value = serde_json::from_str(identifier).ok()?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        v.is_object().then(|| ManagerId {
            manager: s("manager"),
            operation: s("operation"),
            api_version: s("apiVersion"),
            subresource: s("subresource"),
        })
    }
}

fn text<'a>(e: &'a Value, key: &str) -> &'a str {
    e.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether a client's `managedFields` asks to clear them: an empty list, or one empty entry.
pub fn is_reset(entries: Option<&Value>) -> bool {
    match entries {
        Some(Value::Array(a)) if a.is_empty() => true,
        Some(Value::Array(a)) if a.len() == 1 => match &a[0] {
            Value::Object(m) => m.values().all(|v| match v {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                _ => false,
            }),
            _ => false,
        },
        _ => false,
    }
}

/// Longest field manager name (apimachinery's `FieldManagerMaxLength`).
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII
/// space, approximated by "not a control or other whitespace character".
pub fn is_print(c: char) -> bool {
    c == ' ' || !(c.is_control() || c.is_whitespace() || ('\u{e000}'..='\u{f8ff}').contains(&c))
}

/// Longest subresource name in an entry (apimachinery's `MaxSubresourceNameLength`).
const MAX_SUBRESOURCE_LENGTH: usize = 256;

/// `metadata.managedFields` checked as object metadata is (apimachinery's
/// `ValidateManagedFields`): operations `Apply` or `Update`, fieldsType `FieldsV1`, manager
/// names of at most 128 printable bytes, subresource names of at most 256.
pub fn validate(entries: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, e) in entries
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = |f: &str| format!("metadata.managedFields[{i}].{f}");
        match text(e, "operation") {
            "" => errs.push(FieldError::required(at("operation"), "must not be empty")),
            "Apply" | "Update" => {}
            other => errs.push(FieldError::not_supported(
                at("operation"),
                go_quote(other),
                &["Apply", "Update"],
            )),
        }
        let fields_type = text(e, "fieldsType");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            errs.push(FieldError::invalid(
                at("fieldsType"),
                go_quote(fields_type),
                "must be `FieldsV1`",
            ));
        }
        let manager = text(e, "manager");
        if manager.len() > FIELD_MANAGER_MAX_LENGTH {
            errs.push(too_long(at("manager"), FIELD_MANAGER_MAX_LENGTH));
        }
        for (pos, c) in manager.char_indices() {
            if !is_print(c) {
                errs.push(FieldError::invalid(
                    at("manager"),
                    go_quote(manager),
                    format!("invalid character U+{:04X} (at position {pos})", c as u32),
                ));
            }
        }
        if text(e, "subresource").len() > MAX_SUBRESOURCE_LENGTH {
            errs.push(too_long(at("subresource"), MAX_SUBRESOURCE_LENGTH));
        }
    }
    errs
}

fn too_long(field: String, max: usize) -> FieldError {
    FieldError {
        kind: FieldErrorType::TooLong,
        field,
        value: None,
        detail: format!("may not be more than {max} bytes"),
    }
}

/// Read `metadata.managedFields` (missing or null: no managers).
pub fn decode(entries: Option<&Value>) -> Result<Managed, String> {
    let mut managed = Managed::default();
    let items = match entries {
        None | Some(Value::Null) => return Ok(managed),
        Some(Value::Array(a)) => a,
        Some(other) => return Err(format!("managedFields must be a list, got {other}")),
    };
    for (i, e) in items.iter().enumerate() {
        let operation = text(e, "operation");
        if operation != "Apply" && operation != "Update" {
            return Err("operation must be `Apply` or `Update`".into());
        }
        let api_version = text(e, "apiVersion");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match text(e, "fieldsType") {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                ));
            }
        }
        let applied = operation == "Apply";
        let id = ManagerId {
            manager: text(e, "manager").to_string(),
            operation: operation.to_string(),
            api_version: if applied {
                String::new()
            } else {
                api_version.to_string()
            },
            subresource: text(e, "subresource").to_string(),
        }
        .identifier();
        let set = match e.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(f) => fields_v1::decode(f)
                .map_err(|err| format!("error decoding versioned set from {e}: {err}"))?,
        };
        managed.fields.insert(
            id.clone(),
            VersionedSet {
                set,
                api_version: api_version.to_string(),
                applied,
            },
        );
        managed.times.insert(
            id,
            e.get("time").and_then(Value::as_str).map(str::to_string),
        );
    }
    Ok(managed)
}

/// One entry as the API writes it.
fn entry(id: &str, vs: &VersionedSet, time: Option<&String>) -> Value {
    let parsed = ManagerId::parse(id).unwrap_or_default();
    let mut m = Map::new();
    if !parsed.manager.is_empty() {
        m.insert("manager".into(), Value::String(parsed.manager));
    }
    let operation = if vs.applied {
        "Apply".to_string()
    } else {
        parsed.operation
    };
    if !operation.is_empty() {
        m.insert("operation".into(), Value::String(operation));
    }
    if !vs.api_version.is_empty() {
        m.insert("apiVersion".into(), Value::String(vs.api_version.clone()));
    }
    if let Some(t) = time {
        m.insert("time".into(), Value::String(t.clone()));
    }
    m.insert("fieldsType".into(), Value::String("FieldsV1".into()));
    m.insert("fieldsV1".into(), fields_v1::to_value(&vs.set));
    if !parsed.subresource.is_empty() {
        m.insert("subresource".into(), Value::String(parsed.subresource));
    }
    Value::Object(m)
}

fn unix_seconds(e: &Value) -> i64 {
    e.get("time")
        .and_then(Value::as_str)
        .and_then(parse_time)
        .map(|t| t.as_second())
        .unwrap_or(0)
}

/// Write the managers as `metadata.managedFields` (`None` when there are none).
pub fn encode(managed: &Managed) -> Option<Value> {
    if managed.fields.is_empty() {
        return None;
    }
    let mut entries: Vec<Value> = managed
        .fields
        .iter()
        .map(|(id, vs)| entry(id, vs, managed.times.get(id).and_then(Option::as_ref)))
        .collect();
    entries.sort_by(|p, q| {
        text(p, "operation")
            .cmp(text(q, "operation"))
            .then_with(|| unix_seconds(p).cmp(&unix_seconds(q)))
            .then_with(|| text(p, "manager").cmp(text(q, "manager")))
            .then_with(|| text(p, "apiVersion").cmp(text(q, "apiVersion")))
            .then_with(|| text(p, "subresource").cmp(text(q, "subresource")))
    });
    Some(Value::Array(entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers_as_go_writes_them() {
        let id = ManagerId {
            manager: "kubectl<x>".into(),
            operation: "Update".into(),
            api_version: "apps/v1".into(),
            subresource: "status".into(),
        };
        assert_eq!(
            id.identifier(),
            r#"{"manager":"kubectl\u003cx\u003e","operation":"Update","apiVersion":"apps/v1","subresource":"status"}"#
        );
        assert_eq!(ManagerId::parse(&id.identifier()), Some(id));
        let apply = ManagerId {
            manager: "m".into(),
            operation: "Apply".into(),
            ..ManagerId::default()
        };
        assert_eq!(apply.identifier(), r#"{"manager":"m","operation":"Apply"}"#);
    }

    #[test]
    fn round_trip_and_order() {
        let entries = json!([
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:x": {}}}},
            {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:y": {}}}, "subresource": "status"},
            {"manager": "z", "operation": "Apply", "apiVersion": "v1", "time": "2024-01-01T00:00:09Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:z": {}}}},
            {"manager": "c", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:01Z",
             "fieldsType": "FieldsV1", "fieldsV1": {}},
        ]);
        let m = decode(Some(&entries)).expect("decodes");
        assert_eq!(m.fields.len(), 4);
        let out = encode(&m).expect("entries");
        let order: Vec<&str> = out
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| e["manager"].as_str().unwrap_or(""))
            .collect();
        // Apply first, then by time, then by manager
        assert_eq!(order, vec!["z", "c", "a", "b"]);
        assert_eq!(decode(Some(&out)).expect("decodes"), m);
        assert_eq!(encode(&Managed::default()), None);
    }

    #[test]
    fn malformed_entries() {
        let bad = |e: Value| decode(Some(&json!([e]))).expect_err("malformed");
        assert_eq!(
            bad(
                json!({"manager": "a", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"})
            ),
            "operation must be `Apply` or `Update`"
        );
        assert_eq!(
            bad(json!({"manager": "a", "operation": "Update", "fieldsType": "FieldsV1"})),
            "apiVersion must not be empty"
        );
        assert_eq!(
            bad(json!({"manager": "a", "operation": "Update", "apiVersion": "v1"})),
            "missing fieldsType in managed fields entry 0"
        );
        assert_eq!(
            bad(
                json!({"manager": "a", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"})
            ),
            "invalid fieldsType \"FieldsV2\" in managed fields entry 0"
        );
        let entries = json!([{"manager": "x\u{1}y", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}]);
        let texts: Vec<String> = validate(Some(&entries))
            .iter()
            .map(FieldError::text)
            .collect();
        assert_eq!(
            texts,
            vec![
                "metadata.managedFields[0].manager: Invalid value: \"x\\x01y\": invalid character U+0001 (at position 1)"
            ]
        );
        assert!(
            validate(Some(
                &json!([{"manager": "a", "operation": "Apply", "fieldsType": "FieldsV1"}])
            ))
            .is_empty()
        );
        assert!(is_reset(Some(&json!([]))));
        assert!(is_reset(Some(&json!([{}]))));
        assert!(!is_reset(None));
        assert!(!is_reset(Some(&json!([{"manager": "a"}]))));
    }
}
