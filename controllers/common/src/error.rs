//! [`ControlError`]: errors from the pod/ReplicaSet control and the
//! controller-ref manager, with the client-go `apierrors.Is*` predicates.
//!
//! `Display` of an API error is the server's `Status.message` (what client-go's
//! `StatusError.Error()` prints), so event messages such as
//! `"Error creating: <err>"` match upstream text.

use kube::core::Status;
use kube::core::response::{StatusCause, StatusDetails};

/// `Status.details.causes[].reason` the API server sets when creating in a
/// namespace that is being deleted.
pub const NAMESPACE_TERMINATING_CAUSE: &str = "NamespaceTerminating";

/// Reasons client-go knows (`knownReasons`); an unknown reason falls back to the HTTP code.
const KNOWN_REASONS: &[&str] = &[
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Invalid",
    "ServerTimeout",
    "StoreReadError",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "Expired",
    "ServiceUnavailable",
];

/// An error from a control operation (create/delete/patch) or from a claim.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The API server answered with a failure `Status`.
    #[error("{}", .0.message)]
    Api(Box<Status>),
    /// The request failed without a `Status` (transport, decoding, …).
    #[error("{0}")]
    Client(#[source] kube::Error),
    /// Rejected locally before any API call (e.g. `"controllerRef is nil"`).
    #[error("{0}")]
    Invalid(String),
    /// A pod deletion failed with something other than NotFound
    /// (upstream wraps it as `"unable to delete pods: <err>"`).
    #[error("unable to delete pods: {0}")]
    DeletePods(#[source] Box<ControlError>),
    /// A request body could not be serialized.
    #[error("unable to serialize request body: {0}")]
    Serialize(#[from] serde_json::Error),
    /// Several errors from one claim pass (`utilerrors.NewAggregate`).
    #[error("{}", aggregate_message(.0))]
    Aggregate(Vec<ControlError>),
    /// Any other error, with context.
    #[error("{0}")]
    Other(String),
}

fn aggregate_message(errs: &[ControlError]) -> String {
    if errs.len() == 1 {
        return errs[0].to_string();
    }
    let parts: Vec<String> = errs.iter().map(ToString::to_string).collect();
    format!("[{}]", parts.join(", "))
}

impl From<kube::Error> for ControlError {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(status) => ControlError::Api(status),
            other => ControlError::Client(other),
        }
    }
}

impl ControlError {
    /// Whether a write was refused by the leader's write fence (and so never sent), here or in
    /// any error this one aggregates or wraps.
    pub fn is_fenced(&self) -> bool {
        match self {
            ControlError::Client(e) => kcm_leaderelection::is_fenced(e),
            ControlError::DeletePods(inner) => inner.is_fenced(),
            ControlError::Aggregate(errs) => errs.iter().any(ControlError::is_fenced),
            // Errors kept as text carry the fence's message.
            ControlError::Other(message) => message.contains(kcm_leaderelection::FENCED_PREFIX),
            ControlError::Api(_) | ControlError::Invalid(_) | ControlError::Serialize(_) => false,
        }
    }

    /// An API error with the given HTTP code, reason and message (handy in fakes and tests).
    pub fn api(code: u16, reason: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        ControlError::Api(Box::new(Status::failure(&message, reason).with_code(code)))
    }

    /// A 404 NotFound API error for `<resource> "<name>"`.
    pub fn not_found(resource: &str, name: &str) -> Self {
        Self::api(404, "NotFound", format!("{resource} \"{name}\" not found"))
    }

    /// Adds a `details.causes[]` entry with the given reason (for
    /// [`NAMESPACE_TERMINATING_CAUSE`] in tests and fakes).
    pub fn with_cause(self, cause_reason: &str) -> Self {
        match self {
            ControlError::Api(mut status) => {
                let details = status.details.get_or_insert_with(|| StatusDetails {
                    name: String::new(),
                    group: String::new(),
                    kind: String::new(),
                    uid: String::new(),
                    causes: Vec::new(),
                    retry_after_seconds: 0,
                });
                details.causes.push(StatusCause {
                    reason: cause_reason.to_string(),
                    message: String::new(),
                    field: String::new(),
                });
                ControlError::Api(status)
            }
            other => other,
        }
    }

    /// Combines errors as `utilerrors.NewAggregate`: `None` if empty, the error
    /// itself if single, else an [`Aggregate`](ControlError::Aggregate).
    pub fn aggregate(mut errs: Vec<ControlError>) -> Option<ControlError> {
        match errs.len() {
            0 => None,
            1 => errs.pop(),
            _ => Some(ControlError::Aggregate(errs)),
        }
    }

    /// The API `Status`, if this is an API error.
    pub fn status(&self) -> Option<&Status> {
        match self {
            ControlError::Api(s) => Some(s),
            _ => None,
        }
    }

    fn reason_or_code(&self, reason: &str, code: u16) -> bool {
        self.status().is_some_and(|s| {
            s.reason == reason || (!KNOWN_REASONS.contains(&s.reason.as_str()) && s.code == code)
        })
    }

    /// `apierrors.IsNotFound`.
    pub fn is_not_found(&self) -> bool {
        self.reason_or_code("NotFound", 404)
    }

    /// `apierrors.IsInvalid` (422).
    pub fn is_invalid(&self) -> bool {
        self.reason_or_code("Invalid", 422)
    }

    /// `apierrors.IsConflict` (409).
    pub fn is_conflict(&self) -> bool {
        self.reason_or_code("Conflict", 409)
    }

    /// `apierrors.IsAlreadyExists`.
    pub fn is_already_exists(&self) -> bool {
        self.reason_or_code("AlreadyExists", 409)
    }

    /// `apierrors.HasStatusCause`: a `details.causes[]` entry has this reason.
    pub fn has_status_cause(&self, cause: &str) -> bool {
        self.status()
            .and_then(|s| s.details.as_ref())
            .is_some_and(|d| d.causes.iter().any(|c| c.reason == cause))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates() {
        let nf = ControlError::not_found("pods", "p");
        assert!(nf.is_not_found());
        assert_eq!(nf.to_string(), "pods \"p\" not found");
        // Unknown reason falls back to the code, as client-go.
        assert!(ControlError::api(404, "", "gone").is_not_found());
        assert!(!ControlError::api(404, "Conflict", "x").is_not_found());
        assert!(ControlError::api(422, "Invalid", "bad").is_invalid());
        assert!(ControlError::api(409, "Conflict", "c").is_conflict());
        assert!(ControlError::api(409, "AlreadyExists", "c").is_already_exists());
        assert!(!ControlError::Invalid("x".into()).is_not_found());
        let term = ControlError::api(403, "Forbidden", "ns terminating")
            .with_cause(NAMESPACE_TERMINATING_CAUSE);
        assert!(term.has_status_cause(NAMESPACE_TERMINATING_CAUSE));
        assert!(!nf.has_status_cause(NAMESPACE_TERMINATING_CAUSE));
    }

    #[test]
    fn aggregate_formats_like_client_go() {
        assert!(ControlError::aggregate(vec![]).is_none());
        let one = ControlError::aggregate(vec![ControlError::Other("a".into())]).unwrap();
        assert_eq!(one.to_string(), "a");
        let two = ControlError::aggregate(vec![
            ControlError::Other("a".into()),
            ControlError::Other("b".into()),
        ])
        .unwrap();
        assert_eq!(two.to_string(), "[a, b]");
        let del =
            ControlError::DeletePods(Box::new(ControlError::api(500, "InternalError", "boom")));
        assert_eq!(del.to_string(), "unable to delete pods: boom");
    }
}
