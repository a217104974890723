//! Errors returned by the deployment decisions.

use thiserror::Error;

/// Everything that can make a deployment decision fail.
///
/// The variants mirror the error strings of upstream `pkg/controller/deployment`, so logs stay
/// recognisable for people who know kube-controller-manager.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DeploymentError {
    /// `maxSurge` / `maxUnavailable` was absent where upstream requires it.
    #[error("nil value for IntOrString")]
    NilIntOrString,
    /// `maxSurge` / `maxUnavailable` is a string that is not `<int>%`.
    #[error("invalid value for IntOrString: {reason}")]
    InvalidIntOrPercent {
        /// Why the value was rejected (includes the offending value).
        reason: String,
    },
    /// `spec.strategy.type` is neither `RollingUpdate` nor `Recreate`.
    #[error("deployment type {0} isn't supported")]
    UnsupportedStrategy(String),
    /// A cleanup step computed a scale *up* for an old ReplicaSet (status ahead of spec).
    #[error(
        "when cleaning up unhealthy replicas, got invalid request to scale down {name} {from} -> {to}"
    )]
    InvalidScaleDown {
        /// ReplicaSet name.
        name: String,
        /// Current `spec.replicas`.
        from: i32,
        /// The computed (larger) size.
        to: i32,
    },
    /// Some synced ReplicaSet does not report `status.terminatingReplicas`.
    #[error("failed to calculate terminating replicas")]
    TerminatingReplicasUnknown,
    /// A revision annotation is not a base-10 integer.
    #[error("invalid revision {value:?}: {reason}")]
    InvalidRevision {
        /// The annotation value.
        value: String,
        /// Parser message.
        reason: String,
    },
}
