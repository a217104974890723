//! Revision and replica-count annotations (upstream `deployment_util.go`, annotation half).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::error::DeploymentError;
use crate::util::fields::{annotation, annotations_mut, deployment_replicas};
use crate::util::strategy::max_surge;

/// Revision of a ReplicaSet (and of its Deployment): the rollout sequence number.
pub(crate) const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// Comma-separated former revisions of a ReplicaSet that was re-used by a rollback.
pub(crate) const REVISION_HISTORY_ANNOTATION: &str = "deployment.kubernetes.io/revision-history";
/// `spec.replicas` of the Deployment when the ReplicaSet was last scaled by the controller.
pub(crate) const DESIRED_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/desired-replicas";
/// `spec.replicas + maxSurge` of the Deployment when the ReplicaSet was last scaled.
pub(crate) const MAX_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/max-replicas";
/// Legacy rollback request (the remnant of `spec.rollbackTo` in apps/v1).
pub(crate) const DEPRECATED_ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";
/// kubectl's client-side-apply record, never copied between Deployment and ReplicaSet.
pub(crate) const LAST_APPLIED_CONFIG_ANNOTATION: &str =
    "kubectl.kubernetes.io/last-applied-configuration";
/// The `kubectl --record` change cause; copied like any other user annotation.
#[cfg(test)]
pub(crate) const CHANGE_CAUSE_ANNOTATION: &str = "kubernetes.io/change-cause";

/// Maximum length of the revision-history annotation (`maxRevHistoryLengthInChars`).
pub(crate) const MAX_REV_HISTORY_LENGTH_IN_CHARS: usize = 2000;

/// Annotations that are never copied Deployment -> ReplicaSet nor back (`annotationsToSkip`).
pub(crate) const ANNOTATIONS_TO_SKIP: [&str; 6] = [
    LAST_APPLIED_CONFIG_ANNOTATION,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    DEPRECATED_ROLLBACK_TO,
];

/// Whether `key` is in [`ANNOTATIONS_TO_SKIP`].
pub(crate) fn skip_copy_annotation(key: &str) -> bool {
    ANNOTATIONS_TO_SKIP.contains(&key)
}

/// `Revision(obj)`: absent annotation -> `Ok(0)`; otherwise a base-10 `i64` (an empty or
/// malformed value is an error, as with Go's `strconv.ParseInt`).
pub(crate) fn revision(meta: &ObjectMeta) -> Result<i64, DeploymentError> {
    match annotation(meta, REVISION_ANNOTATION) {
        None => Ok(0),
        Some(v) => {
            v.parse().map_err(
                |e: std::num::ParseIntError| DeploymentError::InvalidRevision {
                    value: v.to_string(),
                    reason: e.to_string(),
                },
            )
        }
    }
}

/// `MaxRevision`: the highest parseable revision among `rss` (unparseable ones skipped), or 0.
pub(crate) fn max_revision(rss: &[&ReplicaSet]) -> i64 {
    rss.iter()
        .filter_map(|rs| revision(&rs.metadata).ok())
        .fold(0, i64::max)
}

/// `LastRevision`: the second-highest revision (a duplicated maximum counts twice, so
/// `[3, 3]` gives 3); 0 if there is none.
pub(crate) fn last_revision(rss: &[&ReplicaSet]) -> i64 {
    let (mut max, mut sec_max) = (0i64, 0i64);
    for rs in rss {
        let Ok(v) = revision(&rs.metadata) else {
            continue;
        };
        if v >= max {
            sec_max = max;
            max = v;
        } else if v > sec_max {
            sec_max = v;
        }
    }
    sec_max
}

/// `SetDeploymentRevision`: stores `revision` on the Deployment; true if it changed.
pub(crate) fn set_deployment_revision(d: &mut Deployment, revision: &str) -> bool {
    let annotations = annotations_mut(&mut d.metadata);
    if annotations.get(REVISION_ANNOTATION).map(String::as_str) == Some(revision) {
        return false;
    }
    annotations.insert(REVISION_ANNOTATION.to_string(), revision.to_string());
    true
}

/// `copyDeploymentAnnotationsToReplicaSet`: copies every non-skipped Deployment annotation that
/// the ReplicaSet lacks or holds with another value. Annotations removed from the Deployment are
/// not removed from the ReplicaSet. True if anything changed.
pub(crate) fn copy_deployment_annotations_to_replica_set(
    d: &Deployment,
    rs: &mut ReplicaSet,
) -> bool {
    let mut changed = false;
    let rs_annotations = annotations_mut(&mut rs.metadata);
    if let Some(d_annotations) = &d.metadata.annotations {
        for (k, v) in d_annotations {
            if skip_copy_annotation(k) || rs_annotations.get(k) == Some(v) {
                continue;
            }
            rs_annotations.insert(k.clone(), v.clone());
            changed = true;
        }
    }
    changed
}

