//! Rollout predicates: complete, progressing, timed out, and the spec switches they depend on.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::util::conditions::{
    DEPLOYMENT_PROGRESSING, NEW_RS_AVAILABLE_REASON, TIMED_OUT_REASON, get_deployment_condition,
    reason_of,
};
use crate::util::fields::{deployment_replicas, generation, progress_deadline_seconds};

/// `HasProgressDeadline`: `progressDeadlineSeconds` set and not `i32::MAX` (the legacy
/// extensions/v1beta1 "no deadline" value).
pub(crate) fn has_progress_deadline(d: &Deployment) -> bool {
    progress_deadline_seconds(d).is_some_and(|s| s != i32::MAX)
}

/// `HasRevisionHistoryLimit`: `revisionHistoryLimit` set and not `i32::MAX`.
pub(crate) fn has_revision_history_limit(d: &Deployment) -> bool {
    d.spec.revision_history_limit.is_some_and(|l| l != i32::MAX)
}

fn n(v: Option<i32>) -> i32 {
    v.unwrap_or(0)
}

/// `DeploymentComplete`: updated, total and available replicas all equal `spec.replicas` and the
/// status observed the current generation.
pub(crate) fn deployment_complete(d: &Deployment, new_status: &DeploymentStatus) -> bool {
    let want = deployment_replicas(d);
    n(new_status.updated_replicas) == want
        && n(new_status.replicas) == want
        && n(new_status.available_replicas) == want
        && new_status.observed_generation.unwrap_or(0) >= generation(d)
}

/// `DeploymentProgressing`: compared with the stored status, more updated pods, fewer old pods,
/// more ready pods or more available pods.
pub(crate) fn deployment_progressing(d: &Deployment, new_status: &DeploymentStatus) -> bool {
    let old = d.status.clone().unwrap_or_default();
    let old_old = n(old.replicas) - n(old.updated_replicas);
    let new_old = n(new_status.replicas) - n(new_status.updated_replicas);
    n(new_status.updated_replicas) > n(old.updated_replicas)
        || new_old < old_old
        || n(new_status.ready_replicas) > n(old.ready_replicas)
        || n(new_status.available_replicas) > n(old.available_replicas)
}

