//! `checkPausedConditions`: Progressing=Unknown while paused, so that time spent paused never
//! counts against `progressDeadlineSeconds`.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use k8s_openapi::jiff::Timestamp;

use crate::util::conditions::{
    CONDITION_UNKNOWN, DEPLOYMENT_PROGRESSING, PAUSED_DEPLOY_REASON, RESUMED_DEPLOY_REASON,
    TIMED_OUT_REASON, get_deployment_condition, new_deployment_condition, reason_of,
    set_deployment_condition,
};
use crate::util::predicates::has_progress_deadline;

/// Message of the paused condition.
pub(crate) const PAUSED_MESSAGE: &str = "Deployment is paused";
/// Message of the resumed condition.
pub(crate) const RESUMED_MESSAGE: &str = "Deployment is resumed";

/// The status to write (UpdateStatus) when pausing or resuming changes the Progressing
/// condition, `None` otherwise.
///
/// Only with a progress deadline; a `ProgressDeadlineExceeded` condition is never overwritten.
/// Paused without a `DeploymentPaused` condition -> Progressing=Unknown/`DeploymentPaused`;
/// not paused but the condition says `DeploymentPaused` -> Progressing=Unknown/
/// `DeploymentResumed` (which also refreshes `lastUpdateTime`).
pub(crate) fn paused_condition_update(d: &Deployment, now: Timestamp) -> Option<DeploymentStatus> {
    if !has_progress_deadline(d) {
        return None;
    }
    let mut status = d.status.clone().unwrap_or_default();
    let cond = get_deployment_condition(&status, DEPLOYMENT_PROGRESSING);
    if cond
        .as_ref()
        .is_some_and(|c| reason_of(c) == TIMED_OUT_REASON)
    {
        return None;
    }
    let paused_cond_exists = cond
        .as_ref()
        .is_some_and(|c| reason_of(c) == PAUSED_DEPLOY_REASON);
    let paused = d.spec.paused.unwrap_or(false);
    let (reason, message) = match (paused, paused_cond_exists) {
        (true, false) => (PAUSED_DEPLOY_REASON, PAUSED_MESSAGE),
        (false, true) => (RESUMED_DEPLOY_REASON, RESUMED_MESSAGE),
        _ => return None,
    };
    set_deployment_condition(
        &mut status,
        new_deployment_condition(
            DEPLOYMENT_PROGRESSING,
            CONDITION_UNKNOWN,
            reason,
            message,
            now,
        ),
    );
    Some(status)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::testing::{at, rolling_deployment, spec_mut, status_mut};
    use crate::util::conditions::{CONDITION_FALSE, CONDITION_TRUE, REPLICA_SET_UPDATED_REASON};

    fn deployment(paused: bool, pds: Option<i32>, cond: Option<(&str, &str)>) -> Deployment {
        let mut d = rolling_deployment("foo", 1, None, None);
        spec_mut(&mut d).paused = Some(paused);
        spec_mut(&mut d).progress_deadline_seconds = pds;
        if let Some((status, reason)) = cond {
            set_deployment_condition(
                status_mut(&mut d),
                new_deployment_condition(DEPLOYMENT_PROGRESSING, status, reason, "m", at(0)),
            );
        }
        d
    }

    fn progressing(s: &DeploymentStatus) -> (String, String) {
        let c = get_deployment_condition(s, DEPLOYMENT_PROGRESSING).expect("Progressing");
        (
            c.status.clone().unwrap_or_default(),
            reason_of(&c).to_string(),
        )
    }

    #[test]
    fn check_paused_conditions_cases() {
        // No deadline: never touched.
        assert_eq!(
            paused_condition_update(&deployment(true, None, None), at(9)),
            None
        );
        assert_eq!(
            paused_condition_update(&deployment(true, Some(i32::MAX), None), at(9)),
            None
        );
        // Timed out: never overwritten.
        let d = deployment(true, Some(600), Some((CONDITION_FALSE, TIMED_OUT_REASON)));
        assert_eq!(paused_condition_update(&d, at(9)), None);
        // Pausing.
        let d = deployment(
            true,
            Some(600),
            Some((CONDITION_TRUE, REPLICA_SET_UPDATED_REASON)),
        );
        let s = paused_condition_update(&d, at(9)).expect("paused condition added");
        assert_eq!(
            progressing(&s),
            (CONDITION_UNKNOWN.into(), PAUSED_DEPLOY_REASON.into())
        );
        // Already paused: nothing.
        let d = deployment(
            true,
            Some(600),
            Some((CONDITION_UNKNOWN, PAUSED_DEPLOY_REASON)),
        );
        assert_eq!(paused_condition_update(&d, at(9)), None);
        // Resuming keeps the transition time (Unknown -> Unknown) and bumps the update time.
        let d = deployment(
            false,
            Some(600),
            Some((CONDITION_UNKNOWN, PAUSED_DEPLOY_REASON)),
        );
        let s = paused_condition_update(&d, at(9)).expect("resumed condition");
        assert_eq!(
            progressing(&s),
            (CONDITION_UNKNOWN.into(), RESUMED_DEPLOY_REASON.into())
        );
        let c = get_deployment_condition(&s, DEPLOYMENT_PROGRESSING).expect("Progressing");
        assert_eq!(c.last_transition_time, Some(Time(at(0))));
        assert_eq!(c.last_update_time, Some(Time(at(9))));
        assert_eq!(c.message.as_deref(), Some(RESUMED_MESSAGE));
        // Not paused, no paused condition: nothing.
        assert_eq!(
            paused_condition_update(&deployment(false, Some(600), None), at(9)),
            None
        );
    }
}
