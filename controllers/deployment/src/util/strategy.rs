//! The strategy type and the surge/unavailability arithmetic of the RollingUpdate strategy
//! (upstream `deployment_util.go`: `ResolveFenceposts`, `MaxSurge`, `MaxUnavailable`,
//! `MinAvailable`). Sizing ReplicaSets from them is [`sizing`](super::sizing).

use k8s_openapi::api::apps::v1::{Deployment, RollingUpdateDeployment};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::error::DeploymentError;
use crate::util::fields::deployment_replicas;
use crate::util::intstr::scaled_value_or_zero_go_int;

/// `spec.strategy.type` value of the rolling strategy.
pub(crate) const ROLLING_UPDATE_STRATEGY: &str = "RollingUpdate";
/// `spec.strategy.type` value of the recreate strategy.
pub(crate) const RECREATE_STRATEGY: &str = "Recreate";

/// `spec.strategy.type` ("" when absent: upstream does not default here, the API server does).
pub(crate) fn strategy_type(d: &Deployment) -> &str {
    d.spec
        .strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .unwrap_or("")
}

/// `IsRollingUpdate`: the strategy type is exactly `RollingUpdate`.
pub(crate) fn is_rolling_update(d: &Deployment) -> bool {
    strategy_type(d) == ROLLING_UPDATE_STRATEGY
}

fn rolling_params(d: &Deployment) -> Option<&RollingUpdateDeployment> {
    d.spec.strategy.as_ref()?.rolling_update.as_ref()
}

pub(crate) fn max_surge_param(d: &Deployment) -> Option<&IntOrString> {
    rolling_params(d)?.max_surge.as_ref()
}

fn max_unavailable_param(d: &Deployment) -> Option<&IntOrString> {
    rolling_params(d)?.max_unavailable.as_ref()
}

/// `ResolveFenceposts`: absolute `(maxSurge, maxUnavailable)` for `desired` replicas.
///
/// Percentages of surge round **up**, of unavailability round **down**; an absent value counts
/// as 0; if both resolve to 0, `maxUnavailable` becomes 1 so that a rollout can always make
/// progress. Malformed values are an error.
pub(crate) fn resolve_fenceposts(
    max_surge: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    desired: i32,
) -> Result<(i32, i32), DeploymentError> {
    // Upstream checks for zeros in Go's int before converting to int32.
    let surge = scaled_value_or_zero_go_int(max_surge, desired, true)?;
    let mut unavailable = scaled_value_or_zero_go_int(max_unavailable, desired, false)?;
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    Ok((surge as i32, unavailable as i32))
}

/// `MaxUnavailable`: 0 unless RollingUpdate with `spec.replicas > 0`; otherwise the resolved
/// value clamped to `spec.replicas` (resolution errors give 0: validation prevents them).
pub(crate) fn max_unavailable(d: &Deployment) -> i32 {
    let desired = deployment_replicas(d);
    if !is_rolling_update(d) || desired == 0 {
        return 0;
    }
    let (_, unavailable) =
        resolve_fenceposts(max_surge_param(d), max_unavailable_param(d), desired).unwrap_or((0, 0));
    unavailable.min(desired)
}

/// `MaxSurge`: the resolved surge for RollingUpdate (not clamped), else 0.
pub(crate) fn max_surge(d: &Deployment) -> i32 {
    if !is_rolling_update(d) {
        return 0;
    }
    resolve_fenceposts(
        max_surge_param(d),
        max_unavailable_param(d),
        deployment_replicas(d),
    )
    .map_or(0, |(surge, _)| surge)
}

#[cfg(test)]
#[path = "strategy_tests.rs"]
mod tests;