/// `DeploymentTimedOut`: whether the Progressing condition **of `new_status`** is older than
/// the progress deadline at `now`.
///
/// False without a deadline or without a Progressing condition, or when it says
/// `NewReplicaSetAvailable`; true when it already says `ProgressDeadlineExceeded`; otherwise
/// `lastUpdateTime + progressDeadlineSeconds` must be strictly before `now`. A missing
/// `lastUpdateTime` behaves like Go's zero time (long past), i.e. timed out.
pub(crate) fn deployment_timed_out(
    d: &Deployment,
    new_status: &DeploymentStatus,
    now: Timestamp,
) -> bool {
    if !has_progress_deadline(d) {
        return false;
    }
    let Some(condition) = get_deployment_condition(new_status, DEPLOYMENT_PROGRESSING) else {
        return false;
    };
    match reason_of(&condition) {
        NEW_RS_AVAILABLE_REASON => return false,
        TIMED_OUT_REASON => return true,
        _ => {}
    }
    let Some(from) = condition.last_update_time else {
        return true;
    };
    let deadline = SignedDuration::from_secs(i64::from(progress_deadline_seconds(d).unwrap_or(0)));
    let timed_out = from.0.checked_add(deadline).is_ok_and(|t| t < now);
    tracing::debug!(
        deployment = d.metadata.name.as_deref().unwrap_or(""),
        timed_out,
        "checked progress deadline"
    );
    timed_out
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DeploymentCondition;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::testing::{at, int, rolling_deployment};
    use crate::util::conditions::CONDITION_TRUE;

    #[test]
    fn test_deployment_complete() {
        // (name, desired, current, updated, available, maxUnavailable, maxSurge, expected)
        let cases = [
            (
                "not complete: min but not all pods become available",
                5,
                5,
                5,
                4,
                1,
                0,
                false,
            ),
            (
                "not complete: min availability is not honored",
                5,
                5,
                5,
                3,
                1,
                0,
                false,
            ),
            ("complete", 5, 5, 5, 5, 0, 0, true),
            (
                "not complete: all pods are available but not updated",
                5,
                5,
                4,
                5,
                0,
                0,
                false,
            ),
            (
                "not complete: still running old pods",
                1,
                2,
                1,
                1,
                0,
                1,
                false,
            ),
            (
                "not complete: one replica deployment never comes up",
                1,
                1,
                1,
                0,
                1,
                1,
                false,
            ),
        ];
        for (name, desired, current, updated, available, unav, surge, want) in cases {
            let mut d = rolling_deployment("d", desired, Some(int(surge)), Some(int(unav)));
            d.status = Some(DeploymentStatus {
                replicas: Some(current),
                updated_replicas: Some(updated),
                available_replicas: Some(available),
                ..Default::default()
            });
            let status = d.status.clone().unwrap_or_default();
            assert_eq!(deployment_complete(&d, &status), want, "{name}");
        }
    }

    #[test]
    fn deployment_complete_requires_observed_generation() {
        let mut d = rolling_deployment("d", 1, None, None);
        d.metadata.generation = Some(2);
        let mut s = DeploymentStatus {
            replicas: Some(1),
            updated_replicas: Some(1),
            available_replicas: Some(1),
            observed_generation: Some(1),
            ..Default::default()
        };
        assert!(!deployment_complete(&d, &s));
        s.observed_generation = Some(2);
        assert!(deployment_complete(&d, &s));
    }

    #[test]
    fn test_deployment_progressing() {
        let st = |r, u, rd, a| DeploymentStatus {
            replicas: Some(r),
            updated_replicas: Some(u),
            ready_replicas: Some(rd),
            available_replicas: Some(a),
            ..Default::default()
        };
        let cases = [
            (
                "progressing: updated pods",
                st(10, 4, 4, 4),
                st(10, 6, 4, 4),
                true,
            ),
            ("not progressing", st(10, 4, 4, 4), st(10, 4, 4, 4), false),
            (
                "progressing: old pods removed",
                st(10, 4, 6, 6),
                st(8, 4, 6, 6),
                true,
            ),
            (
                "not progressing: less new pods",
                st(10, 7, 3, 3),
                st(10, 6, 3, 3),
                false,
            ),
            (
                "progressing: less overall but more new pods",
                st(10, 4, 7, 7),
                st(8, 8, 5, 5),
                true,
            ),
            (
                "progressing: more ready pods",
                st(10, 10, 9, 8),
                st(10, 10, 10, 8),
                true,
            ),
            (
                "progressing: more available pods",
                st(10, 10, 10, 9),
                st(10, 10, 10, 10),
                true,
            ),
        ];
        for (name, old, new, want) in cases {
            let mut d = rolling_deployment("d", 10, None, None);
            d.status = Some(old);
            assert_eq!(deployment_progressing(&d, &new), want, "{name}");
        }
    }

    #[test]
    fn test_deployment_timed_out() {
        // 2016-01-01T00:MM:SSZ
        let base = 1_451_606_400;
        let time_fn = |min: i64, sec: i64| base + min * 60 + sec;
        let cases: [(&str, &str, Option<i32>, i64, i64, bool); 5] = [
            (
                "nil progressDeadlineSeconds specified - no timeout",
                "",
                None,
                time_fn(1, 9),
                time_fn(1, 20),
                false,
            ),
            (
                "infinite progressDeadlineSeconds specified - no timeout",
                "",
                Some(i32::MAX),
                time_fn(1, 9),
                time_fn(1, 20),
                false,
            ),
            (
                "progressDeadlineSeconds: 10s, now - started => 00:01:20 - 00:01:09 => 11s",
                "",
                Some(10),
                time_fn(1, 9),
                time_fn(1, 20),
                true,
            ),
            (
                "progressDeadlineSeconds: 10s, now - started => 00:01:20 - 00:01:11 => 9s",
                "",
                Some(10),
                time_fn(1, 11),
                time_fn(1, 20),
                false,
            ),
            (
                "previous status was a complete deployment",
                NEW_RS_AVAILABLE_REASON,
                Some(10),
                0,
                time_fn(1, 20),
                false,
            ),
        ];
        for (name, reason, pds, from, now, want) in cases {
            let mut d = rolling_deployment("d", 1, None, None);
            d.spec.progress_deadline_seconds = pds;
            let status = DeploymentStatus {
                conditions: Some(vec![DeploymentCondition {
                    type_: Some(DEPLOYMENT_PROGRESSING.into()),
                    status: Some(CONDITION_TRUE.into()),
                    reason: Some(reason.into()),
                    last_update_time: Some(Time(at(from))),
                    ..Default::default()
                }]),
                ..Default::default()
            };
            assert_eq!(deployment_timed_out(&d, &status, at(now)), want, "{name}");
        }
    }

    #[test]
    fn has_progress_deadline_and_history_limit() {
        let mut d = rolling_deployment("d", 1, None, None);
        assert!(!has_progress_deadline(&d));
        assert!(!has_revision_history_limit(&d));
        {
            let s = &mut d.spec;
            s.progress_deadline_seconds = Some(600);
            s.revision_history_limit = Some(0);
        }
        assert!(has_progress_deadline(&d));
        assert!(has_revision_history_limit(&d));
        {
            let s = &mut d.spec;
            s.progress_deadline_seconds = Some(i32::MAX);
            s.revision_history_limit = Some(i32::MAX);
        }
        assert!(!has_progress_deadline(&d));
        assert!(!has_revision_history_limit(&d));
    }
}
