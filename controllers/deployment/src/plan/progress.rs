//! Progress decisions (upstream `progress.go`): the Progressing and ReplicaFailure conditions
//! of `syncRolloutStatus` and the `requeueStuckDeployment` timing.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::events::go_quote;
use crate::features::FeatureGates;
use crate::plan::status::{calculate_status, status_equal};
use crate::util::conditions::{
    CONDITION_FALSE, CONDITION_TRUE, DEPLOYMENT_PROGRESSING, DEPLOYMENT_REPLICA_FAILURE,
    NEW_RS_AVAILABLE_REASON, REPLICA_SET_UPDATED_REASON, TIMED_OUT_REASON,
    get_deployment_condition, new_deployment_condition, reason_of, remove_deployment_condition,
    replica_set_to_deployment_condition, set_deployment_condition,
};
use crate::util::fields::{name_of, progress_deadline_seconds};
use crate::util::predicates::{
    deployment_complete, deployment_progressing, deployment_timed_out, has_progress_deadline,
};

fn subject(d: &Deployment, new_rs: Option<&ReplicaSet>) -> String {
    match new_rs {
        Some(rs) => format!("ReplicaSet {}", go_quote(name_of(&rs.metadata))),
        None => format!("Deployment {}", go_quote(name_of(&d.metadata))),
    }
}

/// `getReplicaFailures`: the `ReplicaFailure` conditions of the new ReplicaSet, or — if it has
/// none — of every ReplicaSet in `all_rss`, converted to Deployment conditions.
pub(crate) fn get_replica_failures(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
) -> Vec<DeploymentCondition> {
    let failures_of = |rs: &ReplicaSet| -> Vec<DeploymentCondition> {
        rs.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .map(|conds| {
                conds
                    .iter()
                    .filter(|c| c.type_.as_deref() == Some(DEPLOYMENT_REPLICA_FAILURE))
                    .map(replica_set_to_deployment_condition)
                    .collect()
            })
            .unwrap_or_default()
    };
    let from_new = new_rs.map(failures_of).unwrap_or_default();
    if !from_new.is_empty() {
        return from_new;
    }
    all_rss.iter().flat_map(|rs| failures_of(rs)).collect()
}

/// The status `syncRolloutStatus` computes: [`calculate_status`] plus the Progressing and
/// ReplicaFailure conditions.
///
/// * No progress deadline -> Progressing removed.
/// * With a deadline, unless the rollout already completed (`replicas == updatedReplicas` and
///   the stored Progressing reason is `NewReplicaSetAvailable`), the first that applies:
///   complete -> True/`NewReplicaSetAvailable` "… has successfully progressed."; progressing ->
///   True/`ReplicaSetUpdated` "… is progressing." with a **fresh `lastUpdateTime` every time**
///   (the old condition is removed first; `lastTransitionTime` kept if it was True); timed out
///   -> False/`ProgressDeadlineExceeded` "… has timed out progressing.".
/// * ReplicaFailure: the first failure of [`get_replica_failures`], else removed.
pub(crate) fn rollout_status(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &Deployment,
    features: &FeatureGates,
    now: Timestamp,
) -> DeploymentStatus {
    let mut new_status = calculate_status(all_rss, new_rs, d, features, now);
    if !has_progress_deadline(d) {
        remove_deployment_condition(&mut new_status, DEPLOYMENT_PROGRESSING);
    }
    let stored = d.status.clone().unwrap_or_default();
    let current = get_deployment_condition(&stored, DEPLOYMENT_PROGRESSING);
    let is_complete_deployment = new_status.replicas == new_status.updated_replicas
        && current
            .as_ref()
            .is_some_and(|c| reason_of(c) == NEW_RS_AVAILABLE_REASON);
    if has_progress_deadline(d) && !is_complete_deployment {
        let who = subject(d, new_rs);
        if deployment_complete(d, &new_status) {
            let msg = format!("{who} has successfully progressed.");
            set_deployment_condition(
                &mut new_status,
                new_deployment_condition(
                    DEPLOYMENT_PROGRESSING,
                    CONDITION_TRUE,
                    NEW_RS_AVAILABLE_REASON,
                    msg,
                    now,
                ),
            );
        } else if deployment_progressing(d, &new_status) {
            let msg = format!("{who} is progressing.");
            let mut condition = new_deployment_condition(
                DEPLOYMENT_PROGRESSING,
                CONDITION_TRUE,
                REPLICA_SET_UPDATED_REASON,
                msg,
                now,
            );
            if let Some(current) = &current {
                if current.status.as_deref() == Some(CONDITION_TRUE) {
                    condition.last_transition_time = current.last_transition_time.clone();
                }
                remove_deployment_condition(&mut new_status, DEPLOYMENT_PROGRESSING);
            }
            set_deployment_condition(&mut new_status, condition);
        } else if deployment_timed_out(d, &new_status, now) {
            let msg = format!("{who} has timed out progressing.");
            set_deployment_condition(
                &mut new_status,
                new_deployment_condition(
                    DEPLOYMENT_PROGRESSING,
                    CONDITION_FALSE,
                    TIMED_OUT_REASON,
                    msg,
                    now,
                ),
            );
        }
    }
    match get_replica_failures(all_rss, new_rs).into_iter().next() {
        Some(failure) => set_deployment_condition(&mut new_status, failure),
        None => remove_deployment_condition(&mut new_status, DEPLOYMENT_REPLICA_FAILURE),
    }
    new_status
}

