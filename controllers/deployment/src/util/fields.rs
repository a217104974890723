//! Null-safe accessors for the optional fields of the k8s-openapi types.
//!
//! Upstream dereferences pointers such as `*(d.Spec.Replicas)` directly because the API server
//! always defaults them. Objects handed to this crate may not have gone through defaulting (tests,
//! hand-built objects), so every accessor documents what an absent field means. Replica counts
//! that upstream treats as pointers default to the API default (`1`); plain Go integers
//! (`status.*`) default to `0`, exactly like Go's zero value.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;

/// `deployment.spec.replicas`, `1` (the apps/v1 default) when absent.
pub(crate) fn deployment_replicas(d: &Deployment) -> i32 {
    d.spec.replicas.unwrap_or(1)
}

/// `replicaSet.spec.replicas`, `1` (the apps/v1 default) when absent.
pub(crate) fn rs_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

/// `replicaSet.status.replicas` (0 when there is no status).
pub(crate) fn rs_status_replicas(rs: &ReplicaSet) -> i32 {
    rs.status.as_ref().map_or(0, |s| s.replicas)
}

/// `replicaSet.status.availableReplicas` (0 when absent).
pub(crate) fn rs_available_replicas(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0)
}

/// `replicaSet.status.readyReplicas` (0 when absent).
pub(crate) fn rs_ready_replicas(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0)
}

/// `replicaSet.status.observedGeneration` (0 when absent).
pub(crate) fn rs_observed_generation(rs: &ReplicaSet) -> i64 {
    rs.status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .unwrap_or(0)
}

/// `replicaSet.status.terminatingReplicas` (`None` = unknown, as upstream's `*int32`).
pub(crate) fn rs_terminating_replicas(rs: &ReplicaSet) -> Option<i32> {
    rs.status.as_ref().and_then(|s| s.terminating_replicas)
}

/// `metadata.name` ("" when absent).
pub(crate) fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

/// `metadata.uid` ("" when absent).
pub(crate) fn uid_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

/// One annotation of an object.
pub(crate) fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

/// The annotation map of an object, created on demand.
pub(crate) fn annotations_mut(
    meta: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> &mut BTreeMap<String, String> {
    meta.annotations.get_or_insert_with(BTreeMap::new)
}

/// The deployment's pod template (an empty template when the spec is absent).
pub(crate) fn deployment_template(d: &Deployment) -> PodTemplateSpec {
    d.spec.template.clone()
}

/// The ReplicaSet's pod template (an empty template when absent).
pub(crate) fn rs_template(rs: &ReplicaSet) -> PodTemplateSpec {
    rs.spec.template.clone().unwrap_or_default()
}

/// `deployment.spec.progressDeadlineSeconds`.
pub(crate) fn progress_deadline_seconds(d: &Deployment) -> Option<i32> {
    d.spec.progress_deadline_seconds
}

/// `deployment.metadata.generation` (0 when absent).
pub(crate) fn generation(d: &Deployment) -> i64 {
    d.metadata.generation.unwrap_or(0)
}
