//! What a reconcile asks for next ([`Action`]), and the error type a reconcile may fail with.

use std::time::Duration;

/// Any error a reconcile returns: `kube::Error`, `anyhow::Error`, your own `thiserror` enum, a
/// `String`... The write fence's refusal is recognised anywhere in its source chain.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What happens to the object's key after a successful reconcile.
///
/// ```
/// use std::time::Duration;
/// use kcm_controller::builder::Action;
///
/// assert_eq!(Action::requeue_after(Duration::from_secs(300)), Action::RequeueAfter(Duration::from_secs(300)));
/// assert_eq!(Action::done(), Action::Done);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing until the object (or an object it owns or watches) changes.
    Done,
    /// Reconcile again after this long (the queue's `add_after`), or sooner on a change.
    RequeueAfter(Duration),
    /// Reconcile again after the queue's per-key backoff (client-go's rate limiter: 5 ms
    /// doubling up to 1000 s, with the overall 10 qps bucket), as after an error but without
    /// logging one.
    RequeueRateLimited,
}

impl Action {
    /// [`Action::Done`].
    pub fn done() -> Self {
        Action::Done
    }

    /// [`Action::RequeueAfter`].
    pub fn requeue_after(after: Duration) -> Self {
        Action::RequeueAfter(after)
    }

    /// [`Action::RequeueRateLimited`].
    pub fn requeue_rate_limited() -> Self {
        Action::RequeueRateLimited
    }
}

/// Whether a reconcile error is the write fence's refusal (a write that was never sent,
/// because the lease or the namespace may be another replica's): the key is then requeued
/// after [`FENCED_REQUEUE_DELAY`](crate::worker::FENCED_REQUEUE_DELAY) without counting a
/// failure, as kcm's own controllers do.
pub(crate) fn is_fenced(err: &BoxError) -> bool {
    let err: &(dyn std::error::Error + 'static) = err.as_ref();
    if kcm_leaderelection::is_fenced(err) {
        return true;
    }
    // A kube::Error carries the fence's error inside hyper's and tower's boxes, whose chains
    // do not always lead to it: its message does.
    let mut current = Some(err);
    while let Some(e) = current {
        if e.to_string().contains(kcm_leaderelection::FENCED_PREFIX) {
            return true;
        }
        current = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcm_leaderelection::Fenced;

    #[derive(Debug, thiserror::Error)]
    #[error("reconciling: {0}")]
    struct Wrapped(#[source] BoxError);

    #[test]
    fn fenced_errors_are_found_in_the_chain_and_in_messages() {
        let fenced = || Fenced {
            lease: "kube-system/foo".into(),
            why: "lease not held".into(),
        };
        let cases: Vec<(&str, BoxError, bool)> = vec![
            ("the refusal itself", Box::new(fenced()), true),
            ("wrapped", Box::new(Wrapped(Box::new(fenced()))), true),
            (
                "an I/O error carrying it",
                Box::new(std::io::Error::other(fenced())),
                true,
            ),
            (
                "only its message",
                format!("client error: {}", fenced()).into(),
                true,
            ),
            ("a conflict", "Operation cannot be fulfilled".into(), false),
            (
                "wrapped other",
                Box::new(Wrapped("connection refused".into())),
                false,
            ),
        ];
        for (name, err, want) in cases {
            assert_eq!(is_fenced(&err), want, "{name}");
        }
    }
}
