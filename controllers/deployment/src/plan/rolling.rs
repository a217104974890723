//! RollingUpdate decisions (upstream `rolling.go`): grow the new ReplicaSet within `maxSurge`,
//! shrink old ones within `maxUnavailable`.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::error::DeploymentError;
use crate::plan::scale::{ScaleKind, ScaleStep};
use crate::util::fields::{deployment_replicas, name_of, rs_available_replicas, rs_replicas};
use crate::util::predicates::deployment_complete;
use crate::util::replica_sets::{
    cmp_by_creation_timestamp, filter_active_replica_sets,
    get_available_replica_count_for_replica_sets, get_replica_count_for_replica_sets,
};
use crate::util::sizing::new_rs_new_replicas;
use crate::util::strategy::max_unavailable;

fn step(rs: &ReplicaSet, new_replicas: i32) -> ScaleStep {
    ScaleStep {
        rs_name: name_of(&rs.metadata).to_string(),
        new_replicas,
        kind: ScaleKind::IfSizeChanged,
    }
}

/// `reconcileNewReplicaSet`: the resize of the new ReplicaSet, if any.
///
/// Above `d.R` it shrinks to `d.R`; below, it grows to [`new_rs_new_replicas`] (bounded by
/// `maxSurge`); equal (or no room) -> `None`.
pub(crate) fn reconcile_new_replica_set(
    all_rss: &[&ReplicaSet],
    new_rs: &ReplicaSet,
    d: &Deployment,
) -> Result<Option<ScaleStep>, DeploymentError> {
    let desired = deployment_replicas(d);
    let current = rs_replicas(new_rs);
    if current == desired {
        return Ok(None);
    }
    if current > desired {
        return Ok(Some(step(new_rs, desired)));
    }
    let new_replicas = new_rs_new_replicas(d, all_rss, new_rs)?;
    Ok((new_replicas != current).then(|| step(new_rs, new_replicas)))
}

/// The scale-downs of `reconcileOldReplicaSets`, in execution order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct OldReplicaSetsPlan {
    /// Unhealthy-replica cleanup first (oldest first), then availability-bounded scale-down.
    pub(crate) steps: Vec<ScaleStep>,
    /// Set when the cleanup hit upstream's "invalid request to scale down" (an RS reporting
    /// more available replicas than it has). Upstream swallows it: the steps before it run,
    /// no further scale-down happens, and the sync continues as if nothing was scaled.
    pub(crate) aborted: Option<DeploymentError>,
}

/// `reconcileOldReplicaSets`: `old_rss` are the **active** old ReplicaSets.
///
/// `maxScaledDown = Σ R(all) - (d.R - MaxUnavailable) - (newRS.R - newRS.A)`; nothing when it is
/// not positive (this blocks scale-down while the new ReplicaSet is unhealthy). Otherwise
/// [`cleanup_unhealthy_replicas`] removes up to that many unavailable old replicas, then
/// [`scale_down_old_replica_sets_for_rolling_update`] removes available ones while keeping
/// `d.R - MaxUnavailable` available.
pub(crate) fn reconcile_old_replica_sets(
    all_rss: &[&ReplicaSet],
    old_rss: &[&ReplicaSet],
    new_rs: &ReplicaSet,
    d: &Deployment,
) -> OldReplicaSetsPlan {
    let old_pods = get_replica_count_for_replica_sets(old_rss.iter().copied());
    if old_pods == 0 {
        return OldReplicaSetsPlan::default();
    }
    let all_pods = get_replica_count_for_replica_sets(all_rss.iter().copied());
    let min_available = deployment_replicas(d) - max_unavailable(d);
    let new_rs_unavailable = rs_replicas(new_rs).wrapping_sub(rs_available_replicas(new_rs));
    let max_scaled_down = all_pods
        .wrapping_sub(min_available)
        .wrapping_sub(new_rs_unavailable);
    if max_scaled_down <= 0 {
        return OldReplicaSetsPlan::default();
    }
    let cleanup = cleanup_unhealthy_replicas(old_rss, d, max_scaled_down);
    let mut steps = cleanup.steps;
    if let Some(err) = cleanup.error {
        return OldReplicaSetsPlan {
            steps,
            aborted: Some(err),
        };
    }
    let cleaned: Vec<&ReplicaSet> = cleanup.old_rss.iter().collect();
    let all_after: Vec<&ReplicaSet> = cleaned.iter().copied().chain(Some(new_rs)).collect();
    steps.extend(scale_down_old_replica_sets_for_rolling_update(
        &all_after, &cleaned, d,
    ));
    OldReplicaSetsPlan {
        steps,
        aborted: None,
    }
}

/// Result of [`cleanup_unhealthy_replicas`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UnhealthyCleanup {
    /// The old ReplicaSets sorted oldest first, with the planned sizes applied.
    pub(crate) old_rss: Vec<ReplicaSet>,
    /// Replicas removed.
    pub(crate) cleaned: i32,
    /// The resizes, oldest ReplicaSet first.
    pub(crate) steps: Vec<ScaleStep>,
    /// Upstream's "invalid request to scale down" (then `steps` holds those before it).
    pub(crate) error: Option<DeploymentError>,
}

