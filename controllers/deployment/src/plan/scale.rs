//! Resizing ReplicaSets: the pure halves of `scaleReplicaSet` (which
//! records the scaling event), proportional `scale()` and `isScalingEvent`.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::events::{DeploymentEvent, ScalingOperation, scaling_event};
use crate::util::annotations::{
    desired_replicas_annotation, replicas_annotations_need_update, set_replicas_annotations,
};
use crate::util::fields::{deployment_replicas, name_of, rs_replicas};
use crate::util::replica_sets::{
    cmp_by_size_newer, cmp_by_size_older, filter_active_replica_sets, find_active_or_latest,
    get_replica_count_for_replica_sets,
};
use crate::util::sizing::{get_proportion, is_saturated};
use crate::util::strategy::{is_rolling_update, max_surge};

/// Which upstream resize helper a step stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScaleKind {
    /// `scaleReplicaSet`: nothing at all happens when the size is already right
    /// (annotations are not refreshed).
    IfSizeChanged,
    /// `scaleReplicaSet`: the replica annotations are refreshed even if the size is unchanged
    /// (used by proportional scaling).
    Always,
}

/// One ReplicaSet resize decided by a pure function, to be executed in list order by the
/// controller loop (stopping at the first failed update, like upstream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScaleStep {
    /// Name of the ReplicaSet.
    pub(crate) rs_name: String,
    /// Target `spec.replicas`.
    pub(crate) new_replicas: i32,
    /// Helper semantics.
    pub(crate) kind: ScaleKind,
}

/// What executing a [`ScaleStep`] against the current object means.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScaleOutcome {
    /// The object to send with an Update call; `None` = no API call needed.
    pub(crate) update: Option<ReplicaSet>,
    /// The event to record once the update succeeded (only when the size changed).
    pub(crate) event: Option<DeploymentEvent>,
}

impl ScaleStep {
    /// The outcome of this step for the current `rs` of Deployment `d`.
    pub(crate) fn outcome(&self, rs: &ReplicaSet, d: &Deployment) -> ScaleOutcome {
        match self.kind {
            ScaleKind::IfSizeChanged => {
                scale_replica_set_and_record_event(rs, self.new_replicas, d)
            }
            ScaleKind::Always => scale_replica_set(rs, self.new_replicas, d),
        }
    }
}

/// `scaleReplicaSet` without the API call: when the size or the desired/max-replicas
/// annotations (`d.R`, `d.R + MaxSurge`) are out of date, returns the updated copy; the
/// `ScalingReplicaSet` event is only due when the size changes, its `up`/`down` derived from
/// the old and new sizes (master; releases before ~1.31 passed a fixed operation per pass).
pub(crate) fn scale_replica_set(rs: &ReplicaSet, new_scale: i32, d: &Deployment) -> ScaleOutcome {
    let old_scale = rs_replicas(rs);
    let desired = deployment_replicas(d);
    let max = desired.wrapping_add(max_surge(d));
    let size_needs_update = old_scale != new_scale;
    if !size_needs_update && !replicas_annotations_need_update(rs, desired, max) {
        return ScaleOutcome {
            update: None,
            event: None,
        };
    }
    let mut copy = rs.clone();
    copy.spec.replicas = Some(new_scale);
    set_replicas_annotations(&mut copy, desired, max);
    let op = if old_scale < new_scale {
        ScalingOperation::Up
    } else {
        ScalingOperation::Down
    };
    let event =
        size_needs_update.then(|| scaling_event(op, name_of(&rs.metadata), old_scale, new_scale));
    ScaleOutcome {
        update: Some(copy),
        event,
    }
}

/// `scaleReplicaSet`: no-op when the size is already `new_scale`, otherwise
/// [`scale_replica_set`].
pub(crate) fn scale_replica_set_and_record_event(
    rs: &ReplicaSet,
    new_scale: i32,
    d: &Deployment,
) -> ScaleOutcome {
    if rs_replicas(rs) == new_scale {
        return ScaleOutcome {
            update: None,
            event: None,
        };
    }
    scale_replica_set(rs, new_scale, d)
}

fn step(rs: &ReplicaSet, new_replicas: i32, kind: ScaleKind) -> ScaleStep {
    ScaleStep {
        rs_name: name_of(&rs.metadata).to_string(),
        new_replicas,
        kind,
    }
}

