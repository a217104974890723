//! Validation (spec §3.2): object metadata and the kind-specific rules.

use serde_json::Value;

use crate::registry::StorageId;
use crate::status::FieldError;

/// Validate an object about to be stored. `old` is the stored object on updates.
pub fn validate(
    _id: StorageId,
    _obj: &Value,
    _old: Option<&Value>,
    _sub: Option<&str>,
) -> Vec<FieldError> {
    Vec::new()
}
