//! Finding, filtering, counting and ordering a Deployment's ReplicaSets (upstream
//! `deployment_util.go` and the ReplicaSet sort orders of `controller_utils.go`).

use std::cmp::Ordering;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::util::annotations::revision;
use crate::util::fields::{
    name_of, rs_available_replicas, rs_observed_generation, rs_ready_replicas, rs_replicas,
    rs_status_replicas, rs_terminating_replicas, uid_of,
};
use crate::util::hash::DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY;
use crate::util::template_equality::TemplateMatcher;

/// `GetReplicaCountForReplicaSets`: Σ `spec.replicas`.
pub(crate) fn get_replica_count_for_replica_sets<'a>(
    rss: impl IntoIterator<Item = &'a ReplicaSet>,
) -> i32 {
    rss.into_iter().map(rs_replicas).fold(0, i32::wrapping_add)
}

/// `GetActualReplicaCountForReplicaSets`: Σ `status.replicas`.
pub(crate) fn get_actual_replica_count_for_replica_sets<'a>(
    rss: impl IntoIterator<Item = &'a ReplicaSet>,
) -> i32 {
    rss.into_iter()
        .map(rs_status_replicas)
        .fold(0, i32::wrapping_add)
}

/// `GetReadyReplicaCountForReplicaSets`: Σ `status.readyReplicas`.
pub(crate) fn get_ready_replica_count_for_replica_sets<'a>(
    rss: impl IntoIterator<Item = &'a ReplicaSet>,
) -> i32 {
    rss.into_iter()
        .map(rs_ready_replicas)
        .fold(0, i32::wrapping_add)
}

/// `GetAvailableReplicaCountForReplicaSets`: Σ `status.availableReplicas`.
pub(crate) fn get_available_replica_count_for_replica_sets<'a>(
    rss: impl IntoIterator<Item = &'a ReplicaSet>,
) -> i32 {
    rss.into_iter()
        .map(rs_available_replicas)
        .fold(0, i32::wrapping_add)
}

/// `GetTerminatingReplicaCountForReplicaSets`: Σ `status.terminatingReplicas`.
///
/// ReplicaSets never synced by their controller (`observedGeneration == 0` and no field) are
/// skipped; if any other ReplicaSet lacks the field the total is unknown (`None`).
pub(crate) fn get_terminating_replica_count_for_replica_sets<'a>(
    rss: impl IntoIterator<Item = &'a ReplicaSet>,
) -> Option<i32> {
    let mut total = 0;
    for rs in rss {
        match rs_terminating_replicas(rs) {
            None if rs_observed_generation(rs) == 0 => continue,
            None => return None,
            Some(n) => total = i32::wrapping_add(total, n),
        }
    }
    Some(total)
}

/// `FilterActiveReplicaSets`: ReplicaSets with `spec.replicas > 0`, order kept.
pub(crate) fn filter_active_replica_sets<'a>(
    rss: impl IntoIterator<Item = &'a ReplicaSet>,
) -> Vec<&'a ReplicaSet> {
    rss.into_iter().filter(|rs| rs_replicas(rs) > 0).collect()
}

/// `ReplicaSetsByCreationTimestamp`: oldest first; equal timestamps by name ascending.
pub(crate) fn cmp_by_creation_timestamp(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    a.metadata
        .creation_timestamp
        .cmp(&b.metadata.creation_timestamp)
        .then_with(|| name_of(&a.metadata).cmp(name_of(&b.metadata)))
}

/// `ReplicaSetsBySizeOlder`: larger `spec.replicas` first; equal sizes oldest first.
pub(crate) fn cmp_by_size_older(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| cmp_by_creation_timestamp(a, b))
}

/// `ReplicaSetsBySizeNewer`: larger `spec.replicas` first; equal sizes newest first.
pub(crate) fn cmp_by_size_newer(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| cmp_by_creation_timestamp(b, a))
}

/// `ReplicaSetsByRevision`: ascending revision; unparseable or equal revisions fall back to
/// creation order. A missing annotation is revision 0.
pub(crate) fn cmp_by_revision(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    match (revision(&a.metadata), revision(&b.metadata)) {
        (Ok(ra), Ok(rb)) if ra != rb => ra.cmp(&rb),
        _ => cmp_by_creation_timestamp(a, b),
    }
}

