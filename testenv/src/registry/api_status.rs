//! The metav1 `Status` error shapes of kube-apiserver
//! (`staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go`).

use serde_json::{Value, json};

use super::resources::ResourceInfo;

/// The type of one field error (`FieldValue<Type>` in causes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorType {
    /// `Required value`
    Required,
    /// `Invalid value: <v>`
    Invalid,
    /// `Unsupported value: <v>: supported values: ...`
    NotSupported,
    /// `Forbidden`
    Forbidden,
    /// `Duplicate value: <v>`
    Duplicate,
    /// `Too long`
    TooLong,
    /// `Not found`
    NotFound,
    /// `Invalid value: <v>` for a value of the wrong type
    TypeInvalid,
    /// `Too many: <n>`
    TooMany,
}

impl FieldErrorType {
    fn reason(self) -> &'static str {
        match self {
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::TooLong => "FieldValueTooLong",
            FieldErrorType::NotFound => "FieldValueNotFound",
            FieldErrorType::TypeInvalid => "FieldValueTypeInvalid",
            FieldErrorType::TooMany => "FieldValueTooMany",
        }
    }
}

/// One validation error on one field, formatted like apimachinery's `field.Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Error type.
    pub kind: FieldErrorType,
    /// Field path (`spec.replicas`).
    pub field: String,
    /// The offending value, already Go-formatted (`5`, `"x"`, `null`).
    pub value: Option<String>,
    /// Detail text.
    pub detail: String,
}

impl FieldError {
    /// `Required value[: detail]`
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            kind: FieldErrorType::Required,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }
    /// `Invalid value: v: detail`
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            kind: FieldErrorType::Invalid,
            field: field.into(),
            value: Some(value.into()),
            detail: detail.into(),
        }
    }
    /// `Forbidden: detail`
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            kind: FieldErrorType::Forbidden,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }
    /// `Unsupported value: v: supported values: "a", "b"`
    pub fn not_supported(
        field: impl Into<String>,
        value: impl Into<String>,
        supported: &[&str],
    ) -> Self {
        let list = supported
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ");
        Self {
            kind: FieldErrorType::NotSupported,
            field: field.into(),
            value: Some(value.into()),
            detail: if supported.is_empty() {
                String::new()
            } else {
                format!("supported values: {list}")
            },
        }
    }
    /// `Duplicate value: v`
    pub fn duplicate(field: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            kind: FieldErrorType::Duplicate,
            field: field.into(),
            value: Some(value.into()),
            detail: String::new(),
        }
    }

    /// The text without the field prefix (the cause `message`).
    pub fn body(&self) -> String {
        let head = match self.kind {
            FieldErrorType::Required => "Required value".to_string(),
            FieldErrorType::Invalid | FieldErrorType::TypeInvalid => {
                format!("Invalid value: {}", self.value.as_deref().unwrap_or("null"))
            }
            FieldErrorType::TooMany => match &self.value {
                Some(v) => format!("Too many: {v}"),
                None => "Too many".to_string(),
            },
            FieldErrorType::NotSupported => {
                format!(
                    "Unsupported value: {}",
                    self.value.as_deref().unwrap_or("null")
                )
            }
            FieldErrorType::Forbidden => "Forbidden".to_string(),
            FieldErrorType::Duplicate => {
                format!(
                    "Duplicate value: {}",
                    self.value.as_deref().unwrap_or("null")
                )
            }
            FieldErrorType::TooLong => "Too long".to_string(),
            FieldErrorType::NotFound => {
                format!("Not found: {}", self.value.as_deref().unwrap_or("null"))
            }
        };
        if self.detail.is_empty() {
            head
        } else {
            format!("{head}: {}", self.detail)
        }
    }

    /// `field: body`
    pub fn text(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }
}

pub(crate) use kcm_util::go_quote::go_quote;

