//! Legacy rollback (upstream `rollback.go`): the `deprecated.deployment.rollback.to`
//! annotation, the remnant of extensions/v1beta1 `spec.rollbackTo`.
//!
//! `kubectl rollout undo` no longer uses it (it patches the template client-side), but the
//! controller still honours the annotation.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::events::{
    DeploymentEvent, EventType, ROLLBACK_DONE, ROLLBACK_LAST_REVISION_NOT_FOUND_MESSAGE,
    ROLLBACK_REVISION_NOT_FOUND, ROLLBACK_REVISION_NOT_FOUND_MESSAGE, ROLLBACK_TEMPLATE_UNCHANGED,
    rollback_template_unchanged_message, rolled_back_message,
};
use crate::util::annotations::{
    DEPRECATED_ROLLBACK_TO, last_revision, revision, set_deployment_annotations_to,
};
use crate::util::fields::{annotation, deployment_template, name_of, rs_template};
use crate::util::replica_sets::set_from_replica_set_template;
use crate::util::template_equality::equal_ignore_hash;

/// `getRollbackTo`: the requested revision (0 = the previous one), or `None` when the
/// annotation is absent, empty or not a base-10 `i64`.
pub(crate) fn get_rollback_to(d: &Deployment) -> Option<i64> {
    let value = annotation(&d.metadata, DEPRECATED_ROLLBACK_TO)?;
    if value.is_empty() {
        return None;
    }
    value.parse().ok()
}

/// `setRollbackTo(d, nil)`: removes the annotation.
pub(crate) fn clear_rollback_to(d: &mut Deployment) {
    if let Some(a) = d.metadata.annotations.as_mut() {
        a.remove(DEPRECATED_ROLLBACK_TO);
    }
}

/// Outcome of a rollback pass. In every case the caller does a full Update (not UpdateStatus)
/// of `deployment` — the rollback annotation is always cleared — and records `event` (for
/// a performed rollback, only if the Update succeeded).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RollbackPlan {
    /// The Deployment to write.
    pub(crate) deployment: Deployment,
    /// Event to record.
    pub(crate) event: DeploymentEvent,
    /// Whether the template was actually replaced.
    pub(crate) performed: bool,
}

fn warning(reason: &'static str, message: String) -> DeploymentEvent {
    DeploymentEvent {
        type_: EventType::Warning,
        reason,
        message,
    }
}

/// `rollback` minus I/O; `None` when no rollback is requested. `all_rss` = old ReplicaSets plus
/// the new one (upstream creates the new ReplicaSet first).
///
/// Revision 0 means [`last_revision`] (the previous one); if there is none, or no ReplicaSet
/// has the target revision (unparseable revisions are skipped), Warning
/// `DeploymentRollbackRevisionNotFound`. Otherwise [`rollback_to_template`] with the first
/// matching ReplicaSet.
pub(crate) fn plan_rollback(d: &Deployment, all_rss: &[&ReplicaSet]) -> Option<RollbackPlan> {
    let mut to_revision = get_rollback_to(d)?;
    let mut cleared = d.clone();
    clear_rollback_to(&mut cleared);
    if to_revision == 0 {
        to_revision = last_revision(all_rss);
        if to_revision == 0 {
            return Some(RollbackPlan {
                deployment: cleared,
                event: warning(
                    ROLLBACK_REVISION_NOT_FOUND,
                    ROLLBACK_LAST_REVISION_NOT_FOUND_MESSAGE.into(),
                ),
                performed: false,
            });
        }
    }
    for rs in all_rss {
        match revision(&rs.metadata) {
            Ok(v) if v == to_revision => return Some(rollback_to_template(d, rs, to_revision)),
            _ => continue,
        }
    }
    Some(RollbackPlan {
        deployment: cleared,
        event: warning(
            ROLLBACK_REVISION_NOT_FOUND,
            ROLLBACK_REVISION_NOT_FOUND_MESSAGE.into(),
        ),
        performed: false,
    })
}