/// When to look at a Deployment again to detect a missed progress deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StuckRequeue {
    /// No deadline, no Progressing condition, complete, or already timed out (upstream `-1`).
    NotNeeded,
    /// Less than a second left: re-enqueue now, rate limited (upstream `0`).
    Now,
    /// Re-enqueue after `after + 1s` (the extra second absorbs clock skew); upstream returns
    /// `after`.
    After(SignedDuration),
}

impl StuckRequeue {
    /// The delay to pass to the work queue's `AddAfter` (`after + 1s`).
    pub(crate) fn enqueue_after(&self) -> Option<SignedDuration> {
        match self {
            StuckRequeue::After(after) => Some(after.saturating_add(SignedDuration::from_secs(1))),
            _ => None,
        }
    }
}

/// `requeueStuckDeployment`: based on the **stored** Progressing condition and `new_status`.
pub(crate) fn requeue_stuck_deployment(
    d: &Deployment,
    new_status: &DeploymentStatus,
    now: Timestamp,
) -> StuckRequeue {
    let stored = d.status.clone().unwrap_or_default();
    let Some(current) = get_deployment_condition(&stored, DEPLOYMENT_PROGRESSING) else {
        return StuckRequeue::NotNeeded;
    };
    if !has_progress_deadline(d) {
        return StuckRequeue::NotNeeded;
    }
    if deployment_complete(d, new_status) || reason_of(&current) == TIMED_OUT_REASON {
        return StuckRequeue::NotNeeded;
    }
    let deadline = SignedDuration::from_secs(i64::from(progress_deadline_seconds(d).unwrap_or(0)));
    // A missing lastUpdateTime is Go's zero time: long past, so "now".
    let Some(last_update) = current.last_update_time else {
        return StuckRequeue::Now;
    };
    let after = last_update.0.duration_since(now).saturating_add(deadline);
    if after < SignedDuration::from_secs(1) {
        tracing::debug!(
            deployment = name_of(&d.metadata),
            "Queueing up deployment for a progress check now"
        );
        return StuckRequeue::Now;
    }
    tracing::debug!(
        deployment = name_of(&d.metadata),
        queue_after_secs = after.as_secs(),
        "Queueing up deployment for a progress check"
    );
    StuckRequeue::After(after)
}

/// Outcome of `syncRolloutStatus`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RolloutStatusPlan {
    /// The status changed: UpdateStatus with it (no stuck-check requeue on this path: the
    /// write triggers a new sync).
    Update(DeploymentStatus),
    /// Nothing to write; requeue as told to catch a missed deadline.
    Unchanged(StuckRequeue),
}

/// `syncRolloutStatus` minus I/O.
pub(crate) fn plan_rollout_status(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &Deployment,
    features: &FeatureGates,
    now: Timestamp,
) -> RolloutStatusPlan {
    let new_status = rollout_status(all_rss, new_rs, d, features, now);
    let stored = d.status.clone().unwrap_or_default();
    if status_equal(&stored, &new_status) {
        RolloutStatusPlan::Unchanged(requeue_stuck_deployment(d, &new_status, now))
    } else {
        RolloutStatusPlan::Update(new_status)
    }
}

#[cfg(test)]
#[path = "progress_tests.rs"]
mod tests;
