//! `cleanupDeployment`: which old ReplicaSets exceed `revisionHistoryLimit` and may be deleted.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::util::fields::{rs_observed_generation, rs_replicas, rs_status_replicas};
use crate::util::predicates::has_revision_history_limit;
use crate::util::replica_sets::cmp_by_revision;

/// The old ReplicaSets to DELETE, in deletion order (the caller stops at the first error other
/// than NotFound, like upstream).
///
/// Nothing without a revision history limit (`None` or `i32::MAX`). Otherwise the old
/// ReplicaSets not already being deleted are sorted by revision (ascending, creation order as
/// tie-break); of the first `len - limit` of them, exactly those are deleted that have
/// `spec.replicas == 0`, `status.replicas == 0` and an up-to-date status
/// (`generation <= status.observedGeneration`). Skipped ones are not replaced by later
/// candidates. The new ReplicaSet must not be in `old_rss`.
///
/// `status.terminatingReplicas` plays no part, whatever the
/// `DeploymentReplicaSetTerminatingReplicas` gate says: v1.37.2's `cleanupDeployment`
/// (`pkg/controller/deployment/sync.go`) does not read it, so a ReplicaSet whose last pods are
/// still terminating is deleted, and history is cleaned up against servers that drop the field.
pub(crate) fn replica_sets_to_clean_up<'a>(
    old_rss: &[&'a ReplicaSet],
    d: &Deployment,
) -> Vec<&'a ReplicaSet> {
    if !has_revision_history_limit(d) {
        return Vec::new();
    }
    let limit = d.spec.revision_history_limit.unwrap_or(0);
    let mut cleanable: Vec<&ReplicaSet> = old_rss
        .iter()
        .copied()
        .filter(|rs| rs.metadata.deletion_timestamp.is_none())
        .collect();
    let diff = i64::try_from(cleanable.len()).unwrap_or(i64::MAX) - i64::from(limit);
    if diff <= 0 {
        return Vec::new();
    }
    cleanable.sort_by(|a, b| cmp_by_revision(a, b));
    cleanable
        .into_iter()
        .take(usize::try_from(diff).unwrap_or(usize::MAX))
        .filter(|rs| {
            rs_status_replicas(rs) == 0
                && rs_replicas(rs) == 0
                && rs.metadata.generation.unwrap_or(0) <= rs_observed_generation(rs)
                && rs.metadata.deletion_timestamp.is_none()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::ReplicaSetStatus;

    use super::*;
    use crate::testing::{
        rolling_deployment, rs, spec_mut, ts, with_annotation, with_status_replicas,
    };
    use crate::util::annotations::REVISION_ANNOTATION;
    use crate::util::fields::name_of;

    fn with_status(name: &str, spec: i32, status: i32) -> ReplicaSet {
        with_status_replicas(rs(name, spec, 0, 0), status)
    }

    fn full(name: &str, spec: i32, status: i32, terminating: Option<i32>) -> ReplicaSet {
        let mut r = rs(name, spec, 0, 0);
        r.status = Some(ReplicaSetStatus {
            replicas: status,
            observed_generation: Some(1),
            terminating_replicas: terminating,
            ..Default::default()
        });
        r
    }

    fn deployment(limit: i32) -> Deployment {
        let mut d = rolling_deployment("foo", 1, None, None);
        spec_mut(&mut d).revision_history_limit = Some(limit);
        d
    }

    #[test]
    fn test_deployment_controller_cleanup_deployment() {
        let mut already_deleted = with_status("foo-1", 0, 0);
        already_deleted.metadata.deletion_timestamp = Some(ts(0));
        let cases: Vec<(Vec<ReplicaSet>, i32, usize)> = vec![
            (
                vec![
                    with_status("foo-1", 0, 0),
                    with_status("foo-2", 0, 0),
                    with_status("foo-3", 0, 0),
                ],
                1,
                2,
            ),
            // Only delete the replica set with Spec.Replicas = Status.Replicas = 0.
            (
                vec![
                    with_status("foo-1", 0, 0),
                    with_status("foo-2", 0, 1),
                    with_status("foo-3", 1, 0),
                    with_status("foo-4", 1, 1),
                ],
                0,
                1,
            ),
            (
                vec![with_status("foo-1", 0, 0), with_status("foo-2", 0, 0)],
                0,
                2,
            ),
            (
                vec![with_status("foo-1", 1, 1), with_status("foo-2", 1, 1)],
                0,
                0,
            ),
            (vec![already_deleted], 0, 0),
            // with unlimited revisionHistoryLimit
            (
                vec![
                    with_status("foo-1", 0, 0),
                    with_status("foo-2", 0, 0),
                    with_status("foo-3", 0, 0),
                ],
                i32::MAX,
                0,
            ),
        ];
        for (i, (old, limit, want)) in cases.into_iter().enumerate() {
            let refs: Vec<&ReplicaSet> = old.iter().collect();
            let got = replica_sets_to_clean_up(&refs, &deployment(limit));
            assert_eq!(got.len(), want, "scenario {i}");
        }
        let d = deployment(1);
        let mut no_limit = d.clone();
        spec_mut(&mut no_limit).revision_history_limit = None;
        let a = with_status("a", 0, 0);
        let b = with_status("b", 0, 0);
        assert!(replica_sets_to_clean_up(&[&a, &b], &no_limit).is_empty());
        // A stale status (generation ahead of observedGeneration) protects the RS.
        let mut stale = with_status("a", 0, 0);
        stale.metadata.generation = Some(2);
        assert!(replica_sets_to_clean_up(&[&stale, &b], &d).is_empty());
    }

    /// v1.37.2 `cleanupDeployment` never reads `status.terminatingReplicas`: a ReplicaSet with
    /// pods still terminating, or one whose server drops the field (v1.33/v1.34 with the gate
    /// off: synced, so the count is unknown), is deleted like any other scaled-down one.
    #[test]
    fn cleanup_ignores_terminating_replicas() {
        let old = [
            full("foo-1", 0, 0, Some(0)),
            full("foo-2", 0, 0, Some(1)),
            full("foo-3", 0, 0, None),
            full("foo-4", 0, 1, Some(0)),
            full("foo-5", 1, 0, Some(0)),
            full("foo-6", 1, 1, Some(0)),
        ];
        let refs: Vec<&ReplicaSet> = old.iter().collect();
        let got: Vec<&str> = replica_sets_to_clean_up(&refs, &deployment(0))
            .into_iter()
            .map(|r| name_of(&r.metadata))
            .collect();
        assert_eq!(got, ["foo-1", "foo-2", "foo-3"]);
    }

    #[test]
    fn test_deployment_controller_cleanup_deployment_order() {
        let rev = |name: &str, replicas: i32, created: i64, revision: &str| {
            let r = with_status_replicas(rs(name, replicas, 0, created), replicas);
            if revision.is_empty() {
                r
            } else {
                with_annotation(r, REVISION_ANNOTATION, revision)
            }
        };
        let cases: Vec<(Vec<ReplicaSet>, i32, Vec<&str>)> = vec![
            // revision order: rs1 < rs2, delete rs1
            (
                vec![rev("foo-1", 0, -60, "1"), rev("foo-2", 0, 0, "2")],
                1,
                vec!["foo-1"],
            ),
            // revision order: rs2 < rs1, delete rs2
            (
                vec![rev("foo-1", 0, -60, "2"), rev("foo-2", 0, 0, "1")],
                1,
                vec!["foo-2"],
            ),
            // rs1 has revision but rs2 doesn't have revision, delete rs2
            (
                vec![rev("foo-1", 0, -60, "1"), rev("foo-2", 0, 0, "")],
                1,
                vec!["foo-2"],
            ),
            // rs1 doesn't have revision while rs2 has revision, delete rs1
            (
                vec![rev("foo-1", 0, -60, ""), rev("foo-2", 0, 0, "2")],
                1,
                vec!["foo-1"],
            ),
            // revision order: rs1 < rs2 < r3, but rs1 has replicas, delete rs2
            (
                vec![
                    rev("foo-1", 1, -60, "1"),
                    rev("foo-2", 0, 0, "2"),
                    rev("foo-3", 0, 60, "3"),
                ],
                1,
                vec!["foo-2"],
            ),
            // revision order: rs1 < rs2 < r3, both rs1 && rs2 have replicas, don't delete
            (
                vec![
                    rev("foo-1", 1, -60, "1"),
                    rev("foo-2", 1, 0, "2"),
                    rev("foo-3", 0, 60, "3"),
                ],
                1,
                vec![],
            ),
            // revision order: rs2 < rs4 < rs1 < rs3, delete rs2 && rs4
            (
                vec![
                    rev("foo-1", 0, -60, "3"),
                    rev("foo-2", 0, 0, "1"),
                    rev("foo-3", 0, 60, "4"),
                    rev("foo-4", 0, 120, "2"),
                ],
                2,
                vec!["foo-2", "foo-4"],
            ),
        ];
        for (i, (old, limit, want)) in cases.into_iter().enumerate() {
            let refs: Vec<&ReplicaSet> = old.iter().collect();
            let got: Vec<&str> = replica_sets_to_clean_up(&refs, &deployment(limit))
                .into_iter()
                .map(|r| name_of(&r.metadata))
                .collect();
            assert_eq!(got, want, "scenario {i}");
        }
    }
}
