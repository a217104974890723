//! Pod predicates shared by the workload controllers (upstream
//! `pkg/controller/controller_utils.go`, `pkg/api/v1/pod/util.go` and
//! `pkg/apis/core/helper` deletion-cost parsing).
//!
//! Everything here is written against the [`PodLike`] trait, implemented for the
//! cached [`PodView`] and for the full k8s-openapi `Pod`.

use std::ops::Deref;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::clock::Clock;
use crate::pod_view::PodView;

/// Annotation holding a pod's deletion cost (lower is deleted first).
pub const POD_DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// A pod condition as read by the helpers: status and last transition time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConditionRef<'a> {
    /// `True`, `False` or `Unknown`.
    pub status: &'a str,
    /// `lastTransitionTime` (`None` = Go's zero time).
    pub last_transition_time: Option<&'a Time>,
}

/// Read access to the pod fields the controllers use.
pub trait PodLike {
    /// The pod's metadata.
    fn meta(&self) -> &ObjectMeta;
    /// `status.phase`.
    fn phase(&self) -> Option<&str>;
    /// `spec.nodeName`.
    fn node_name(&self) -> Option<&str>;
    /// The first status condition of the given type.
    fn condition(&self, type_: &str) -> Option<ConditionRef<'_>>;
    /// `(max regular container restarts, max restartable-init (sidecar) container restarts)`.
    fn max_container_restarts(&self) -> (i32, i32);
}

impl PodLike for PodView {
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn phase(&self) -> Option<&str> {
        self.status.phase.as_deref()
    }

    fn node_name(&self) -> Option<&str> {
        self.spec.node_name.as_deref()
    }

    fn condition(&self, type_: &str) -> Option<ConditionRef<'_>> {
        self.status
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
            .map(|c| ConditionRef {
                status: &c.status,
                last_transition_time: c.last_transition_time.as_ref(),
            })
    }

    fn max_container_restarts(&self) -> (i32, i32) {
        let regular = self
            .status
            .container_statuses
            .iter()
            .map(|c| c.restart_count)
            .fold(0, i32::max);
        let is_sidecar = |name: &str| {
            self.spec
                .init_containers
                .iter()
                .any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"))
        };
        let sidecar = self
            .status
            .init_container_statuses
            .iter()
            .filter(|c| is_sidecar(&c.name))
            .map(|c| c.restart_count)
            .fold(0, i32::max);
        (regular, sidecar)
    }
}

impl PodLike for Pod {
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn phase(&self) -> Option<&str> {
        self.status.as_ref()?.phase.as_deref()
    }

    fn node_name(&self) -> Option<&str> {
        self.spec.as_ref()?.node_name.as_deref()
    }