/// `scale()`: how a scaling event (or a paused deployment) resizes the ReplicaSets.
///
/// 1. A single active (or, with none active, the latest) ReplicaSet takes all of `d.R`.
/// 2. A saturated new ReplicaSet zeroes every active old one.
/// 3. RollingUpdate only: the `d.R + maxSurge - Σ R` replicas to add (or remove) are spread
///    proportionally ([`get_proportion`]) over the active ReplicaSets sorted largest first
///    (newer first when adding, older first when removing); the rounding leftover goes to the
///    first of them (never below 0). Every active ReplicaSet gets an [`ScaleKind::Always`] step
///    so its annotations are refreshed.
///
/// `old_rss` may be in any order (olds first, the new one last, as upstream builds the list).
pub(crate) fn scale(
    d: &Deployment,
    new_rs: Option<&ReplicaSet>,
    old_rss: &[&ReplicaSet],
) -> Vec<ScaleStep> {
    let desired = deployment_replicas(d);
    if let Some(rs) = find_active_or_latest(new_rs, old_rss) {
        if rs_replicas(rs) == desired {
            return Vec::new();
        }
        return vec![step(rs, desired, ScaleKind::IfSizeChanged)];
    }
    if is_saturated(d, new_rs) {
        return filter_active_replica_sets(old_rss.iter().copied())
            .into_iter()
            .map(|old| step(old, 0, ScaleKind::IfSizeChanged))
            .collect();
    }
    if !is_rolling_update(d) {
        return Vec::new();
    }
    let mut all = filter_active_replica_sets(old_rss.iter().copied().chain(new_rs));
    let total = get_replica_count_for_replica_sets(all.iter().copied());
    let allowed = if desired > 0 {
        desired.wrapping_add(max_surge(d))
    } else {
        0
    };
    let to_add = allowed.wrapping_sub(total);
    match to_add.cmp(&0) {
        std::cmp::Ordering::Greater => all.sort_by(|a, b| cmp_by_size_newer(a, b)),
        std::cmp::Ordering::Less => all.sort_by(|a, b| cmp_by_size_older(a, b)),
        std::cmp::Ordering::Equal => {}
    }
    let mut added = 0;
    let mut sizes: Vec<i32> = Vec::with_capacity(all.len());
    for rs in &all {
        if to_add != 0 {
            let p = get_proportion(Some(rs), d, to_add, added);
            sizes.push(rs_replicas(rs).wrapping_add(p));
            added = added.wrapping_add(p);
        } else {
            sizes.push(rs_replicas(rs));
        }
    }
    if to_add != 0
        && let Some(first) = sizes.first_mut()
    {
        *first = first.wrapping_add(to_add).wrapping_sub(added).max(0);
    }
    all.iter()
        .zip(sizes)
        .map(|(rs, size)| step(rs, size, ScaleKind::Always))
        .collect()
}

/// `isScalingEvent`: some active ReplicaSet carries a parseable desired-replicas annotation
/// that differs from `d.R` (i.e. the user changed `spec.replicas` since the last resize).
pub(crate) fn is_scaling_event(
    d: &Deployment,
    new_rs: Option<&ReplicaSet>,
    old_rss: &[&ReplicaSet],
) -> bool {
    let desired = deployment_replicas(d);
    filter_active_replica_sets(old_rss.iter().copied().chain(new_rs))
        .into_iter()
        .filter_map(desired_replicas_annotation)
        .any(|v| v != desired)
}

/// Applies `steps` to copies of `rss` as if every update succeeded (the tests' simulation of
/// the controller executing them). Unknown names are ignored.
#[cfg(test)]
pub(crate) fn apply_scale_steps(
    rss: &[&ReplicaSet],
    steps: &[ScaleStep],
    d: &Deployment,
) -> Vec<ReplicaSet> {
    let mut out: Vec<ReplicaSet> = rss.iter().map(|rs| (*rs).clone()).collect();
    for s in steps {
        if let Some(rs) = out.iter_mut().find(|rs| name_of(&rs.metadata) == s.rs_name)
            && let Some(updated) = s.outcome(rs, d).update
        {
            *rs = updated;
        }
    }
    out
}

#[cfg(test)]
#[path = "scale_tests.rs"]
mod tests;
