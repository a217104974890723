//! Apply conflicts (structured-merge-diff's `merge/conflict.go`) and the 409 kube-apiserver
//! answers for them (apimachinery's `util/managedfields/internal/conflict.go`): one cause
//! per conflicting field, `conflict with "<manager>"[ with subresource "<s>"][ using
//! <apiVersion>]`, and a message that names the managers in order.

use serde_json::{Value, json};

use super::managed_fields::ManagerId;
use super::path::Path;
use crate::registry::api_status::ApiError;

/// A field another manager owns and the applied configuration sets to another value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The owning manager's identifier.
    pub manager: String,
    /// The field.
    pub path: Path,
}

/// How a manager is named in conflict messages (`"kubectl" using apps/v1`).
pub fn print_manager(identifier: &str) -> String {
    let Some(id) = ManagerId::parse(identifier) else {
        return format!("{identifier:?}");
    };
    let mut s = kcm_util::go_quote::go_quote(&id.manager);
    if !id.subresource.is_empty() {
        s = format!(
            "{s} with subresource {}",
            kcm_util::go_quote::go_quote(&id.subresource)
        );
    }
    if id.operation == "Update" {
        s = format!("{s} using {}", id.api_version);
    }
    s
}

/// The message of a 409 for these conflicts.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [c] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            print_manager(&c.manager),
            c.path
        );
    }
    let mut managers: Vec<&str> = conflicts.iter().map(|c| c.manager.as_str()).collect();
    managers.sort();
    managers.dedup();
    let mut lines = Vec::new();
    for m in managers {
        lines.push(format!("conflicts with {}:", print_manager(m)));
        for c in conflicts.iter().filter(|c| c.manager == m) {
            lines.push(format!("- {}", c.path));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// The 409 Conflict Status for these conflicts.
pub fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {}", print_manager(&c.manager)),
                "field": c.path.to_string(),
            })
        })
        .collect();
    let mut e = ApiError::new(409, "Conflict", conflict_message(conflicts));
    e.details = Some(json!({ "causes": causes }));
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::apply::managed_fields::ManagerId;

    fn id(manager: &str, op: &str, av: &str, sub: &str) -> String {
        ManagerId {
            manager: manager.into(),
            operation: op.into(),
            api_version: av.into(),
            subresource: sub.into(),
        }
        .identifier()
    }

    #[test]
    fn messages_as_kube_apiserver_writes_them() {
        let upd = id("kube-controller-manager", "Update", "apps/v1", "");
        let one = [Conflict {
            manager: upd.clone(),
            path: Path::fields(&["spec", "replicas"]),
        }];
        assert_eq!(
            conflict_message(&one),
            "Apply failed with 1 conflict: conflict with \"kube-controller-manager\" using apps/v1: .spec.replicas"
        );
        let app = id("tool", "Apply", "", "status");
        let two = [
            Conflict {
                manager: upd.clone(),
                path: Path::fields(&["spec", "replicas"]),
            },
            Conflict {
                manager: app.clone(),
                path: Path::fields(&["status", "x"]),
            },
            Conflict {
                manager: upd,
                path: Path::fields(&["spec", "paused"]),
            },
        ];
        // managers in the order of their identifiers, paths in the order given
        assert_eq!(
            conflict_message(&two),
            "Apply failed with 3 conflicts: conflicts with \"kube-controller-manager\" using apps/v1:\n- .spec.replicas\n- .spec.paused\nconflicts with \"tool\" with subresource \"status\":\n- .status.x"
        );
        let e = conflict_error(&one);
        assert_eq!((e.code, e.reason), (409, "Conflict"));
        let status = e.to_status();
        assert_eq!(
            status["details"]["causes"][0],
            json!({"reason": "FieldManagerConflict", "message": "conflict with \"kube-controller-manager\" using apps/v1", "field": ".spec.replicas"})
        );
    }
}