/// Removes the `pod-template-hash` label from a template (an emptied map stays present).
pub(crate) fn strip_hash_label(template: &mut PodTemplateSpec) {
    if let Some(meta) = template.metadata.as_mut()
        && let Some(labels) = meta.labels.as_mut()
    {
        labels.remove(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY);
    }
}

/// `FindNewReplicaSet`: the oldest ReplicaSet (creation order, then name) whose template equals
/// the Deployment's ignoring the hash label.
pub(crate) fn find_new_replica_set<'a>(
    d: &Deployment,
    rs_list: &[&'a ReplicaSet],
) -> Option<&'a ReplicaSet> {
    let wanted = TemplateMatcher::new(&d.spec.template);
    let absent = PodTemplateSpec::default();
    let mut sorted = rs_list.to_vec();
    sorted.sort_by(|a, b| cmp_by_creation_timestamp(a, b));
    sorted
        .into_iter()
        .find(|rs| wanted.matches(rs.spec.template.as_ref().unwrap_or(&absent)))
}

/// `FindOldReplicaSets` given the new ReplicaSet [`find_new_replica_set`] found (upstream finds
/// it again; a caller that needs both finds it once): `(with_replicas, all)` — every
/// ReplicaSet except the new one (by UID), in creation order; `with_replicas` keeps those with
/// `spec.replicas != 0`.
pub(crate) fn old_replica_sets<'a>(
    new_rs: Option<&ReplicaSet>,
    rs_list: &[&'a ReplicaSet],
) -> (Vec<&'a ReplicaSet>, Vec<&'a ReplicaSet>) {
    let mut sorted = rs_list.to_vec();
    sorted.sort_by(|a, b| cmp_by_creation_timestamp(a, b));
    let all: Vec<&ReplicaSet> = sorted
        .into_iter()
        .filter(|rs| new_rs.is_none_or(|n| uid_of(&n.metadata) != uid_of(&rs.metadata)))
        .collect();
    let with_replicas = all
        .iter()
        .copied()
        .filter(|rs| rs_replicas(rs) != 0)
        .collect();
    (with_replicas, all)
}

/// `FindActiveOrLatest`: the only active ReplicaSet, or — when none is active — the new one
/// (else the newest old one). `None` when several are active or there is nothing at all.
pub(crate) fn find_active_or_latest<'a>(
    new_rs: Option<&'a ReplicaSet>,
    old_rss: &[&'a ReplicaSet],
) -> Option<&'a ReplicaSet> {
    if new_rs.is_none() && old_rss.is_empty() {
        return None;
    }
    let mut newest_first = old_rss.to_vec();
    newest_first.sort_by(|a, b| cmp_by_creation_timestamp(b, a));
    let all = newest_first.iter().copied().chain(new_rs);
    let active = filter_active_replica_sets(all);
    match active.as_slice() {
        [] => new_rs.or_else(|| newest_first.first().copied()),
        [only] => Some(only),
        _ => None,
    }
}

/// `metav1.GetControllerOf`: the owner reference with `controller: true`, if any.
pub(crate) fn get_controller_of(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference> {
    meta.owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// `metav1.IsControlledBy(rs, d)`: the ReplicaSet's controller reference has the Deployment's
/// UID (upstream `ListReplicaSets` keeps only those).
pub(crate) fn is_controlled_by(rs: &ReplicaSet, d: &Deployment) -> bool {
    get_controller_of(&rs.metadata).is_some_and(|r| r.uid == uid_of(&d.metadata))
}

/// `SetFromReplicaSetTemplate`: copies the ReplicaSet's template (metadata and spec) into the
/// Deployment, without the `pod-template-hash` label.
pub(crate) fn set_from_replica_set_template(d: &mut Deployment, template: &PodTemplateSpec) {
    let mut t = template.clone();
    strip_hash_label(&mut t);
    d.spec.template = t;
}

#[cfg(test)]
#[path = "replica_sets_tests.rs"]
mod tests;