    fn condition(&self, type_: &str) -> Option<ConditionRef<'_>> {
        self.status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|c| c.type_ == type_)
            .map(|c| ConditionRef {
                status: &c.status,
                last_transition_time: c.last_transition_time.as_ref(),
            })
    }

    fn max_container_restarts(&self) -> (i32, i32) {
        let status = self.status.as_ref();
        let regular = status
            .and_then(|s| s.container_statuses.as_ref())
            .map(|v| v.iter().map(|c| c.restart_count).fold(0, i32::max))
            .unwrap_or(0);
        let sidecars: Vec<&str> = self
            .spec
            .as_ref()
            .and_then(|s| s.init_containers.as_ref())
            .map(|v| {
                v.iter()
                    .filter(|c| c.restart_policy.as_deref() == Some("Always"))
                    .map(|c| c.name.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let sidecar = status
            .and_then(|s| s.init_container_statuses.as_ref())
            .map(|v| {
                v.iter()
                    .filter(|c| sidecars.contains(&c.name.as_str()))
                    .map(|c| c.restart_count)
                    .fold(0, i32::max)
            })
            .unwrap_or(0);
        (regular, sidecar)
    }
}

/// Phase is `Succeeded` or `Failed`.
pub fn is_pod_terminal(pod: &impl PodLike) -> bool {
    matches!(pod.phase(), Some("Succeeded") | Some("Failed"))
}

/// Not terminal and no deletionTimestamp (upstream `IsPodActive`).
pub fn is_pod_active(pod: &impl PodLike) -> bool {
    !is_pod_terminal(pod) && pod.meta().deletion_timestamp.is_none()
}

/// Not terminal but has a deletionTimestamp (upstream `IsPodTerminating`).
pub fn is_pod_terminating(pod: &impl PodLike) -> bool {
    !is_pod_terminal(pod) && pod.meta().deletion_timestamp.is_some()
}

/// The pod's `Ready` condition has status `True`.
pub fn is_pod_ready(pod: &impl PodLike) -> bool {
    pod.condition("Ready").is_some_and(|c| c.status == "True")
}

/// When the pod became ready: the `Ready=True` condition's lastTransitionTime, or
/// `None` if not ready or unset (Go's zero time).
pub fn pod_ready_time(pod: &impl PodLike) -> Option<&Time> {
    pod.condition("Ready")
        .filter(|c| c.status == "True")
        .and_then(|c| c.last_transition_time)
}

/// Ready and ready for at least `min_ready_seconds` at `now` (upstream
/// `IsPodAvailable`, master: the boundary `ready + minReadySeconds == now` counts
/// as available). With `min_ready_seconds == 0` any ready pod is available; with
/// a positive value a ready pod without lastTransitionTime never is.
pub fn is_pod_available(pod: &impl PodLike, min_ready_seconds: i32, now: Timestamp) -> bool {
    if !is_pod_ready(pod) {
        return false;
    }
    if min_ready_seconds == 0 {
        return true;
    }
    let Some(ltt) = pod_ready_time(pod) else {
        return false;
    };
    match ltt
        .0
        .checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
    {
        Ok(available_at) => available_at <= now,
        Err(_) => false,
    }
}

/// The active pods, in input order (upstream `FilterActivePods`).
pub fn filter_active_pods<P: PodLike, R: Deref<Target = P> + Clone>(pods: &[R]) -> Vec<R> {
    pods.iter()
        .filter(|p| is_pod_active(&***p))
        .cloned()
        .collect()
}

/// The terminating pods, in input order (upstream `FilterTerminatingPods`).
pub fn filter_terminating_pods<P: PodLike, R: Deref<Target = P> + Clone>(pods: &[R]) -> Vec<R> {
    pods.iter()
        .filter(|p| is_pod_terminating(&***p))
        .cloned()
        .collect()
}

/// Number of terminating pods (upstream `CountTerminatingPods`).
pub fn count_terminating_pods<P: PodLike, R: Deref<Target = P>>(pods: &[R]) -> i32 {
    let n = pods.iter().filter(|p| is_pod_terminating(&***p)).count();
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `"<namespace>/<name>"`, the key used in deletion expectations (upstream `PodKey`).
pub fn pod_key(pod: &impl PodLike) -> String {
    let m = pod.meta();
    format!(
        "{}/{}",
        m.namespace.as_deref().unwrap_or_default(),
        m.name.as_deref().unwrap_or_default()
    )
}

/// The first owner reference with `controller: true` (upstream `GetControllerOf`).
pub fn controller_ref(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// Whether the object's controller reference points at `owner_uid`.
pub fn is_controlled_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    controller_ref(meta).is_some_and(|r| r.uid == owner_uid)
}

/// Why a deletion-cost annotation value was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid value {value:?} for annotation {POD_DELETION_COST_ANNOTATION}: must be a 32-bit integer"
)]
pub struct DeletionCostError {
    /// The offending value.
    pub value: String,
}

/// Parses a deletion-cost annotation value as upstream
/// `GetDeletionCostFromPodAnnotations`: a base-10 int32 whose first character is
/// `-` or `1`-`9` (or exactly `"0"`); `"+1"`, `"01"`, `""` are invalid.
pub fn parse_deletion_cost(value: &str) -> Result<i32, DeletionCostError> {
    let err = || DeletionCostError {
        value: value.to_string(),
    };
    let first_ok = match value.as_bytes().first() {
        Some(b'-') | Some(b'1'..=b'9') => true,
        Some(b'0') => value == "0",
        _ => false,
    };
    if !first_ok {
        return Err(err());
    }
    value.parse::<i32>().map_err(|_| err())
}

/// The pod's deletion cost: the parsed annotation, 0 when absent or invalid.
pub fn pod_deletion_cost(pod: &impl PodLike) -> i32 {
    pod.meta()
        .annotations
        .as_ref()
        .and_then(|a| a.get(POD_DELETION_COST_ANNOTATION))
        .map(|v| parse_deletion_cost(v).unwrap_or(0))
        .unwrap_or(0)
}

/// How long from `at` until a ready pod becomes available, `None` if it is not
/// ready, `min_ready_seconds <= 0`, the ready time is unset, or it is already
/// available at `at` (upstream `nextPodAvailabilityCheck`, master).
pub fn next_pod_availability_check(
    pod: &impl PodLike,
    min_ready_seconds: i32,
    at: Timestamp,
) -> Option<Duration> {
    if min_ready_seconds <= 0 || !is_pod_ready(pod) {
        return None;
    }
    let ltt = pod_ready_time(pod)?;
    let available_at = ltt
        .0
        .checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
        .ok()?;
    let d = available_at.duration_since(at);
    if d.is_positive() {
        Duration::try_from(d).ok()
    } else {
        None
    }
}

/// The soonest [`next_pod_availability_check`] among `pods` at `at`, with the
/// index of the pod it belongs to (the first pod wins ties).
pub fn find_min_next_pod_availability_simple_check<P: PodLike, R: Deref<Target = P>>(
    pods: &[R],
    min_ready_seconds: i32,
    at: Timestamp,
) -> Option<(Duration, usize)> {
    let mut best: Option<(Duration, usize)> = None;
    for (i, p) in pods.iter().enumerate() {
        if let Some(d) = next_pod_availability_check(&**p, min_ready_seconds, at)
            && best.is_none_or(|(b, _)| d < b)
        {
            best = Some((d, i));
        }
    }
    best
}

/// When to re-check availability after a status computed at `last_eval`: the
/// soonest pod's remaining time measured against `clock.now()` (zero if it has
/// become available meanwhile); `None` if no ready pod is waiting.
pub fn find_min_next_pod_availability_check<P: PodLike, R: Deref<Target = P>>(
    pods: &[R],
    min_ready_seconds: i32,
    last_eval: Timestamp,
    clock: &dyn Clock,
) -> Option<Duration> {
    let (_, idx) = find_min_next_pod_availability_simple_check(pods, min_ready_seconds, last_eval)?;
    let pod = &**pods.get(idx)?;
    Some(next_pod_availability_check(pod, min_ready_seconds, clock.now()).unwrap_or_default())
}

#[cfg(test)]
#[path = "pod_util_tests.rs"]
mod tests;