/// `cleanupUnhealthyReplicas`: oldest first, removes up to `max_cleanup_count` replicas that
/// are not available (`R - A` per ReplicaSet), skipping empty and fully available ones.
pub(crate) fn cleanup_unhealthy_replicas(
    old_rss: &[&ReplicaSet],
    _d: &Deployment,
    max_cleanup_count: i32,
) -> UnhealthyCleanup {
    let mut sorted: Vec<ReplicaSet> = old_rss.iter().map(|rs| (*rs).clone()).collect();
    sorted.sort_by(cmp_by_creation_timestamp);
    let mut total = 0;
    let mut steps = Vec::new();
    for rs in sorted.iter_mut() {
        if total >= max_cleanup_count {
            break;
        }
        let replicas = rs_replicas(rs);
        let available = rs_available_replicas(rs);
        if replicas == 0 || replicas == available {
            continue;
        }
        let count = max_cleanup_count
            .wrapping_sub(total)
            .min(replicas.wrapping_sub(available));
        let new_size = replicas.wrapping_sub(count);
        if new_size > replicas {
            let error = DeploymentError::InvalidScaleDown {
                name: name_of(&rs.metadata).to_string(),
                from: replicas,
                to: new_size,
            };
            return UnhealthyCleanup {
                old_rss: sorted.clone(),
                cleaned: total,
                steps,
                error: Some(error),
            };
        }
        steps.push(step(rs, new_size));
        rs.spec.replicas = Some(new_size);
        total = total.wrapping_add(count);
    }
    UnhealthyCleanup {
        old_rss: sorted,
        cleaned: total,
        steps,
        error: None,
    }
}

/// `scaleDownOldReplicaSetsForRollingUpdate`: with `available = Σ A(all_rss)` above
/// `d.R - MaxUnavailable`, removes the excess from the old ReplicaSets, oldest first.
pub(crate) fn scale_down_old_replica_sets_for_rolling_update(
    all_rss: &[&ReplicaSet],
    old_rss: &[&ReplicaSet],
    d: &Deployment,
) -> Vec<ScaleStep> {
    let min_available = deployment_replicas(d) - max_unavailable(d);
    let available = get_available_replica_count_for_replica_sets(all_rss.iter().copied());
    if available <= min_available {
        return Vec::new();
    }
    let mut sorted = old_rss.to_vec();
    sorted.sort_by(|a, b| cmp_by_creation_timestamp(a, b));
    let total_to_scale = available.wrapping_sub(min_available);
    let mut done = 0;
    let mut steps = Vec::new();
    for rs in sorted {
        if done >= total_to_scale {
            break;
        }
        let replicas = rs_replicas(rs);
        if replicas == 0 {
            continue;
        }
        let count = replicas.min(total_to_scale.wrapping_sub(done));
        steps.push(step(rs, replicas.wrapping_sub(count)));
        done = done.wrapping_add(count);
    }
    steps
}

/// The action of one `rolloutRolling` pass (the new ReplicaSet already exists — creating it is
/// [`crate::plan::new_replica_set::new_replica_set()`]'s job). After any of them the caller runs
/// [`crate::plan::progress::plan_rollout_status`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RollingPlan {
    /// Resize the new ReplicaSet (and stop this pass).
    ScaleNewReplicaSet(ScaleStep),
    /// Shrink old ReplicaSets (and stop this pass, unless [`OldReplicaSetsPlan::aborted`]).
    ScaleDownOldReplicaSets(OldReplicaSetsPlan),
    /// Nothing to scale; when `cleanup`, delete surplus old ReplicaSets
    /// ([`crate::plan::cleanup::replica_sets_to_clean_up`]) — judged on the stored status.
    Idle {
        /// `DeploymentComplete(d, d.status)`.
        cleanup: bool,
    },
}

/// `rolloutRolling` minus I/O: scale up first, else scale down, else (maybe) clean up.
pub(crate) fn plan_rolling(
    d: &Deployment,
    new_rs: &ReplicaSet,
    old_rss: &[&ReplicaSet],
) -> Result<RollingPlan, DeploymentError> {
    let all: Vec<&ReplicaSet> = old_rss.iter().copied().chain(Some(new_rs)).collect();
    if let Some(step) = reconcile_new_replica_set(&all, new_rs, d)? {
        return Ok(RollingPlan::ScaleNewReplicaSet(step));
    }
    let active_old = filter_active_replica_sets(old_rss.iter().copied());
    let plan = reconcile_old_replica_sets(&all, &active_old, new_rs, d);
    if !plan.steps.is_empty() {
        return Ok(RollingPlan::ScaleDownOldReplicaSets(plan));
    }
    let stored = d.status.clone().unwrap_or_default();
    Ok(RollingPlan::Idle {
        cleanup: deployment_complete(d, &stored),
    })
}

#[cfg(test)]
#[path = "rolling_tests.rs"]
mod tests;
