//! Status of a ReplicaSet (upstream `replica_set_utils.go`): the pure
//! [`calculate_status`], the `ReplicaFailure` condition helpers, and [`status_unchanged`]
//! (the write with its single retry is the controller's, in `controller/writes.rs`).

use std::collections::BTreeMap;
use std::ops::Deref;

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetCondition, ReplicaSetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kcm_controller::pod_util::{PodLike, is_pod_available, is_pod_ready};

/// The condition type this controller manages.
pub(crate) const REPLICA_FAILURE: &str = "ReplicaFailure";
/// Condition reason when pods could not be created.
pub(crate) const FAILED_CREATE_REASON: &str = "FailedCreate";
/// Condition reason when pods could not be deleted.
pub(crate) const FAILED_DELETE_REASON: &str = "FailedDelete";

/// Desired replicas (`spec.replicas`, which the API server defaults to 1).
pub(crate) fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

/// `spec.minReadySeconds` (0 when unset).
pub(crate) fn min_ready_seconds(rs: &ReplicaSet) -> i32 {
    rs.spec.min_ready_seconds.unwrap_or(0)
}

fn template_labels(rs: &ReplicaSet) -> Option<&BTreeMap<String, String>> {
    rs.spec
        .template
        .as_ref()?
        .metadata
        .as_ref()?
        .labels
        .as_ref()
}

/// A new `ReplicaFailure`-style condition with status `True` stamped `now`
/// (upstream `NewReplicaSetCondition`).
pub(crate) fn new_condition(
    type_: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> ReplicaSetCondition {
    ReplicaSetCondition {
        type_: Some(type_.to_string()),
        status: Some("True".to_string()),
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        last_transition_time: Some(Time(now)),
    }
}

/// The first condition of `type_` (upstream `GetCondition`).
pub(crate) fn get_condition<'a>(
    status: &'a ReplicaSetStatus,
    type_: &str,
) -> Option<&'a ReplicaSetCondition> {
    status
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_.as_deref().unwrap_or_default() == type_)
}

/// Adds `cond`, replacing conditions of the same type, unless one with the same
/// status and reason already exists (upstream `SetCondition`).
pub(crate) fn set_condition(status: &mut ReplicaSetStatus, cond: ReplicaSetCondition) {
    if let Some(cur) = get_condition(status, cond.type_.as_deref().unwrap_or_default())
        && cur.status == cond.status
        && cur.reason == cond.reason
    {
        return;
    }
    let mut conds: Vec<ReplicaSetCondition> = status
        .conditions
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.type_ != cond.type_)
        .collect();
    conds.push(cond);
    status.conditions = Some(conds);
}

/// Removes every condition of `type_`; an empty list becomes absent
/// (upstream `RemoveCondition`).
pub(crate) fn remove_condition(status: &mut ReplicaSetStatus, type_: &str) {
    let conds: Vec<ReplicaSetCondition> = status
        .conditions
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.type_.as_deref().unwrap_or_default() != type_)
        .collect();
    status.conditions = (!conds.is_empty()).then_some(conds);
}

pub(crate) fn nonzero<T: Default + PartialEq>(v: T) -> Option<T> {
    (v != T::default()).then_some(v)
}

fn count_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Computes the status a sync writes (upstream `replica_set_utils.go` `calculateStatus`).
///
/// * `active`: the active pods claimed by the ReplicaSet;
/// * `terminating`: number of claimed terminating pods, `None` when the
///   terminating-replicas feature is off (the field is then absent);
/// * `manage_err`: the error text of this sync's create/delete step, if any;
/// * `now`: the instant availability is judged at.
///
/// Other fields of the current status (observedGeneration, other conditions)
/// are kept; an existing `ReplicaFailure` condition is left untouched while
/// errors persist and removed once a sync has no error.
pub(crate) fn calculate_status<P, R>(
    rs: &ReplicaSet,
    active: &[R],
    terminating: Option<usize>,
    manage_err: Option<&str>,
    now: Timestamp,
) -> ReplicaSetStatus
where
    P: PodLike,
    R: Deref<Target = P>,
{
    let mut status = rs.status.clone().unwrap_or_default();
    let tmpl = template_labels(rs);
    let min_ready = min_ready_seconds(rs);
    let (mut fully, mut ready, mut available) = (0usize, 0usize, 0usize);
    for p in active {
        let pod = &**p;
        let labels = pod.meta().labels.as_ref();
        let fully_labeled = tmpl.is_none_or(|t| {
            t.iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        });
        if fully_labeled {
            fully += 1;
        }
        if is_pod_ready(pod) {
            ready += 1;
            if is_pod_available(pod, min_ready, now) {
                available += 1;
            }
        }
    }
    let has_failure = get_condition(&status, REPLICA_FAILURE).is_some();
    match manage_err {
        Some(msg) if !has_failure => {
            let diff =
                i64::try_from(active.len()).unwrap_or(i64::MAX) - i64::from(spec_replicas(rs));
            let reason = match diff.signum() {
                -1 => FAILED_CREATE_REASON,
                1 => FAILED_DELETE_REASON,
                _ => "",
            };
            set_condition(
                &mut status,
                new_condition(REPLICA_FAILURE, reason, msg, now),
            );
        }
        None if has_failure => remove_condition(&mut status, REPLICA_FAILURE),
        _ => {}
    }
    status.replicas = count_i32(active.len());
    status.fully_labeled_replicas = nonzero(count_i32(fully));
    status.ready_replicas = nonzero(count_i32(ready));
    status.available_replicas = nonzero(count_i32(available));
    status.terminating_replicas = terminating.map(count_i32);
    status
}

fn conditions_of(s: &ReplicaSetStatus) -> &[ReplicaSetCondition] {
    s.conditions.as_deref().unwrap_or_default()
}

/// Whether writing `new` for `rs` would change nothing (the early return of upstream
/// `updateReplicaSetStatus`): the same counters (terminatingReplicas absent and 0 differ), an
/// observedGeneration equal to the generation, and equal conditions.
pub(crate) fn status_unchanged(rs: &ReplicaSet, new: &ReplicaSetStatus) -> bool {
    let cur = rs.status.clone().unwrap_or_default();
    let z = |v: Option<i32>| v.unwrap_or(0);
    cur.replicas == new.replicas
        && z(cur.fully_labeled_replicas) == z(new.fully_labeled_replicas)
        && z(cur.ready_replicas) == z(new.ready_replicas)
        && z(cur.available_replicas) == z(new.available_replicas)
        && cur.terminating_replicas == new.terminating_replicas
        && rs.metadata.generation.unwrap_or(0) == cur.observed_generation.unwrap_or(0)
        && conditions_of(&cur) == conditions_of(new)
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
