//! The conditions the namespace controller writes on a terminating namespace (upstream
//! `pkg/controller/namespace/deletion/status_condition_utils.go`): one per failure kind and per
//! kind of remaining content, each `False` with its success reason unless something is wrong.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NamespaceCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

const DISCOVERY_FAILURE: &str = "NamespaceDeletionDiscoveryFailure";
const GV_PARSING_FAILURE: &str = "NamespaceDeletionGroupVersionParsingFailure";
const CONTENT_FAILURE: &str = "NamespaceDeletionContentFailure";
const CONTENT_REMAINING: &str = "NamespaceContentRemaining";
const FINALIZERS_REMAINING: &str = "NamespaceFinalizersRemaining";

/// Every condition type, in upstream's order, with its success reason and message.
const SUCCESS: [(&str, &str, &str); 5] = [
    (
        DISCOVERY_FAILURE,
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        GV_PARSING_FAILURE,
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        CONTENT_FAILURE,
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        CONTENT_REMAINING,
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        FINALIZERS_REMAINING,
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

/// What one pass over the namespace's content found (upstream `namespaceConditionUpdater`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ConditionUpdater {
    failures: Vec<(&'static str, &'static str, String)>,
    delete_errors: Vec<String>,
}

impl ConditionUpdater {
    /// Discovery failed (upstream `ProcessDiscoverResourcesErr`): `failed_groups` is the number of
    /// group versions that failed, when discovery failed only for some.
    pub(crate) fn discovery_failed(&mut self, message: &str, failed_groups: Option<usize>) {
        let message = match failed_groups {
            Some(n) => format!("Discovery failed for some groups, {n} failing: {message}"),
            None => message.to_string(),
        };
        self.failures
            .push((DISCOVERY_FAILURE, "DiscoveryFailed", message));
    }

    /// Deleting one resource's content failed (upstream `ProcessDeleteContentErr`).
    pub(crate) fn delete_failed(&mut self, error: String) {
        self.delete_errors.push(error);
    }

    /// What remains, per `plural.group` and per finalizer (upstream `ProcessContentTotals`).
    pub(crate) fn content_totals(
        &mut self,
        remaining: &BTreeMap<String, usize>,
        finalizers: &BTreeMap<String, usize>,
    ) {
        let mut resources: Vec<String> = remaining
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(r, n)| format!("{r} has {n} resource instances"))
            .collect();
        resources.sort();
        if !resources.is_empty() {
            self.failures.push((
                CONTENT_REMAINING,
                "SomeResourcesRemain",
                format!("Some resources are remaining: {}", resources.join(", ")),
            ));
        }
        let mut by_finalizer: Vec<String> = finalizers
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        by_finalizer.sort();
        if !by_finalizer.is_empty() {
            self.failures.push((
                FINALIZERS_REMAINING,
                "SomeFinalizersRemain",
                format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    by_finalizer.join(", ")
                ),
            ));
        }
    }

    /// Bring `conditions` up to date; true when anything changed (upstream `Update`,
    /// `updateConditions`): a condition's transition time moves only when its status does.
    pub(crate) fn update(&self, conditions: &mut Vec<NamespaceCondition>, now: &Time) -> bool {
        let mut wanted = self.failures.clone();
        if !self.delete_errors.is_empty() {
            let mut msgs = self.delete_errors.clone();
            msgs.sort();
            wanted.push((
                CONTENT_FAILURE,
                "ContentDeletionFailed",
                format!(
                    "Failed to delete all resource types, {} remaining: {}",
                    msgs.len(),
                    msgs.join(", ")
                ),
            ));
        }
        let mut changed = false;
        for (type_, ok_reason, ok_message) in SUCCESS {
            let (status, reason, message) = match wanted.iter().find(|(t, _, _)| *t == type_) {
                Some((_, reason, message)) => ("True", *reason, message.clone()),
                None => ("False", ok_reason, ok_message.to_string()),
            };
            match conditions.iter_mut().find(|c| c.type_ == type_) {
                None => {
                    conditions.push(NamespaceCondition {
                        type_: type_.to_string(),
                        status: status.to_string(),
                        reason: Some(reason.to_string()),
                        message: Some(message),
                        last_transition_time: Some(now.clone()),
                    });
                    changed = true;
                }
                Some(old) => {
                    let same = old.status == status
                        && old.reason.as_deref() == Some(reason)
                        && old.message.as_deref() == Some(message.as_str());
                    if !same {
                        if old.status != status {
                            old.last_transition_time = Some(now.clone());
                        }
                        old.status = status.to_string();
                        old.reason = Some(reason.to_string());
                        old.message = Some(message);
                        changed = true;
                    }
                }
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(s: &str) -> Time {
        Time(s.parse().expect("timestamp"))
    }

    fn show(conditions: &[NamespaceCondition]) -> Vec<String> {
        conditions
            .iter()
            .map(|c| {
                format!(
                    "{} {} {} | {}",
                    c.type_,
                    c.status,
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or("")
                )
            })
            .collect()
    }

    #[test]
    fn successful_conditions_first() {
        let mut cs = Vec::new();
        let t0 = time("2026-01-01T00:00:00Z");
        assert!(ConditionUpdater::default().update(&mut cs, &t0));
        assert_eq!(
            show(&cs),
            [
                "NamespaceDeletionDiscoveryFailure False ResourcesDiscovered | All resources successfully discovered",
                "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions | All legacy kube types successfully parsed",
                "NamespaceDeletionContentFailure False ContentDeleted | All content successfully deleted, may be waiting on finalization",
                "NamespaceContentRemaining False ContentRemoved | All content successfully removed",
                "NamespaceFinalizersRemaining False ContentHasNoFinalizers | All content-preserving finalizers finished",
            ]
        );
        assert!(
            !ConditionUpdater::default().update(&mut cs, &time("2026-01-01T00:00:05Z")),
            "nothing changed"
        );
    }

    #[test]
    fn remaining_content_failures_and_transition_times() {
        let t0 = time("2026-01-01T00:00:00Z");
        let t1 = time("2026-01-01T00:00:09Z");
        let mut cs = Vec::new();
        ConditionUpdater::default().update(&mut cs, &t0);
        let mut u = ConditionUpdater::default();
        u.discovery_failed(
            "unable to retrieve the complete list of server APIs: x/v1: boom",
            Some(1),
        );
        u.delete_failed("b failed".into());
        u.delete_failed("a failed".into());
        u.content_totals(
            &BTreeMap::from([
                ("widgets.example.com".to_string(), 2),
                ("pods.".to_string(), 1),
                ("none.".to_string(), 0),
            ]),
            &BTreeMap::from([("example.com/hold".to_string(), 2)]),
        );
        assert!(u.update(&mut cs, &t1));
        assert_eq!(
            show(&cs),
            [
                "NamespaceDeletionDiscoveryFailure True DiscoveryFailed | Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: x/v1: boom",
                "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions | All legacy kube types successfully parsed",
                "NamespaceDeletionContentFailure True ContentDeletionFailed | Failed to delete all resource types, 2 remaining: a failed, b failed",
                "NamespaceContentRemaining True SomeResourcesRemain | Some resources are remaining: pods. has 1 resource instances, widgets.example.com has 2 resource instances",
                "NamespaceFinalizersRemaining True SomeFinalizersRemain | Some content in the namespace has finalizers remaining: example.com/hold in 2 resource instances",
            ]
        );
        assert_eq!(
            cs[0].last_transition_time,
            Some(t1.clone()),
            "status changed"
        );
        assert_eq!(cs[1].last_transition_time, Some(t0), "unchanged");
        // only the message changes: the transition time stays
        let mut u = ConditionUpdater::default();
        u.content_totals(
            &BTreeMap::from([("widgets.example.com".to_string(), 1)]),
            &BTreeMap::new(),
        );
        assert!(u.update(&mut cs, &time("2026-01-01T00:00:20Z")));
        assert_eq!(cs[3].last_transition_time, Some(t1));
        assert_eq!(cs[4].status, "False");
    }
}
