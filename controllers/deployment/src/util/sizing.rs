//! How many replicas a Deployment's ReplicaSets should have (upstream `deployment_util.go`:
//! `NewRSNewReplicas`, `IsSaturated`, `GetReplicaSetProportion`, `getReplicaSetFraction`), from the
//! strategy arithmetic of [`strategy`](super::strategy) and the replica annotations.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::error::DeploymentError;
use crate::util::annotations::{desired_replicas_annotation, max_replicas_annotation};
use crate::util::fields::{deployment_replicas, rs_available_replicas, rs_replicas};
use crate::util::intstr::scaled_value_from_int_or_percent;
use crate::util::replica_sets::get_replica_count_for_replica_sets;
use crate::util::strategy::{
    RECREATE_STRATEGY, ROLLING_UPDATE_STRATEGY, max_surge, max_surge_param, strategy_type,
};

/// `NewRSNewReplicas`: how many replicas the new ReplicaSet should have right now.
///
/// * RollingUpdate: `maxSurge` resolved against `spec.replicas` (absent/malformed is an error —
///   this path does not go through `ResolveFenceposts`); if `Σ spec.replicas(all_rss)` already
///   reaches `spec.replicas + maxSurge` the new RS keeps its size, else it grows by
///   `min(room, spec.replicas - newRS.spec.replicas)`.
/// * Recreate: `spec.replicas`.
/// * anything else: [`DeploymentError::UnsupportedStrategy`].
///
/// Not implemented: the `DeploymentPodReplacementPolicy` feature-gated variant that also
/// counts terminating pods (k8s-openapi 0.29 has no `spec.podReplacementPolicy` field).
pub(crate) fn new_rs_new_replicas(
    d: &Deployment,
    all_rss: &[&ReplicaSet],
    new_rs: &ReplicaSet,
) -> Result<i32, DeploymentError> {
    let desired = deployment_replicas(d);
    match strategy_type(d) {
        ROLLING_UPDATE_STRATEGY => {
            let surge = scaled_value_from_int_or_percent(max_surge_param(d), desired, true)?;
            let current = get_replica_count_for_replica_sets(all_rss.iter().copied());
            let max_total = desired.wrapping_add(surge);
            let new_replicas = rs_replicas(new_rs);
            if current >= max_total {
                return Ok(new_replicas);
            }
            let scale_up = max_total
                .wrapping_sub(current)
                .min(desired.wrapping_sub(new_replicas));
            Ok(new_replicas.wrapping_add(scale_up))
        }
        RECREATE_STRATEGY => Ok(desired),
        other => Err(DeploymentError::UnsupportedStrategy(other.to_string())),
    }
}

/// `IsSaturated`: the ReplicaSet has exactly `spec.replicas` replicas, all available, and was
/// last sized for this `spec.replicas` (desired-replicas annotation). `None` is not saturated.
pub(crate) fn is_saturated(d: &Deployment, rs: Option<&ReplicaSet>) -> bool {
    let Some(rs) = rs else {
        return false;
    };
    let Some(desired) = desired_replicas_annotation(rs) else {
        return false;
    };
    let want = deployment_replicas(d);
    rs_replicas(rs) == want && desired == want && rs_available_replicas(rs) == want
}

/// `GetReplicaSetProportion`: the number of replicas `rs` should gain (or lose, negative) out of the
/// `to_add` replicas of a proportional scaling pass of which `added` are already handed out.
pub(crate) fn get_proportion(
    rs: Option<&ReplicaSet>,
    d: &Deployment,
    to_add: i32,
    added: i32,
) -> i32 {
    let Some(rs) = rs else {
        return 0;
    };
    if rs_replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = get_replica_set_fraction(rs, d);
    let allowed = to_add.wrapping_sub(added);
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// `getReplicaSetFraction`: `round(rs.R * (d.R + maxSurge) / annotatedMax) - rs.R`, where
/// `annotatedMax` is the max-replicas annotation of the ReplicaSet.
///
/// Master behaviour (verified against upstream `TestGetReplicaSetFraction`): scaling to 0 gives
/// `-rs.R`; a missing, invalid **or zero** annotation falls back to `d.status.replicas`; if that
/// is 0 too the fraction is 0 (no division by zero). `rs.R * target` wraps like Go's `int32`
/// product; rounding is half away from zero (`math.Round`).
pub(crate) fn get_replica_set_fraction(rs: &ReplicaSet, d: &Deployment) -> i32 {
    let desired = deployment_replicas(d);
    let rs_r = rs_replicas(rs);
    if desired == 0 {
        return -rs_r;
    }
    let target = desired.wrapping_add(max_surge(d));
    let annotated = match max_replicas_annotation(rs) {
        Some(v) if v != 0 => v,
        _ => d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0),
    };
    if annotated == 0 {
        return 0;
    }
    let new_size = f64::from(rs_r.wrapping_mul(target)) / f64::from(annotated);
    (new_size.round() as i32).wrapping_sub(rs_r)
}

#[cfg(test)]
#[path = "sizing_tests.rs"]
mod tests;
