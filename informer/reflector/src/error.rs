//! Reflector errors and the classification of API errors the reflector reacts to
//! (410 Gone/Expired, "too large resource version", 429, connection refused; apimachinery
//! `pkg/api/errors`, client-go `tools/cache/reflector.go`).

use std::error::Error as StdError;
use std::io;

/// Errors returned by one list-and-watch attempt. The reflector's run loop logs them, counts them
/// and retries after a backoff; they are never fatal.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReflectorError {
    /// The LIST failed.
    #[error("failed to list {resource}: {source}")]
    List {
        /// Resource description (the reflector name).
        resource: String,
        /// Underlying client error.
        #[source]
        source: kube::Error,
    },
    /// Opening the WATCH failed with a non-retriable error.
    #[error("failed to watch {resource}: {source}")]
    Watch {
        /// Resource description (the reflector name).
        resource: String,
        /// Underlying client error.
        #[source]
        source: kube::Error,
    },
    /// The streaming list failed (the caller falls back to a paginated list).
    #[error("streaming list of {resource} failed: {source}")]
    StreamingList {
        /// Resource description (the reflector name).
        resource: String,
        /// Underlying client error.
        #[source]
        source: kube::Error,
    },
    /// The streaming list closed at once without any event.
    #[error("streaming list of {resource} closed without any event")]
    StreamingListClosed {
        /// Resource description (the reflector name).
        resource: String,
    },
    /// The list response contained an object without a name.
    #[error("list of {resource} returned an object without metadata.name")]
    MissingName {
        /// Resource description (the reflector name).
        resource: String,
    },
}

impl ReflectorError {
    /// The HTTP code when the server refused the list or the watch outright: 404 (the resource
    /// is not served: a CRD not installed, a wrong group or version) or 403 (the client may
    /// not list or watch it).
    pub(crate) fn refused(&self) -> Option<u16> {
        let source = match self {
            ReflectorError::List { source, .. }
            | ReflectorError::Watch { source, .. }
            | ReflectorError::StreamingList { source, .. } => source,
            ReflectorError::StreamingListClosed { .. } | ReflectorError::MissingName { .. } => {
                return None;
            }
        };
        status(source)
            .map(|s| s.code)
            .filter(|c| *c == 403 || *c == 404)
    }
}

fn status(err: &kube::Error) -> Option<&kube::core::Status> {
    match err {
        kube::Error::Api(status) => Some(status),
        _ => None,
    }
}

/// True for 410 Gone / reason `Expired` / reason `Gone` (the resourceVersion or continue token is
/// too old).
pub(crate) fn is_expired(err: &kube::Error) -> bool {
    status(err).is_some_and(|s| s.code == 410 || s.reason == "Expired" || s.reason == "Gone")
}

/// True when the server answered "Too large resource version" (cause
/// `ResourceVersionTooLarge`, or — on old servers — a Timeout status mentioning it).
pub(crate) fn is_too_large_resource_version(err: &kube::Error) -> bool {
    let Some(s) = status(err) else {
        return false;
    };
    let by_cause = s.details.as_ref().is_some_and(|d| {
        d.causes.iter().any(|c| {
            c.reason == "ResourceVersionTooLarge"
                || c.message.contains("Too large resource version")
        })
    });
    by_cause
        || ((s.code == 504 || s.reason == "Timeout")
            && s.message.contains("Too large resource version"))
}

/// True for HTTP 429 Too Many Requests.
pub(crate) fn is_too_many_requests(err: &kube::Error) -> bool {
    status(err).is_some_and(|s| s.code == 429 || s.reason == "TooManyRequests")
}

/// True when the resourceVersion asked for is no longer, or not yet, available ([`is_expired`]
/// or [`is_too_large_resource_version`]): the next list is a consistent read.
pub(crate) fn is_expired_or_too_large(err: &kube::Error) -> bool {
    is_expired(err) || is_too_large_resource_version(err)
}

/// True when the watch can be opened again from where it ended after a backoff, without a
/// relist: connection refused or 429 (client-go `isWatchErrorRetriable`).
pub(crate) fn is_watch_error_retriable(err: &kube::Error) -> bool {
    is_connection_refused(err) || is_too_many_requests(err)
}

/// True when the TCP connection was refused (API server down or restarting).
pub(crate) fn is_connection_refused(err: &kube::Error) -> bool {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<io::Error>()
            && io.kind() == io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        if e.to_string()
            .to_ascii_lowercase()
            .contains("connection refused")
        {
            return true;
        }
        cur = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;
    use kube::core::response::{StatusCause, StatusDetails};

    fn api(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(
            Status {
                code,
                reason: reason.into(),
                message: message.into(),
                ..Status::default()
            }
            .boxed(),
        )
    }

    #[test]
    fn refusals_are_403_and_404_of_a_list_or_watch() {
        let list = |code, reason| ReflectorError::List {
            resource: "Greeting".into(),
            source: api(code, reason, ""),
        };
        let watch = |code, reason| ReflectorError::Watch {
            resource: "Greeting".into(),
            source: api(code, reason, ""),
        };
        assert_eq!(list(404, "NotFound").refused(), Some(404));
        assert_eq!(watch(403, "Forbidden").refused(), Some(403));
        assert_eq!(list(500, "InternalError").refused(), None);
        assert_eq!(watch(410, "Gone").refused(), None);
        let closed = ReflectorError::StreamingListClosed {
            resource: "Greeting".into(),
        };
        assert_eq!(closed.refused(), None);
    }

    #[test]
    fn classifies_expired() {
        assert!(is_expired(&api(
            410,
            "Expired",
            "too old resource version: 1 (5)"
        )));
        assert!(is_expired(&api(410, "Gone", "")));
        assert!(is_expired(&api(0, "Expired", "")));
        assert!(!is_expired(&api(500, "InternalError", "")));
    }

    #[test]
    fn classifies_too_large_resource_version() {
        let mut s = Status {
            code: 504,
            reason: "Timeout".into(),
            message: "Too large resource version: 100, current: 5".into(),
            ..Status::default()
        };
        assert!(is_too_large_resource_version(&kube::Error::Api(
            s.clone().boxed()
        )));
        s.message = "request timed out".into();
        assert!(!is_too_large_resource_version(&kube::Error::Api(
            s.clone().boxed()
        )));
        s.details = Some(StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            retry_after_seconds: 0,
            causes: vec![StatusCause {
                reason: "ResourceVersionTooLarge".into(),
                message: "Too large resource version".into(),
                field: String::new(),
            }],
        });
        assert!(is_too_large_resource_version(&kube::Error::Api(s.boxed())));
    }

    #[test]
    fn classifies_throttling_and_internal_errors() {
        assert!(is_too_many_requests(&api(429, "TooManyRequests", "")));
        assert!(!is_too_many_requests(&api(410, "Expired", "")));
    }

    #[test]
    fn classifies_connection_refused_through_the_source_chain() {
        let io = io::Error::new(io::ErrorKind::ConnectionRefused, "refused");
        let err = kube::Error::Service(Box::new(io));
        assert!(is_connection_refused(&err));
        let other = kube::Error::Service(Box::new(io::Error::other("reset")));
        assert!(!is_connection_refused(&other));
    }
}
