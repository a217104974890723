//! The error a sync of one Deployment key returns (and the worker loop logs and retries).

use kcm_controller::ControlError;
use kcm_controller::error::NAMESPACE_TERMINATING_CAUSE;
use thiserror::Error;

use crate::error::DeploymentError;

/// Why a `syncDeployment` pass failed. Every variant makes the worker requeue the key with
/// backoff (at most 15 times), except an API error carrying the `NamespaceTerminating` cause,
/// which is forgotten at once as upstream's `handleErr` does.
///
/// [`SyncError::Swallowed`] is kcm's own: a write failure that upstream swallows (the pass
/// carries on and returns success) is reported once the pass has done everything upstream
/// does, so that the key is retried with backoff instead of waiting for an event that a 5xx,
/// a 429 or a timeout never produces (`docs/fidelity.md`).
#[derive(Debug, Error)]
pub enum SyncError {
    /// An API call (or a claim pass) failed.
    #[error("{0}")]
    Control(#[from] ControlError),
    /// A pure decision rejected the Deployment (e.g. an invalid `maxSurge`).
    #[error("{0}")]
    Decision(#[from] DeploymentError),
    /// The Deployment cache does not show the controller's own last write of this Deployment
    /// yet: the sync is deferred (requeued with backoff) instead of deciding from the stale
    /// copy and failing its write with a 409 Conflict (kcm's own, `docs/fidelity.md`).
    #[error("{0}")]
    StaleCache(#[from] kcm_controller::consistency::ConsistencyError),
    /// Anything else, with upstream's message (invalid key, invalid selector, unknown strategy).
    #[error("{0}")]
    Other(String),
    /// A write failed in a step whose failures upstream swallows; the pass completed as
    /// upstream's does and only this retry was added.
    #[error("{step} failed (retrying with backoff): {source}")]
    Swallowed {
        /// What the pass was doing (`scaling down old replica sets`).
        step: &'static str,
        /// The failure.
        #[source]
        source: Box<SyncError>,
    },
}

impl From<kube::Error> for SyncError {
    fn from(e: kube::Error) -> Self {
        SyncError::Control(ControlError::from(e))
    }
}

impl SyncError {
    /// Wraps a failure of `step` that upstream swallows.
    pub(crate) fn swallowed(step: &'static str, source: SyncError) -> Self {
        SyncError::Swallowed {
            step,
            source: Box::new(source),
        }
    }

    /// The underlying API error, if any (not looking into [`SyncError::Swallowed`]).
    pub(crate) fn control(&self) -> Option<&ControlError> {
        match self {
            SyncError::Control(c) => Some(c),
            _ => None,
        }
    }

    /// `apierrors.IsNotFound`.
    pub(crate) fn is_not_found(&self) -> bool {
        self.control().is_some_and(ControlError::is_not_found)
    }

    /// `apierrors.IsAlreadyExists`.
    pub(crate) fn is_already_exists(&self) -> bool {
        self.control().is_some_and(ControlError::is_already_exists)
    }

    /// Whether a write of the sync was refused by the leader's write fence (requeued, not
    /// counted as a failure), wrapped or not.
    pub fn is_fenced(&self) -> bool {
        match self {
            SyncError::Control(c) => c.is_fenced(),
            SyncError::Swallowed { source, .. } => source.is_fenced(),
            SyncError::Other(_) | SyncError::Decision(_) | SyncError::StaleCache(_) => false,
        }
    }

    /// Whether the error's status causes include `NamespaceTerminating` (forgotten, not retried).
    pub fn is_namespace_terminating(&self) -> bool {
        match self {
            SyncError::Swallowed { source, .. } => source.is_namespace_terminating(),
            other => other
                .control()
                .is_some_and(|c| c.has_status_cause(NAMESPACE_TERMINATING_CAUSE)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swallowed_failures_name_the_step_and_hide_the_cause_from_control_flow() {
        let conflict = || SyncError::Control(ControlError::api(409, "Conflict", "modified"));
        let err = SyncError::swallowed("scaling down old replica sets", conflict());
        assert_eq!(
            err.to_string(),
            format!(
                "scaling down old replica sets failed (retrying with backoff): {}",
                conflict()
            )
        );
        // Control flow keyed on an API error (NotFound, AlreadyExists) must not see it...
        assert!(err.control().is_none());
        // ...but a namespace being deleted is not retried, wrapped or not.
        let terminating = || {
            SyncError::Control(
                ControlError::api(403, "Forbidden", "namespace default is being terminated")
                    .with_cause(NAMESPACE_TERMINATING_CAUSE),
            )
        };
        assert!(terminating().is_namespace_terminating());
        assert!(SyncError::swallowed("step", terminating()).is_namespace_terminating());
        assert!(!err.is_namespace_terminating());
    }
}