/// StatusDetails and StatusCause fields are `omitempty` upstream: empty strings (a core
/// resource's group, an object-level cause's field) and empty cause lists are left out.
pub fn omit_empty(mut d: Value) -> Value {
    fn strip(m: &mut serde_json::Map<String, Value>) {
        m.retain(|_, v| !matches!(v, Value::String(s) if s.is_empty()));
    }
    if let Some(m) = d.as_object_mut() {
        strip(m);
        if let Some(Value::Array(causes)) = m.get_mut("causes") {
            for c in causes.iter_mut() {
                if let Some(cm) = c.as_object_mut() {
                    strip(cm);
                }
            }
        }
        if m.get("causes")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            m.remove("causes");
        }
    }
    d
}

/// Go formatting of a JSON scalar value for `Invalid value:` texts.
pub fn go_value(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".to_string(),
        Some(Value::String(s)) => go_quote(s),
        Some(other) => other.to_string(),
    }
}

/// An API error answered as a metav1 Status.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// Status reason (`NotFound`, `Conflict`, ...).
    pub reason: &'static str,
    /// Human message.
    pub message: String,
    /// `details`, if any.
    pub details: Option<Value>,
    /// `metadata` of the Status (the continue token of an Expired list).
    pub metadata: Option<Value>,
}

impl ApiError {
    /// A plain error with no details.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            metadata: None,
        }
    }

    /// The same error with these `details`.
    pub fn with_details(mut self, d: Value) -> Self {
        self.details = Some(d);
        self
    }

    /// The Status body.
    pub fn to_status(&self) -> Value {
        let mut v = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": self.metadata.clone().unwrap_or_else(|| json!({})),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            v["details"] = omit_empty(d.clone());
        }
        if self.reason.is_empty()
            && let Some(o) = v.as_object_mut()
        {
            o.remove("reason");
        }
        v
    }

    /// 404 for a missing object.
    pub fn not_found(r: &ResourceInfo, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", r.qualified_resource()),
        )
        .with_details(json!({"name": name, "group": r.group, "kind": r.plural}))
    }

    /// 404 naming the resource as `kind` (componentstatuses say `componentstatus`).
    pub fn not_found_kind(kind: &str, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{kind} \"{name}\" not found"))
            .with_details(json!({"name": name, "kind": kind}))
    }

    /// 404 for a missing namespace.
    pub fn namespace_not_found(ns: &str) -> Self {
        Self::new(404, "NotFound", format!("namespaces \"{ns}\" not found"))
            .with_details(json!({"name": ns, "kind": "namespaces"}))
    }

    /// 404 for an unknown path.
    pub fn path_not_found() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    /// 409 AlreadyExists.
    pub fn already_exists(r: &ResourceInfo, name: &str, deleting: bool) -> Self {
        let prefix = if deleting {
            "object is being deleted: "
        } else {
            ""
        };
        Self::new(
            409,
            "AlreadyExists",
            format!(
                "{prefix}{} \"{name}\" already exists",
                r.qualified_resource()
            ),
        )
        .with_details(json!({"name": name, "group": r.group, "kind": r.plural}))
    }

    /// 409 Conflict with a custom tail after `Operation cannot be fulfilled on X "n": `.
    pub fn conflict_msg(qualified: &str, group: &str, kind: &str, name: &str, tail: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {qualified} \"{name}\": {tail}"),
        )
        .with_details(json!({"name": name, "group": group, "kind": kind}))
    }

    /// 409 Conflict for a stale resourceVersion.
    pub fn conflict(r: &ResourceInfo, name: &str) -> Self {
        Self::conflict_msg(
            &r.qualified_resource(),
            r.group,
            r.plural,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict for a uid precondition in a PUT body (also on `/scale`), worded as
    /// kube-apiserver's storage error, which names the object's etcd key.
    pub fn uid_precondition(
        r: &ResourceInfo,
        namespace: &str,
        name: &str,
        want: &str,
        have: &str,
    ) -> Self {
        // nodes are stored under their old name
        let dir = if r.plural == "nodes" {
            "minions"
        } else {
            r.plural
        };
        let key = if namespace.is_empty() {
            format!("/registry/{dir}/{name}")
        } else {
            format!("/registry/{dir}/{namespace}/{name}")
        };
        Self::conflict_msg(
            &r.qualified_resource(),
            r.group,
            r.plural,
            name,
            &format!(
                "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {want}, UID in object meta: {have}"
            ),
        )
    }

    /// 422 Invalid with causes.
    pub fn invalid(
        qualified_kind: &str,
        group: &str,
        kind: &str,
        name: &str,
        errs: &[FieldError],
    ) -> Self {
        let joined = if errs.len() == 1 {
            errs[0].text()
        } else {
            format!(
                "[{}]",
                errs.iter()
                    .map(FieldError::text)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let causes: Vec<Value> = errs
            .iter()
            .map(|e| json!({"reason": e.kind.reason(), "message": e.body(), "field": e.field}))
            .collect();
        Self::new(
            422,
            "Invalid",
            format!("{qualified_kind} \"{name}\" is invalid: {joined}"),
        )
        .with_details(json!({"name": name, "group": group, "kind": kind, "causes": causes}))
    }

    /// 422 Invalid on an object of a resource.
    pub fn invalid_object(r: &ResourceInfo, name: &str, errs: &[FieldError]) -> Self {
        Self::invalid(&r.qualified_kind(), r.group, r.kind, name, errs)
    }

    /// 422 Invalid ListOptions.
    pub fn invalid_list_options(errs: &[FieldError]) -> Self {
        Self::invalid(
            "ListOptions.meta.k8s.io",
            "meta.k8s.io",
            "ListOptions",
            "",
            errs,
        )
    }

    /// 400 BadRequest.
    pub fn bad_request(msg: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", msg)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(method: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource ({method})"),
        )
        .with_details(json!({}))
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(ct: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/merge-patch+json, application/json-patch+json, application/strategic-merge-patch+json (got {ct:?})"
            ),
        )
    }

    /// 410 Expired for a watch from a compacted revision.
    pub fn too_old(rv: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {rv} ({oldest})"),
        )
    }

    /// 403 for a create into a terminating namespace.
    pub fn namespace_terminating(r: &ResourceInfo, name: &str, ns: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!(
                "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                r.qualified_resource()
            ),
        )
        .with_details(json!({
            "name": name, "group": r.group, "kind": r.plural,
            "causes": [{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}]
        }))
    }

    /// 500 InternalError.
    pub fn internal(msg: impl Into<String>) -> Self {
        Self::new(500, "InternalError", msg)
    }

    /// 500 for an error that is no Status upstream (a plain Go error): no reason.
    pub fn plain(msg: impl Into<String>) -> Self {
        Self::new(500, "", msg)
    }
}

