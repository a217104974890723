//! The decision order of upstream `syncDeployment` (`deployment_controller.go`), minus I/O:
//! which path a sync of a Deployment takes.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::rollback::get_rollback_to;
use crate::util::strategy::{RECREATE_STRATEGY, ROLLING_UPDATE_STRATEGY, strategy_type};

/// The path of one sync, in upstream's order of precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncPath {
    /// The selector is empty (`{}`): Warning `SelectingAll`, bump `observedGeneration` if it
    /// lags (status write, error ignored), and stop.
    SelectingAll {
        /// Whether `status.observedGeneration < metadata.generation`.
        bump_observed_generation: bool,
    },
    /// Being deleted: `syncStatusOnly`.
    StatusOnly,
    /// Paused or a scaling event: `sync` (proportional [`crate::sync::scale()`], status; when
    /// paused without a rollback request, also cleanup).
    Sync,
    /// The legacy rollback annotation is set: [`crate::rollback::rollback()`].
    Rollback,
    /// `rolloutRecreate`.
    Recreate,
    /// `rolloutRolling`.
    RollingUpdate,
    /// Error `unexpected deployment strategy type: <type>`.
    UnexpectedStrategy(String),
}

fn is_paused(d: &Deployment) -> bool {
    d.spec.paused.unwrap_or(false)
}

/// Whether the selector deep-equals an empty `LabelSelector` (a nil selector is not caught here,
/// as upstream; validation forbids both).
pub fn selects_everything(d: &Deployment) -> bool {
    d.spec.selector == LabelSelector::default()
}

/// The path of this sync. `check_paused_conditions` runs between the deletion check and the
/// paused check upstream; `is_scaling_event` ([`crate::sync::is_scaling_event`]) is only
/// consulted when neither paused nor rolling back.
pub fn sync_path(d: &Deployment, is_scaling_event: impl FnOnce() -> bool) -> SyncPath {
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
        return SyncPath::Sync;
    }
    if get_rollback_to(d).is_some() {
        return SyncPath::Rollback;
    }
    if is_scaling_event() {
        return SyncPath::Sync;
    }
    match strategy_type(d) {
        RECREATE_STRATEGY => SyncPath::Recreate,
        ROLLING_UPDATE_STRATEGY => SyncPath::RollingUpdate,
        other => SyncPath::UnexpectedStrategy(other.to_string()),
    }
}

/// In `sync`: old ReplicaSets are cleaned up only when paused and no rollback is pending.
pub fn sync_cleans_up(d: &Deployment) -> bool {
    is_paused(d) && get_rollback_to(d).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{recreate_deployment, rolling_deployment, spec_mut, ts};
    use crate::util::annotations::DEPRECATED_ROLLBACK_TO;

    #[test]
    fn sync_path_precedence() {
        let d = rolling_deployment("foo", 1, None, None);
        assert_eq!(sync_path(&d, || false), SyncPath::RollingUpdate);
        assert_eq!(sync_path(&d, || true), SyncPath::Sync);
        assert_eq!(
            sync_path(&recreate_deployment("foo", 1), || false),
            SyncPath::Recreate
        );

        let mut rb = d.clone();
        rb.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(DEPRECATED_ROLLBACK_TO.into(), "2".into());
        assert_eq!(
            sync_path(&rb, || panic!("not consulted")),
            SyncPath::Rollback
        );
        assert!(!sync_cleans_up(&rb));

        let mut paused = rb.clone();
        spec_mut(&mut paused).paused = Some(true);
        assert_eq!(
            sync_path(&paused, || panic!("not consulted")),
            SyncPath::Sync
        );
        assert!(!sync_cleans_up(&paused), "rollback pending");
        let mut paused = d.clone();
        spec_mut(&mut paused).paused = Some(true);
        assert!(sync_cleans_up(&paused));

        let mut deleting = paused.clone();
        deleting.metadata.deletion_timestamp = Some(ts(0));
        assert_eq!(sync_path(&deleting, || true), SyncPath::StatusOnly);

        let mut all = deleting.clone();
        spec_mut(&mut all).selector = LabelSelector::default();
        all.metadata.generation = Some(2);
        assert_eq!(
            sync_path(&all, || true),
            SyncPath::SelectingAll {
                bump_observed_generation: true
            }
        );

        let mut odd = d.clone();
        if let Some(s) = spec_mut(&mut odd).strategy.as_mut() {
            s.type_ = Some("Canary".into());
        }
        assert_eq!(
            sync_path(&odd, || false),
            SyncPath::UnexpectedStrategy("Canary".into())
        );
    }
}
