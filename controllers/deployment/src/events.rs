//! Event reasons and message formats of the deployment controller (recorder component
//! `deployment-controller`), as in upstream master (~1.31+ wording).

use std::fmt;

/// Event source component.
pub(crate) const EVENT_COMPONENT: &str = "deployment-controller";

pub(crate) use kcm_controller::event_recorder::EventType;

/// An event the controller should record on the Deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeploymentEvent {
    /// Normal or Warning.
    pub(crate) type_: EventType,
    /// Machine-readable reason.
    pub(crate) reason: &'static str,
    /// Human-readable message.
    pub(crate) message: String,
}

/// Reason of every ReplicaSet resize.
pub(crate) const SCALING_REPLICA_SET: &str = "ScalingReplicaSet";
/// Reason when the selector is empty.
pub(crate) const SELECTING_ALL: &str = "SelectingAll";
/// Message when the selector is empty.
pub(crate) const SELECTING_ALL_MESSAGE: &str =
    "This deployment is selecting all pods. A non-empty selector is required.";
/// Reason of a failed new-ReplicaSet creation (also the condition reason).
pub(crate) const REPLICA_SET_CREATE_ERROR: &str = "ReplicaSetCreateError";
/// Reason when a rollback target revision does not exist.
pub(crate) const ROLLBACK_REVISION_NOT_FOUND: &str = "DeploymentRollbackRevisionNotFound";
/// Reason when the rollback target has the current template.
pub(crate) const ROLLBACK_TEMPLATE_UNCHANGED: &str = "DeploymentRollbackTemplateUnchanged";
/// Reason of a performed rollback.
pub(crate) const ROLLBACK_DONE: &str = "DeploymentRollback";

/// Direction of a resize, rendered as `up`/`down` in the event message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalingOperation {
    /// Growing.
    Up,
    /// Shrinking.
    Down,
}

impl fmt::Display for ScalingOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScalingOperation::Up => "up",
            ScalingOperation::Down => "down",
        })
    }
}

pub(crate) use kcm_util::go_quote::go_quote;

/// `Scaled <op> replica set <name> from <old> to <new>`.
pub(crate) fn scaled_message(op: ScalingOperation, rs_name: &str, from: i32, to: i32) -> String {
    format!("Scaled {op} replica set {rs_name} from {from} to {to}")
}

/// The `ScalingReplicaSet` event of a resize.
pub(crate) fn scaling_event(
    op: ScalingOperation,
    rs_name: &str,
    from: i32,
    to: i32,
) -> DeploymentEvent {
    DeploymentEvent {
        type_: EventType::Normal,
        reason: SCALING_REPLICA_SET,
        message: scaled_message(op, rs_name, from, to),
    }
}

/// `Failed to create new replica set "<name>": <err>` (event and condition message).
pub(crate) fn failed_rs_create_message(rs_name: &str, err: &str) -> String {
    format!(
        "Failed to create new replica set {}: {err}",
        go_quote(rs_name)
    )
}

/// `Rolled back deployment "<name>" to revision <n>`.
pub(crate) fn rolled_back_message(deployment_name: &str, revision: i64) -> String {
    format!(
        "Rolled back deployment {} to revision {revision}",
        go_quote(deployment_name)
    )
}

/// Message when no previous revision exists.
pub(crate) const ROLLBACK_LAST_REVISION_NOT_FOUND_MESSAGE: &str = "Unable to find last revision.";
/// Message when the requested revision does not exist.
pub(crate) const ROLLBACK_REVISION_NOT_FOUND_MESSAGE: &str =
    "Unable to find the revision to rollback to.";

/// `The rollback revision contains the same template as current deployment "<name>"`.
pub(crate) fn rollback_template_unchanged_message(deployment_name: &str) -> String {
    format!(
        "The rollback revision contains the same template as current deployment {}",
        go_quote(deployment_name)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_formats() {
        assert_eq!(
            scaled_message(ScalingOperation::Up, "web-7c9f", 0, 3),
            "Scaled up replica set web-7c9f from 0 to 3"
        );
        assert_eq!(
            scaled_message(ScalingOperation::Down, "web-old", 5, 2),
            "Scaled down replica set web-old from 5 to 2"
        );
        assert_eq!(
            failed_rs_create_message("web-7c9f", "quota exceeded"),
            "Failed to create new replica set \"web-7c9f\": quota exceeded"
        );
        assert_eq!(
            rolled_back_message("web", 3),
            "Rolled back deployment \"web\" to revision 3"
        );
        assert_eq!(
            rollback_template_unchanged_message("web"),
            "The rollback revision contains the same template as current deployment \"web\""
        );
        assert_eq!(EventType::Warning.as_str(), "Warning");
    }
}
