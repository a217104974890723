//! Recreate decisions (upstream `recreate.go`): scale every old ReplicaSet to 0, wait until no
//! old pod runs, then create/scale the new ReplicaSet.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::plan::scale::{ScaleKind, ScaleStep};
use crate::util::fields::{deployment_replicas, name_of, rs_replicas, uid_of};
use crate::util::predicates::deployment_complete;
use crate::util::replica_sets::{
    filter_active_replica_sets, get_actual_replica_count_for_replica_sets,
};

/// Pod phase `Failed`.
pub(crate) const POD_FAILED: &str = "Failed";
/// Pod phase `Succeeded`.
pub(crate) const POD_SUCCEEDED: &str = "Succeeded";

fn to_zero(rs: &ReplicaSet) -> ScaleStep {
    ScaleStep {
        rs_name: name_of(&rs.metadata).to_string(),
        new_replicas: 0,
        kind: ScaleKind::IfSizeChanged,
    }
}

/// `scaleDownOldReplicaSetsForRecreate`: every given (active) old ReplicaSet with replicas goes
/// to 0, in list order.
pub(crate) fn scale_down_old_replica_sets_for_recreate(old_rss: &[&ReplicaSet]) -> Vec<ScaleStep> {
    old_rss
        .iter()
        .filter(|rs| rs_replicas(rs) != 0)
        .map(|rs| to_zero(rs))
        .collect()
}

/// `oldPodsRunning`: any old ReplicaSet still reports `status.replicas`, or any pod owned by a
/// ReplicaSet other than the new one is in a non-terminal phase (`Pending`, `Running`,
/// `Unknown` or empty; pods being deleted still count).
///
/// `pods` yields `(owning ReplicaSet UID, pod phase)` for every pod controlled by one of the
/// Deployment's ReplicaSets (upstream's `podMap`).
pub(crate) fn old_pods_running<'a>(
    new_rs: Option<&ReplicaSet>,
    old_rss: &[&ReplicaSet],
    pods: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> bool {
    if get_actual_replica_count_for_replica_sets(old_rss.iter().copied()) > 0 {
        return true;
    }
    let new_uid = new_rs.map(|rs| uid_of(&rs.metadata));
    pods.into_iter()
        .filter(|(rs_uid, _)| Some(*rs_uid) != new_uid)
        .any(|(_, phase)| !matches!(phase, POD_FAILED | POD_SUCCEEDED))
}

/// `scaleUpNewReplicaSetForRecreate`: the new ReplicaSet goes to `d.R` (`None` if already
/// there). The `TerminationComplete` pod-replacement variant is not implemented (the field is
/// absent from k8s-openapi 0.29).
pub(crate) fn scale_up_new_replica_set_for_recreate(
    new_rs: &ReplicaSet,
    d: &Deployment,
) -> Option<ScaleStep> {
    let desired = deployment_replicas(d);
    (rs_replicas(new_rs) != desired).then(|| ScaleStep {
        rs_name: name_of(&new_rs.metadata).to_string(),
        new_replicas: desired,
        kind: ScaleKind::IfSizeChanged,
    })
}

/// The action of one `rolloutRecreate` pass. After each, the caller runs
/// [`crate::plan::progress::plan_rollout_status`] (for [`RecreatePlan::CreateNewReplicaSet`]:
/// after creating it, call [`plan_recreate`] again with the created ReplicaSet).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RecreatePlan {
    /// Scale these old ReplicaSets to 0 and stop this pass.
    ScaleDownOldReplicaSets(Vec<ScaleStep>),
    /// Old pods are still running: stop this pass.
    WaitForOldPods,
    /// All old pods are gone and there is no new ReplicaSet: create it
    /// ([`crate::plan::new_replica_set::new_replica_set()`]).
    CreateNewReplicaSet,
    /// Scale the new ReplicaSet up (if `step` is set); when `cleanup`, delete surplus old
    /// ReplicaSets ([`crate::plan::cleanup::replica_sets_to_clean_up`]).
    ScaleUpNewReplicaSet {
        /// The resize, `None` when the size is already right.
        step: Option<ScaleStep>,
        /// `DeploymentComplete(d, d.status)` on the stored status.
        cleanup: bool,
    },
}