/// `SetNewReplicaSetAnnotations`: copies the Deployment's annotations, raises the revision to
/// `new_revision` (never lowers it), appends the previous revision to the revision history when
/// an existing ReplicaSet is re-used (dropping the oldest entries to stay within
/// `rev_history_limit_in_chars`), and for a ReplicaSet being created (`!exists`) stamps the
/// desired/max-replicas annotations. Returns whether annotations changed.
///
/// Upstream quirks kept: an unparseable non-empty old revision, or an unparseable
/// `new_revision`, returns `false` even if the copy step changed annotations.
pub(crate) fn set_new_replica_set_annotations(
    d: &Deployment,
    rs: &mut ReplicaSet,
    new_revision: &str,
    exists: bool,
    rev_history_limit_in_chars: usize,
) -> bool {
    let mut changed = copy_deployment_annotations_to_replica_set(d, rs);
    let annotations = annotations_mut(&mut rs.metadata);
    let old_revision = annotations.get(REVISION_ANNOTATION).cloned();
    let old_revision_int = match old_revision.as_deref().map(str::parse::<i64>) {
        Some(Ok(v)) => v,
        Some(Err(_)) if old_revision.as_deref() != Some("") => {
            tracing::warn!(revision = ?old_revision, "updating replica set revision: old revision is not an integer");
            return false;
        }
        _ => 0,
    };
    let Ok(new_revision_int) = new_revision.parse::<i64>() else {
        tracing::warn!(
            revision = new_revision,
            "updating replica set revision: new revision is not an integer"
        );
        return false;
    };
    if old_revision_int < new_revision_int {
        annotations.insert(REVISION_ANNOTATION.to_string(), new_revision.to_string());
        changed = true;
    }
    if let Some(old) = old_revision.filter(|_| old_revision_int < new_revision_int) {
        update_revision_history(annotations, &old, rev_history_limit_in_chars);
    }
    if !exists {
        let desired = deployment_replicas(d);
        changed |= set_replicas_annotations(rs, desired, desired.wrapping_add(max_surge(d)));
    }
    changed
}

fn update_revision_history(annotations: &mut BTreeMap<String, String>, old: &str, limit: usize) {
    let history = annotations
        .get(REVISION_HISTORY_ANNOTATION)
        .cloned()
        .unwrap_or_default();
    let parts: Vec<&str> = history.split(',').collect();
    if parts.first().is_none_or(|p| p.is_empty()) {
        annotations.insert(REVISION_HISTORY_ANNOTATION.to_string(), old.to_string());
        return;
    }
    let mut total = history.len() + old.len() + 1;
    let mut start = 0;
    while total > limit && start < parts.len() {
        total = total.saturating_sub(parts[start].len() + 1);
        start += 1;
    }
    if total <= limit {
        let mut kept: Vec<&str> = parts[start..].to_vec();
        kept.push(old);
        annotations.insert(REVISION_HISTORY_ANNOTATION.to_string(), kept.join(","));
    } else {
        tracing::warn!(
            limit,
            "not appending revision to revision history: it would exceed the length limit"
        );
    }
}

/// `SetDeploymentAnnotationsTo` (rollback): the Deployment keeps only its own skip-listed
/// annotations and receives every non-skip-listed annotation of `rollback_to`.
pub(crate) fn set_deployment_annotations_to(d: &mut Deployment, rollback_to: &ReplicaSet) {
    let mut annotations: BTreeMap<String, String> = d
        .metadata
        .annotations
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| skip_copy_annotation(k))
        .collect();
    if let Some(rs_annotations) = &rollback_to.metadata.annotations {
        for (k, v) in rs_annotations {
            if !skip_copy_annotation(k) {
                annotations.insert(k.clone(), v.clone());
            }
        }
    }
    d.metadata.annotations = Some(annotations);
}

/// `getNonNegativeInt32FromAnnotation` (master): unsigned base-10 digits only (no sign, no
/// spaces), at most `i32::MAX`; anything else (or absence) is `None`.
pub(crate) fn non_negative_int32_from_annotation(meta: &ObjectMeta, key: &str) -> Option<i32> {
    let v = annotation(meta, key)?;
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        if !v.is_empty() {
            tracing::debug!(key, value = v, "annotation is not a non-negative integer");
        }
        return None;
    }
    v.parse::<i32>().ok()
}

/// `GetDesiredReplicasAnnotation`.
pub(crate) fn desired_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    non_negative_int32_from_annotation(&rs.metadata, DESIRED_REPLICAS_ANNOTATION)
}

/// `getMaxReplicasAnnotation`.
pub(crate) fn max_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    non_negative_int32_from_annotation(&rs.metadata, MAX_REPLICAS_ANNOTATION)
}

/// `SetReplicasAnnotations`: writes desired/max replicas; true if either changed.
pub(crate) fn set_replicas_annotations(rs: &mut ReplicaSet, desired: i32, max: i32) -> bool {
    let annotations = annotations_mut(&mut rs.metadata);
    let mut updated = false;
    for (key, value) in [
        (DESIRED_REPLICAS_ANNOTATION, desired.to_string()),
        (MAX_REPLICAS_ANNOTATION, max.to_string()),
    ] {
        if annotations.get(key) != Some(&value) {
            annotations.insert(key.to_string(), value);
            updated = true;
        }
    }
    updated
}

/// `ReplicasAnnotationsNeedUpdate`: true when the ReplicaSet has no annotations or either
/// annotation differs from the given values (missing counts as different).
pub(crate) fn replicas_annotations_need_update(rs: &ReplicaSet, desired: i32, max: i32) -> bool {
    let Some(annotations) = &rs.metadata.annotations else {
        return true;
    };
    annotations.get(DESIRED_REPLICAS_ANNOTATION) != Some(&desired.to_string())
        || annotations.get(MAX_REPLICAS_ANNOTATION) != Some(&max.to_string())
}

#[cfg(test)]
#[path = "annotations_tests.rs"]
mod tests;
