//! The decision order of upstream `syncDeployment` (`deployment_controller.go`), minus I/O:
//! which path a sync of a Deployment takes, and which of the steps shared by several paths run
//! before it. [`controller`](crate::controller)'s `sync_deployment` is a `match` on
//! [`sync_path`].

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::plan::rollback::get_rollback_to;
use crate::util::strategy::{RECREATE_STRATEGY, ROLLING_UPDATE_STRATEGY, strategy_type};

/// The path of one sync, in upstream's order of precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SyncPath {
    /// The selector is empty (`{}`): Warning `SelectingAll`, bump `observedGeneration` if it
    /// lags (status write, error ignored), and stop.
    SelectingAll {
        /// Whether `status.observedGeneration < metadata.generation`.
        bump_observed_generation: bool,
    },
    /// Being deleted: `syncStatusOnly`.
    StatusOnly,
    /// Paused: `sync` (proportional [`crate::plan::scale::scale()`], status; cleanup unless a rollback
    /// is pending, see [`scaling_cleans_up`]).
    Paused,
    /// The legacy rollback annotation is set: [`crate::plan::rollback::plan_rollback()`].
    Rollback,
    /// Neither paused nor rolling back: a scaling event
    /// ([`crate::plan::scale::is_scaling_event`], which needs the ReplicaSets) takes `sync`, anything
    /// else the rollout of the strategy.
    Rollout(Strategy),
}

/// The rollout a Deployment's `spec.strategy.type` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// `rolloutRecreate`.
    Recreate,
    /// `rolloutRolling`.
    RollingUpdate,
    /// Error `unexpected deployment strategy type: <type>`.
    Unexpected(String),
}

impl SyncPath {
    /// Whether the sync claims (adopts/releases) the namespace's ReplicaSets first
    /// (`getReplicaSetsForDeployment`): every path but [`SyncPath::SelectingAll`].
    pub(crate) fn claims_replica_sets(&self) -> bool {
        !matches!(self, SyncPath::SelectingAll { .. })
    }

    /// Whether the sync records pausing/resuming in the Progressing condition
    /// (`checkPausedConditions`) after the claim, before anything else: every path but
    /// [`SyncPath::SelectingAll`] and [`SyncPath::StatusOnly`], so that a paused rollout does not
    /// time out.
    pub(crate) fn checks_paused_conditions(&self) -> bool {
        !matches!(self, SyncPath::SelectingAll { .. } | SyncPath::StatusOnly)
    }
}

fn is_paused(d: &Deployment) -> bool {
    d.spec.paused.unwrap_or(false)
}

/// Whether the selector deep-equals an empty `LabelSelector` (a nil selector is not caught here,
/// as upstream; validation forbids both).
pub(crate) fn selects_everything(d: &Deployment) -> bool {
    d.spec.selector == LabelSelector::default()
}

/// The path of this sync. Nothing a step before the path changes (claims, paused conditions,
/// the revision sync inside `isScalingEvent`) touches what it is decided from: the selector,
/// the deletion timestamp, `spec.paused`, the rollback annotation and the strategy type.
pub(crate) fn sync_path(d: &Deployment) -> SyncPath {
    if selects_everything(d) {
        let observed = d
            .status
            .as_ref()
            .and_then(|s| s.observed_generation)
            .unwrap_or(0);
        return SyncPath::SelectingAll {
            bump_observed_generation: observed < d.metadata.generation.unwrap_or(0),
        };
    }
    if d.metadata.deletion_timestamp.is_some() {
        return SyncPath::StatusOnly;
    }
    if is_paused(d) {
        return SyncPath::Paused;
    }
    if get_rollback_to(d).is_some() {
        return SyncPath::Rollback;
    }
    SyncPath::Rollout(match strategy_type(d) {
        RECREATE_STRATEGY => Strategy::Recreate,
        ROLLING_UPDATE_STRATEGY => Strategy::RollingUpdate,
        other => Strategy::Unexpected(other.to_string()),
    })
}

/// In `sync`: old ReplicaSets are cleaned up only when paused and no rollback is pending.
pub(crate) fn scaling_cleans_up(d: &Deployment) -> bool {
    is_paused(d) && get_rollback_to(d).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{recreate_deployment, rolling_deployment, spec_mut, ts};
    use crate::util::annotations::DEPRECATED_ROLLBACK_TO;

    /// Every branch of `syncDeployment`'s chain, in precedence order, with the shared steps
    /// each one runs first: (case, path, claims ReplicaSets, checks paused conditions).
    #[test]
    fn sync_path_precedence() {
        let rolling = rolling_deployment("foo", 1, None, None);
        let mut rollback = rolling.clone();
        rollback
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(DEPRECATED_ROLLBACK_TO.into(), "2".into());
        let mut paused_rollback = rollback.clone();
        spec_mut(&mut paused_rollback).paused = Some(true);
        let mut paused = rolling.clone();
        spec_mut(&mut paused).paused = Some(true);
        let mut deleting = paused.clone();
        deleting.metadata.deletion_timestamp = Some(ts(0));
        let mut all = deleting.clone();
        spec_mut(&mut all).selector = LabelSelector::default();
        all.metadata.generation = Some(2);
        let mut all_observed = all.clone();
        all_observed
            .status
            .get_or_insert_with(Default::default)
            .observed_generation = Some(2);
        let mut odd = rolling.clone();
        if let Some(s) = spec_mut(&mut odd).strategy.as_mut() {
            s.type_ = Some("Canary".into());
        }

        let cases = [
            (
                "selector selects everything, observedGeneration lags",
                &all,
                SyncPath::SelectingAll {
                    bump_observed_generation: true,
                },
                false,
                false,
            ),
            (
                "selector selects everything, observedGeneration current",
                &all_observed,
                SyncPath::SelectingAll {
                    bump_observed_generation: false,
                },
                false,
                false,
            ),
            (
                "being deleted (and paused)",
                &deleting,
                SyncPath::StatusOnly,
                true,
                false,
            ),
            (
                "paused with a rollback pending",
                &paused_rollback,
                SyncPath::Paused,
                true,
                true,
            ),
            ("paused", &paused, SyncPath::Paused, true, true),
            ("rollback", &rollback, SyncPath::Rollback, true, true),
            (
                "RollingUpdate (a scaling event takes sync)",
                &rolling,
                SyncPath::Rollout(Strategy::RollingUpdate),
                true,
                true,
            ),
            (
                "Recreate (a scaling event takes sync)",
                &recreate_deployment("foo", 1),
                SyncPath::Rollout(Strategy::Recreate),
                true,
                true,
            ),
            (
                "unknown strategy (a scaling event takes sync)",
                &odd,
                SyncPath::Rollout(Strategy::Unexpected("Canary".into())),
                true,
                true,
            ),
        ];
        for (case, d, path, claims, checks_paused) in cases {
            let got = sync_path(d);
            assert_eq!(got, path, "{case}");
            assert_eq!(got.claims_replica_sets(), claims, "{case}: claims");
            assert_eq!(
                got.checks_paused_conditions(),
                checks_paused,
                "{case}: checkPausedConditions"
            );
        }

        assert!(!scaling_cleans_up(&rollback));
        assert!(!scaling_cleans_up(&paused_rollback), "rollback pending");
        assert!(scaling_cleans_up(&paused));
    }
}
