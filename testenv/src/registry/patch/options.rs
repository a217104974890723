//! The write options every create, update and patch is checked against before anything else
//! (apimachinery's `pkg/apis/meta/v1/validation/validation.go`: `ValidateCreateOptions`,
//! `ValidateUpdateOptions`, `ValidatePatchOptions`): `fieldManager` at most 128 printable
//! bytes and required for an apply, `force` only for an apply, `dryRun` only `All`.

use crate::registry::api_status::{ApiError, ApiResult, FieldError};
use crate::registry::apply::managed_fields::{FIELD_MANAGER_MAX_LENGTH, is_print};

/// Which write the options are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// POST (`CreateOptions`).
    Create,
    /// PUT (`UpdateOptions`).
    Update,
    /// PATCH (`PatchOptions`); `true` for server-side apply.
    Patch(bool),
}

/// The options of a write, from its query.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions<'a> {
    /// `fieldManager`.
    pub field_manager: &'a str,
    /// `force`, when given.
    pub force: Option<&'a str>,
    /// `dryRun`, when given.
    pub dry_run: Option<&'a str>,
}

/// 422 on the options object when they are not valid.
pub fn validate(kind: WriteKind, o: &WriteOptions<'_>) -> ApiResult<()> {
    let mut errs = Vec::new();
    match kind {
        WriteKind::Patch(true) if o.field_manager.is_empty() => errs.push(FieldError::required(
            "fieldManager",
            "is required for apply patch",
        )),
        WriteKind::Patch(false) if o.force.is_some() => errs.push(FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        )),
        _ => {}
    }
    if o.field_manager.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(FieldError {
            kind: crate::registry::api_status::FieldErrorType::TooLong,
            field: "fieldManager".into(),
            value: None,
            detail: format!("may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"),
        });
    }
    for (i, c) in o.field_manager.char_indices() {
        if !is_print(c) {
            errs.push(FieldError::invalid(
                "fieldManager",
                format!("{:?}", o.field_manager),
                format!("invalid character U+{:04X} (at position {i})", c as u32),
            ));
        }
    }
    if let Some(d) = o.dry_run
        && d != "All"
    {
        errs.push(FieldError::not_supported(
            "dryRun",
            format!("[]string{{{d:?}}}"),
            &["All"],
        ));
    }
    if errs.is_empty() {
        return Ok(());
    }
    let options = match kind {
        WriteKind::Create => "CreateOptions",
        WriteKind::Update => "UpdateOptions",
        WriteKind::Patch(_) => "PatchOptions",
    };
    Err(ApiError::invalid(
        &format!("{options}.meta.k8s.io"),
        "meta.k8s.io",
        options,
        "",
        &errs,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(kind: WriteKind, o: WriteOptions<'_>) -> String {
        validate(kind, &o)
            .map(|()| String::new())
            .unwrap_or_else(|e| e.message)
    }

    #[test]
    fn upstreams_messages() {
        assert_eq!(
            msg(WriteKind::Patch(true), WriteOptions::default()),
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
        let forced = WriteOptions {
            field_manager: "m",
            force: Some("true"),
            dry_run: None,
        };
        assert_eq!(
            msg(WriteKind::Patch(false), forced),
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
        );
        assert_eq!(msg(WriteKind::Patch(true), forced), "");
        let dry = WriteOptions {
            dry_run: Some("Bogus"),
            ..WriteOptions::default()
        };
        assert_eq!(
            msg(WriteKind::Create, dry),
            "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Bogus\"}: supported values: \"All\""
        );
        let long = "m".repeat(129);
        let o = WriteOptions {
            field_manager: &long,
            ..WriteOptions::default()
        };
        assert_eq!(
            msg(WriteKind::Update, o),
            "UpdateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
        );
    }
}