/// `rollbackToTemplate`: copies the ReplicaSet's template (minus the hash label) and its
/// non-skipped annotations into the Deployment — unless the templates are already equal, which
/// gives Warning `DeploymentRollbackTemplateUnchanged` (upstream emits it as a Warning).
pub(crate) fn rollback_to_template(
    d: &Deployment,
    rs: &ReplicaSet,
    to_revision: i64,
) -> RollbackPlan {
    let mut deployment = d.clone();
    clear_rollback_to(&mut deployment);
    if equal_ignore_hash(&deployment_template(d), &rs_template(rs)) {
        return RollbackPlan {
            event: warning(
                ROLLBACK_TEMPLATE_UNCHANGED,
                rollback_template_unchanged_message(name_of(&d.metadata)),
            ),
            deployment,
            performed: false,
        };
    }
    set_from_replica_set_template(&mut deployment, &rs_template(rs));
    set_deployment_annotations_to(&mut deployment, rs);
    // set_deployment_annotations_to keeps skip-listed annotations, the rollback one included.
    clear_rollback_to(&mut deployment);
    RollbackPlan {
        event: DeploymentEvent {
            type_: EventType::Normal,
            reason: ROLLBACK_DONE,
            message: rolled_back_message(name_of(&d.metadata), to_revision),
        },
        deployment,
        performed: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{rolling_deployment, rs, template, with_annotation};
    use crate::util::annotations::{CHANGE_CAUSE_ANNOTATION, REVISION_ANNOTATION};
    use crate::util::hash::DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY;

    fn with_rollback(mut d: Deployment, v: &str) -> Deployment {
        d.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(DEPRECATED_ROLLBACK_TO.into(), v.into());
        d
    }

    fn revisioned(name: &str, rev: &str, image: &str) -> ReplicaSet {
        let mut r = with_annotation(rs(name, 0, 0, 0), REVISION_ANNOTATION, rev);
        let mut t = template(image);
        if let Some(m) = t.metadata.as_mut() {
            m.labels.get_or_insert_with(Default::default).insert(
                DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.into(),
                format!("h-{name}"),
            );
        }
        r.spec.template = Some(t);
        r
    }

    #[test]
    fn get_rollback_to_parsing() {
        let d = rolling_deployment("web", 1, None, None);
        assert_eq!(get_rollback_to(&d), None);
        assert_eq!(get_rollback_to(&with_rollback(d.clone(), "")), None);
        assert_eq!(get_rollback_to(&with_rollback(d.clone(), "x")), None);
        assert_eq!(get_rollback_to(&with_rollback(d.clone(), "0")), Some(0));
        assert_eq!(get_rollback_to(&with_rollback(d, "3")), Some(3));
    }

    #[test]
    fn rollback_to_previous_revision() {
        let d = with_rollback(rolling_deployment("web", 1, None, None), "0");
        let r1 = with_annotation(
            revisioned("web-1", "1", "v1"),
            CHANGE_CAUSE_ANNOTATION,
            "deploy v1",
        );
        let r2 = revisioned("web-2", "2", "nginx");
        let out = plan_rollback(&d, &[&r1, &r2]).expect("requested");
        assert!(out.performed);
        assert_eq!(out.event.type_, EventType::Normal);
        assert_eq!(out.event.reason, "DeploymentRollback");
        assert_eq!(
            out.event.message,
            "Rolled back deployment \"web\" to revision 1"
        );
        assert_eq!(out.deployment.spec.template.clone(), template("v1"));
        assert_eq!(get_rollback_to(&out.deployment), None);
        assert_eq!(
            annotation(&out.deployment.metadata, CHANGE_CAUSE_ANNOTATION),
            Some("deploy v1")
        );
    }

    #[test]
    fn rollback_not_found_and_unchanged() {
        let d = with_rollback(rolling_deployment("web", 1, None, None), "0");
        let only = revisioned("web-1", "1", "nginx");
        let out = plan_rollback(&d, &[&only]).expect("requested");
        assert_eq!(
            (out.event.type_, out.event.message.as_str()),
            (EventType::Warning, "Unable to find last revision.")
        );
        assert_eq!(out.event.reason, "DeploymentRollbackRevisionNotFound");
        assert!(!out.performed && get_rollback_to(&out.deployment).is_none());

        let d = with_rollback(rolling_deployment("web", 1, None, None), "7");
        let out = plan_rollback(&d, &[&only]).expect("requested");
        assert_eq!(
            out.event.message,
            "Unable to find the revision to rollback to."
        );

        // Target has the current template (ignoring the hash label).
        let d = with_rollback(rolling_deployment("web", 1, None, None), "1");
        let out = plan_rollback(&d, &[&only]).expect("requested");
        assert!(!out.performed);
        assert_eq!(out.event.type_, EventType::Warning);
        assert_eq!(out.event.reason, "DeploymentRollbackTemplateUnchanged");
        assert_eq!(
            out.event.message,
            "The rollback revision contains the same template as current deployment \"web\""
        );
        assert_eq!(get_rollback_to(&out.deployment), None);

        assert_eq!(
            plan_rollback(&rolling_deployment("web", 1, None, None), &[&only]),
            None
        );
    }
}