/// `rolloutRecreate` minus I/O.
pub(crate) fn plan_recreate<'a>(
    d: &Deployment,
    new_rs: Option<&ReplicaSet>,
    old_rss: &[&ReplicaSet],
    pods: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> RecreatePlan {
    let active_old = filter_active_replica_sets(old_rss.iter().copied());
    let scale_down = scale_down_old_replica_sets_for_recreate(&active_old);
    if !scale_down.is_empty() {
        return RecreatePlan::ScaleDownOldReplicaSets(scale_down);
    }
    if old_pods_running(new_rs, old_rss, pods) {
        return RecreatePlan::WaitForOldPods;
    }
    let Some(new_rs) = new_rs else {
        return RecreatePlan::CreateNewReplicaSet;
    };
    let stored = d.status.clone().unwrap_or_default();
    RecreatePlan::ScaleUpNewReplicaSet {
        step: scale_up_new_replica_set_for_recreate(new_rs, d),
        cleanup: deployment_complete(d, &stored),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pod phase `Unknown` (deprecated; counted as running for safety).
    const POD_UNKNOWN: &str = "Unknown";
    use crate::testing::{recreate_deployment, rs, with_status_replicas};

    fn rs_with_uid(uid: &str) -> ReplicaSet {
        let mut r = with_status_replicas(rs(&format!("foo-{uid}"), 0, 0, 0), 0);
        r.metadata.uid = Some(uid.into());
        r
    }

    #[test]
    fn test_scale_down_old_replica_sets() {
        for old_sizes in [vec![3], vec![3, 0, 2]] {
            let olds: Vec<ReplicaSet> = old_sizes
                .iter()
                .enumerate()
                .map(|(i, n)| rs(&format!("old-{i}"), *n, 0, i as i64))
                .collect();
            let refs: Vec<&ReplicaSet> = olds.iter().collect();
            let steps = scale_down_old_replica_sets_for_recreate(&refs);
            assert_eq!(steps.len(), old_sizes.iter().filter(|n| **n > 0).count());
            assert!(steps.iter().all(|s| s.new_replicas == 0));
        }
    }

    #[test]
    fn test_old_pods_running() {
        let some = rs_with_uid("some-uid");
        let other = rs_with_uid("other-uid");
        let status1 = with_status_replicas(rs("rs-1", 0, 0, 0), 1);
        let status0 = with_status_replicas(rs("rs-1", 0, 0, 0), 0);
        // podMapWithUIDs: two phase-less pods per UID.
        let two_each = [
            ("some-uid", ""),
            ("some-uid", ""),
            ("other-uid", ""),
            ("other-uid", ""),
        ];
        let cases: Vec<(&str, Vec<&ReplicaSet>, Vec<(&str, &str)>, bool)> = vec![
            ("no old RSs", vec![], vec![], false),
            (
                "old RSs with running pods",
                vec![&some, &other],
                two_each.to_vec(),
                true,
            ),
            (
                "old RSs without pods but with non-zero status replicas",
                vec![&status1],
                vec![],
                true,
            ),
            (
                "old RSs without pods or non-zero status replicas",
                vec![&status0],
                vec![],
                false,
            ),
            (
                "old RSs with zero status replicas but pods in terminal state are present",
                vec![&status0],
                vec![("uid-1", POD_FAILED), ("uid-1", POD_SUCCEEDED)],
                false,
            ),
            (
                "old RSs with zero status replicas but pod in unknown phase present",
                vec![&status0],
                vec![("uid-1", POD_UNKNOWN)],
                true,
            ),
            (
                "old RSs with zero status replicas with pending pod present",
                vec![&status0],
                vec![("uid-1", "Pending")],
                true,
            ),
            (
                "old RSs with zero status replicas with running pod present",
                vec![&status0],
                vec![("uid-1", "Running")],
                true,
            ),
            (
                "old RSs with zero status replicas but pods in terminal state and pending are present",
                vec![&status0],
                vec![
                    ("uid-1", POD_FAILED),
                    ("uid-1", POD_SUCCEEDED),
                    ("uid-3", "Pending"),
                ],
                true,
            ),
        ];
        for (name, old, pods, want) in cases {
            assert_eq!(
                old_pods_running(None, &old, pods.iter().copied()),
                want,
                "{name}"
            );
        }
        // Pods of the new ReplicaSet are ignored.
        let new_rs = rs_with_uid("new-uid");
        assert!(!old_pods_running(
            Some(&new_rs),
            &[&status0],
            [("new-uid", "Running")]
        ));
    }

    #[test]
    fn rollout_recreate_sequence() {
        let d = recreate_deployment("foo", 3);
        let old = with_status_replicas(rs("old", 3, 3, 0), 3);
        // 1. scale down old.
        match plan_recreate(&d, None, &[&old], []) {
            RecreatePlan::ScaleDownOldReplicaSets(steps) => {
                assert_eq!(
                    steps,
                    vec![ScaleStep {
                        rs_name: "old".into(),
                        new_replicas: 0,
                        kind: ScaleKind::IfSizeChanged
                    }]
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        // 2. old RS at 0 but its pods still terminate.
        let old = with_status_replicas(rs("old", 0, 0, 0), 2);
        assert_eq!(
            plan_recreate(&d, None, &[&old], []),
            RecreatePlan::WaitForOldPods
        );
        let old = with_status_replicas(rs("old", 0, 0, 0), 0);
        assert_eq!(
            plan_recreate(&d, None, &[&old], [("uid-old", "Running")]),
            RecreatePlan::WaitForOldPods
        );
        // 3. create the new RS.
        assert_eq!(
            plan_recreate(&d, None, &[&old], [("uid-old", POD_SUCCEEDED)]),
            RecreatePlan::CreateNewReplicaSet
        );
        // 4. scale it up.
        let new_rs = rs("new", 0, 0, 10);
        match plan_recreate(&d, Some(&new_rs), &[&old], []) {
            RecreatePlan::ScaleUpNewReplicaSet {
                step: Some(step),
                cleanup: false,
            } => assert_eq!(step.new_replicas, 3),
            other => panic!("unexpected {other:?}"),
        }
        let new_rs = rs("new", 3, 3, 10);
        assert_eq!(
            plan_recreate(&d, Some(&new_rs), &[&old], []),
            RecreatePlan::ScaleUpNewReplicaSet {
                step: None,
                cleanup: false
            }
        );
    }
}
