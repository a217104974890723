//! `calculateStatus` / `syncDeploymentStatus`.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet};
use k8s_openapi::jiff::Timestamp;

use crate::features::FeatureGates;
use crate::util::conditions::{
    CONDITION_FALSE, CONDITION_TRUE, DEPLOYMENT_AVAILABLE, MINIMUM_REPLICAS_AVAILABLE,
    MINIMUM_REPLICAS_UNAVAILABLE, new_deployment_condition, set_deployment_condition,
};
use crate::util::fields::{deployment_replicas, generation, rs_status_replicas};
use crate::util::replica_sets::{
    get_actual_replica_count_for_replica_sets, get_available_replica_count_for_replica_sets,
    get_ready_replica_count_for_replica_sets, get_replica_count_for_replica_sets,
    get_terminating_replica_count_for_replica_sets,
};
use crate::util::strategy::max_unavailable;

/// Message of Available=True.
pub(crate) const MINIMUM_AVAILABILITY_MESSAGE: &str = "Deployment has minimum availability.";
/// Message of Available=False.
pub(crate) const NO_MINIMUM_AVAILABILITY_MESSAGE: &str =
    "Deployment does not have minimum availability.";

/// Go `omitempty` for an `int32`/`int64`: zero is absent, so computed statuses compare equal
/// to what the API server returns.
fn omit_zero<T: Default + PartialEq>(v: T) -> Option<T> {
    (v != T::default()).then_some(v)
}

/// `calculateStatus`: the status the Deployment should report for `all_rss` (old ReplicaSets
/// plus the new one, if any).
///
/// * `replicas` = Σ `status.replicas`, `updatedReplicas` = the new RS's `status.replicas`,
///   `readyReplicas`/`availableReplicas` = Σ of the RS fields;
/// * `unavailableReplicas` = `max(0, Σ spec.replicas - available)` (never negative, e.g. while
///   scaling down);
/// * `observedGeneration` = `metadata.generation`; `collisionCount` copied;
/// * `terminatingReplicas` = Σ RS `status.terminatingReplicas` (`None` when unknown) **only**
///   with the `DeploymentReplicaSetTerminatingReplicas` gate; left unset otherwise;
/// * the existing conditions are copied and Available is set: True/`MinimumReplicasAvailable`
///   when `available >= d.R - MaxUnavailable(d)`, else False/`MinimumReplicasUnavailable`
///   (timestamps per [`set_deployment_condition`], `now` for fresh ones).
///
/// Zero counters are returned as `None` (Go `omitempty`); compare with [`status_equal`].
pub(crate) fn calculate_status(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &Deployment,
    features: &FeatureGates,
    now: Timestamp,
) -> DeploymentStatus {
    let available = get_available_replica_count_for_replica_sets(all_rss.iter().copied());
    let total = get_replica_count_for_replica_sets(all_rss.iter().copied());
    let unavailable = total.wrapping_sub(available).max(0);
    let stored = d.status.clone().unwrap_or_default();
    let mut status = DeploymentStatus {
        observed_generation: omit_zero(generation(d)),
        replicas: omit_zero(get_actual_replica_count_for_replica_sets(
            all_rss.iter().copied(),
        )),
        updated_replicas: omit_zero(new_rs.map_or(0, rs_status_replicas)),
        ready_replicas: omit_zero(get_ready_replica_count_for_replica_sets(
            all_rss.iter().copied(),
        )),
        available_replicas: omit_zero(available),
        unavailable_replicas: omit_zero(unavailable),
        collision_count: stored.collision_count,
        terminating_replicas: if features.deployment_replica_set_terminating_replicas {
            get_terminating_replica_count_for_replica_sets(all_rss.iter().copied())
        } else {
            None
        },
        conditions: stored.conditions.filter(|c| !c.is_empty()),
    };
    let condition = if available >= deployment_replicas(d) - max_unavailable(d) {
        new_deployment_condition(
            DEPLOYMENT_AVAILABLE,
            CONDITION_TRUE,
            MINIMUM_REPLICAS_AVAILABLE,
            MINIMUM_AVAILABILITY_MESSAGE,
            now,
        )
    } else {
        new_deployment_condition(
            DEPLOYMENT_AVAILABLE,
            CONDITION_FALSE,
            MINIMUM_REPLICAS_UNAVAILABLE,
            NO_MINIMUM_AVAILABILITY_MESSAGE,
            now,
        )
    };
    set_deployment_condition(&mut status, condition);
    status
}

fn normalized(s: &DeploymentStatus) -> DeploymentStatus {
    let z = |v: Option<i32>| v.filter(|n| *n != 0);
    DeploymentStatus {
        available_replicas: z(s.available_replicas),
        collision_count: s.collision_count,
        conditions: s.conditions.clone().filter(|c| !c.is_empty()),
        observed_generation: s.observed_generation.filter(|g| *g != 0),
        ready_replicas: z(s.ready_replicas),
        replicas: z(s.replicas),
        terminating_replicas: s.terminating_replicas,
        unavailable_replicas: z(s.unavailable_replicas),
        updated_replicas: z(s.updated_replicas),
    }
}

/// Upstream's `reflect.DeepEqual(d.Status, newStatus)` under Go's wire semantics: an absent
/// counter equals 0 and an absent condition list equals an empty one. Pointer fields
/// (`collisionCount`, `terminatingReplicas`) keep `None != Some(0)`.
pub(crate) fn status_equal(a: &DeploymentStatus, b: &DeploymentStatus) -> bool {
    normalized(a) == normalized(b)
}

/// `syncDeploymentStatus`: the new status to write with UpdateStatus, or `None` when the stored
/// one is already right (no API call).
pub(crate) fn status_update(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &Deployment,
    features: &FeatureGates,
    now: Timestamp,
) -> Option<DeploymentStatus> {
    let new_status = calculate_status(all_rss, new_rs, d, features, now);
    let stored = d.status.clone().unwrap_or_default();
    (!status_equal(&stored, &new_status)).then_some(new_status)
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
