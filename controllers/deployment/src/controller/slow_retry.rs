//! The slow retry of dropped keys, kcm's own addition to upstream's `handleErr`
//! (`docs/fidelity.md`, "Intended differences from upstream").
//!
//! Upstream forgets a Deployment key for good after 15 failed requeues (about 2.7 minutes of
//! backoff) and waits for the next event. When the failure was transient but outlasted the
//! backoff, no event may ever come and the rollout stops until the progress-deadline check (or
//! forever, without a deadline). Here a dropped key whose Deployment is not complete is logged
//! at warning with its last error and synced again after [`DROPPED_KEY_RETRY_PERIOD`]; if that
//! sync fails too, the key goes through upstream's backoff again and, dropped again, waits
//! another period. The key is forgotten exactly as upstream does, so a later event gets the
//! same 15 fresh retries.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kcm_informer::ObjectKey;

use crate::util::predicates::deployment_complete;

use super::SyncError;
use super::context::Context;

/// How long a dropped key of an incomplete Deployment waits for its next sync.
pub const DROPPED_KEY_RETRY_PERIOD: Duration = Duration::from_secs(60);

/// Whether a dropped key of `d` (`None`: deleted) gets a slow retry: only while the rollout is
/// not complete (a complete Deployment has nothing left that a retry could move).
pub(crate) fn wants_slow_retry(d: Option<&Deployment>) -> bool {
    d.is_some_and(|d| {
        let status = d.status.clone().unwrap_or_default();
        !deployment_complete(d, &status)
    })
}

/// The drop handler of the `deployment` queue: warns with the last error and schedules the
/// slow retry when [`wants_slow_retry`].
pub(crate) fn on_dropped_key(ctx: &Context, key: &ObjectKey, err: &SyncError) {
    // The cached Deployment is only read: lent, not cloned.
    let retry = ctx
        .d_lister
        .with(&key.namespace, &key.name, |d| wants_slow_retry(Some(d)))
        .unwrap_or_else(|| wants_slow_retry(None));
    if retry {
        tracing::warn!(
            deployment = %key,
            error = %err,
            retry_after_secs = DROPPED_KEY_RETRY_PERIOD.as_secs(),
            "Dropping deployment out of the queue after the maximum retries; the rollout is not complete, retrying slowly"
        );
        ctx.queue.add_after(key.clone(), DROPPED_KEY_RETRY_PERIOD);
    } else {
        tracing::warn!(deployment = %key, error = %err, "Dropping deployment out of the queue");
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStatus};

    use super::*;

    fn deployment(replicas: i32, status: Option<DeploymentStatus>) -> Deployment {
        Deployment {
            metadata: kube::api::ObjectMeta {
                generation: Some(2),
                ..Default::default()
            },
            spec: DeploymentSpec {
                replicas: Some(replicas),
                ..Default::default()
            },
            status,
        }
    }

    fn status(updated: i32, available: i32, observed: i64) -> DeploymentStatus {
        DeploymentStatus {
            replicas: Some(updated),
            updated_replicas: Some(updated),
            available_replicas: Some(available),
            observed_generation: Some(observed),
            ..Default::default()
        }
    }

    #[test]
    fn only_incomplete_deployments_are_retried_slowly() {
        assert!(!wants_slow_retry(None), "deleted");
        assert!(
            wants_slow_retry(Some(&deployment(3, None))),
            "no status yet"
        );
        assert!(wants_slow_retry(Some(&deployment(
            3,
            Some(status(2, 2, 2))
        ))));
        assert!(
            wants_slow_retry(Some(&deployment(3, Some(status(3, 3, 1))))),
            "spec change not observed"
        );
        assert!(!wants_slow_retry(Some(&deployment(
            3,
            Some(status(3, 3, 2))
        ))));
    }
}