/// Result alias for handlers.
pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resources::find;

    #[test]
    fn invalid_single_and_multi() {
        let d = find("apps", "v1", "deployments").expect("deploy");
        let e = ApiError::invalid_object(
            d,
            "web",
            &[FieldError::invalid(
                "spec.progressDeadlineSeconds",
                "5",
                "must be greater than minReadySeconds",
            )],
        );
        assert_eq!(
            e.message,
            "Deployment.apps \"web\" is invalid: spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"
        );
        let s = e.to_status();
        assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueInvalid");
        assert_eq!(
            s["details"]["causes"][0]["message"],
            "Invalid value: 5: must be greater than minReadySeconds"
        );
        let e2 = ApiError::invalid_object(
            d,
            "web",
            &[
                FieldError::required("spec.selector", ""),
                FieldError::invalid("a", "1", "x"),
            ],
        );
        assert_eq!(
            e2.message,
            "Deployment.apps \"web\" is invalid: [spec.selector: Required value, a: Invalid value: 1: x]"
        );
    }

    #[test]
    fn not_supported_text() {
        let e =
            FieldError::not_supported("spec.template.spec.restartPolicy", "\"Never\"", &["Always"]);
        assert_eq!(
            e.body(),
            "Unsupported value: \"Never\": supported values: \"Always\""
        );
    }

    #[test]
    fn conflict_text() {
        let d = find("apps", "v1", "deployments").expect("deploy");
        assert_eq!(
            ApiError::conflict(d, "web").message,
            "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"
        );
    }
}
