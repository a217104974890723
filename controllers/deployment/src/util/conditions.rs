//! Deployment conditions: types, reasons and the `Set`/`Get`/`Remove` rules of upstream
//! `deployment_util.go`.

use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus, ReplicaSetCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// Condition type: the Deployment has at least its minimum availability.
pub(crate) const DEPLOYMENT_AVAILABLE: &str = "Available";
/// Condition type: a rollout is progressing, complete, or has failed to progress.
pub(crate) const DEPLOYMENT_PROGRESSING: &str = "Progressing";
/// Condition type: a pod could not be created or deleted (copied from a ReplicaSet).
pub(crate) const DEPLOYMENT_REPLICA_FAILURE: &str = "ReplicaFailure";

/// Condition status `True`.
pub(crate) const CONDITION_TRUE: &str = "True";
/// Condition status `False`.
pub(crate) const CONDITION_FALSE: &str = "False";
/// Condition status `Unknown`.
pub(crate) const CONDITION_UNKNOWN: &str = "Unknown";

/// Progressing=True while progress is observed.
pub(crate) const REPLICA_SET_UPDATED_REASON: &str = "ReplicaSetUpdated";
/// Progressing=False when creating the new ReplicaSet failed.
pub(crate) const FAILED_RS_CREATE_REASON: &str = "ReplicaSetCreateError";
/// Progressing=True when the controller created the new ReplicaSet.
pub(crate) const NEW_REPLICA_SET_REASON: &str = "NewReplicaSetCreated";
/// Progressing=True when an existing ReplicaSet matched the template.
pub(crate) const FOUND_NEW_RS_REASON: &str = "FoundNewReplicaSet";
/// Progressing=True once the rollout completed.
pub(crate) const NEW_RS_AVAILABLE_REASON: &str = "NewReplicaSetAvailable";
/// Progressing=False when `progressDeadlineSeconds` passed without progress.
pub(crate) const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";
/// Progressing=Unknown while paused.
pub(crate) const PAUSED_DEPLOY_REASON: &str = "DeploymentPaused";
/// Progressing=Unknown right after resuming.
pub(crate) const RESUMED_DEPLOY_REASON: &str = "DeploymentResumed";
/// Available=True.
pub(crate) const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
/// Available=False.
pub(crate) const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";

/// `NewDeploymentCondition`: both timestamps set to `now`.
pub(crate) fn new_deployment_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: impl Into<String>,
    now: Timestamp,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: Some(type_.to_string()),
        status: Some(status.to_string()),
        reason: Some(reason.to_string()),
        message: Some(message.into()),
        last_update_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
    }
}

/// Reason of a condition ("" when absent, like Go's zero string).
pub(crate) fn reason_of(c: &DeploymentCondition) -> &str {
    c.reason.as_deref().unwrap_or("")
}

/// `GetDeploymentCondition`: a copy of the first condition of that type.
pub(crate) fn get_deployment_condition(
    status: &DeploymentStatus,
    type_: &str,
) -> Option<DeploymentCondition> {
    status
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_.as_deref().unwrap_or_default() == type_)
        .cloned()
}

/// `SetDeploymentCondition`.
///
/// * same type, status **and** reason already present -> nothing changes (not even the message
///   or `lastUpdateTime`);
/// * same status, other reason -> the new condition keeps the old `lastTransitionTime`;
/// * every condition of that type is removed and the new one appended at the end.
pub(crate) fn set_deployment_condition(
    status: &mut DeploymentStatus,
    mut condition: DeploymentCondition,
) {
    if let Some(current) =
        get_deployment_condition(status, condition.type_.as_deref().unwrap_or_default())
    {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time;
        }
    }
    let mut conditions = filter_out_condition(
        status.conditions.take(),
        condition.type_.as_deref().unwrap_or_default(),
    );
    conditions.push(condition);
    status.conditions = Some(conditions);
}

/// `RemoveDeploymentCondition`: drops every condition of that type. An emptied list becomes
/// `None` (Go's nil slice), so "no conditions" always compares equal.
pub(crate) fn remove_deployment_condition(status: &mut DeploymentStatus, type_: &str) {
    let conditions = filter_out_condition(status.conditions.take(), type_);
    status.conditions = (!conditions.is_empty()).then_some(conditions);
}

fn filter_out_condition(
    conditions: Option<Vec<DeploymentCondition>>,
    type_: &str,
) -> Vec<DeploymentCondition> {
    conditions
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.type_.as_deref().unwrap_or_default() != type_)
        .collect()
}

/// `ReplicaSetToDeploymentCondition`: type/status/reason/message copied; both timestamps are
/// the ReplicaSet condition's `lastTransitionTime` (RS conditions have no update time).
pub(crate) fn replica_set_to_deployment_condition(c: &ReplicaSetCondition) -> DeploymentCondition {
    DeploymentCondition {
        type_: c.type_.clone(),
        status: c.status.clone(),
        reason: c.reason.clone(),
        message: c.message.clone(),
        last_update_time: c.last_transition_time.clone(),
        last_transition_time: c.last_transition_time.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::at;

    fn cond(type_: &str, status: &str, reason: &str) -> DeploymentCondition {
        DeploymentCondition {
            type_: Some(type_.into()),
            status: Some(status.into()),
            reason: Some(reason.into()),
            ..Default::default()
        }
    }
    fn cond_progressing() -> DeploymentCondition {
        cond(DEPLOYMENT_PROGRESSING, CONDITION_FALSE, "ForSomeReason")
    }
    fn cond_progressing2() -> DeploymentCondition {
        cond(DEPLOYMENT_PROGRESSING, CONDITION_TRUE, "BecauseItIs")
    }
    fn cond_available() -> DeploymentCondition {
        cond(DEPLOYMENT_AVAILABLE, CONDITION_TRUE, "AwesomeController")
    }
    fn status(conds: Vec<DeploymentCondition>) -> DeploymentStatus {
        DeploymentStatus {
            conditions: Some(conds),
            ..Default::default()
        }
    }

    #[test]
    fn test_get_condition() {
        let s = status(vec![cond_progressing(), cond_available()]);
        // "condition exists"
        assert!(get_deployment_condition(&s, DEPLOYMENT_AVAILABLE).is_some());
        // "condition does not exist"
        assert!(get_deployment_condition(&s, DEPLOYMENT_REPLICA_FAILURE).is_none());
    }

    #[test]
    fn test_set_condition() {
        let cases = [
            (
                "set for the first time",
                DeploymentStatus::default(),
                cond_available(),
                status(vec![cond_available()]),
            ),
            (
                "simple set",
                status(vec![cond_progressing()]),
                cond_available(),
                status(vec![cond_progressing(), cond_available()]),
            ),
            (
                "overwrite",
                status(vec![cond_progressing()]),
                cond_progressing2(),
                status(vec![cond_progressing2()]),
            ),
        ];
        for (name, mut s, c, want) in cases {
            set_deployment_condition(&mut s, c);
            assert_eq!(s, want, "{name}");
        }
    }

    #[test]
    fn test_remove_condition() {
        let cases = [
            (
                "remove from empty status",
                DeploymentStatus::default(),
                DEPLOYMENT_PROGRESSING,
                DeploymentStatus::default(),
            ),
            (
                "simple remove",
                status(vec![cond_progressing()]),
                DEPLOYMENT_PROGRESSING,
                DeploymentStatus::default(),
            ),
            (
                "doesn't remove anything",
                status(vec![cond_progressing(), cond_available()]),
                DEPLOYMENT_REPLICA_FAILURE,
                status(vec![cond_progressing(), cond_available()]),
            ),
        ];
        for (name, mut s, t, want) in cases {
            remove_deployment_condition(&mut s, t);
            assert_eq!(s, want, "{name}");
        }
    }

    #[test]
    fn set_condition_timestamp_rules() {
        let t0 = at(1_000);
        let t1 = at(2_000);
        let mut s = DeploymentStatus::default();
        set_deployment_condition(
            &mut s,
            new_deployment_condition(DEPLOYMENT_PROGRESSING, CONDITION_TRUE, "A", "first", t0),
        );
        // Same status and reason: nothing changes, not even the message.
        set_deployment_condition(
            &mut s,
            new_deployment_condition(DEPLOYMENT_PROGRESSING, CONDITION_TRUE, "A", "second", t1),
        );
        let c = get_deployment_condition(&s, DEPLOYMENT_PROGRESSING).expect("present");
        assert_eq!(c.message.as_deref(), Some("first"));
        assert_eq!(c.last_update_time, Some(Time(t0)));
        // Same status, other reason: transition time kept, update time bumped.
        set_deployment_condition(
            &mut s,
            new_deployment_condition(DEPLOYMENT_PROGRESSING, CONDITION_TRUE, "B", "third", t1),
        );
        let c = get_deployment_condition(&s, DEPLOYMENT_PROGRESSING).expect("present");
        assert_eq!(c.last_transition_time, Some(Time(t0)));
        assert_eq!(c.last_update_time, Some(Time(t1)));
        // Status flip: both fresh.
        set_deployment_condition(
            &mut s,
            new_deployment_condition(DEPLOYMENT_PROGRESSING, CONDITION_FALSE, "B", "fourth", t1),
        );
        let c = get_deployment_condition(&s, DEPLOYMENT_PROGRESSING).expect("present");
        assert_eq!(c.last_transition_time, Some(Time(t1)));
        assert_eq!(s.conditions.as_ref().map(Vec::len), Some(1));
    }

    #[test]
    fn replica_set_condition_copies_transition_time_twice() {
        let rc = ReplicaSetCondition {
            type_: Some(DEPLOYMENT_REPLICA_FAILURE.into()),
            status: Some(CONDITION_TRUE.into()),
            reason: Some("FailedCreate".into()),
            message: Some("quota".into()),
            last_transition_time: Some(Time(at(5))),
        };
        let c = replica_set_to_deployment_condition(&rc);
        assert_eq!(c.last_update_time, Some(Time(at(5))));
        assert_eq!(c.last_transition_time, Some(Time(at(5))));
        assert_eq!(c.reason.as_deref(), Some("FailedCreate"));
    }
}
