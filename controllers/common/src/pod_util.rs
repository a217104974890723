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
use crate::pod::PodView;

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
mod tests {
    use super::*;
    use crate::clock::FakeClock;
    use crate::pod::{PodConditionView, PodView};
    use std::sync::Arc;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    fn pod(name: &str, phase: &str) -> PodView {
        let mut p = PodView::default();
        p.metadata.name = Some(name.into());
        p.metadata.namespace = Some("default".into());
        p.status.phase = Some(phase.into());
        p
    }

    fn ready_at(mut p: PodView, ltt: Option<Timestamp>) -> PodView {
        p.status.conditions.push(PodConditionView {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: ltt.map(Time),
        });
        p
    }

    /// Upstream `TestActivePodFiltering`.
    #[test]
    fn test_active_pod_filtering() {
        let pods: Vec<Arc<PodView>> = vec![
            Arc::new(pod("pod-1", "Succeeded")),
            Arc::new(pod("pod-2", "Failed")),
            Arc::new(pod("pod-3", "")),
            Arc::new(pod("pod-4", "")),
            Arc::new(pod("pod-5", "")),
        ];
        let names: Vec<_> = filter_active_pods(&pods)
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["pod-3", "pod-4", "pod-5"]);
    }

    /// Upstream `TestCountTerminatingPods`.
    #[test]
    fn test_count_terminating_pods() {
        let deleting = |mut p: PodView| {
            p.metadata.deletion_timestamp = Some(Time(t(0)));
            p
        };
        let pods: Vec<Arc<PodView>> = vec![
            Arc::new(pod("a", "Succeeded")),
            Arc::new(pod("b", "Failed")),
            Arc::new(deleting(pod("c", "Pending"))),
            Arc::new(deleting(pod("d", "Running"))),
            Arc::new(pod("e", "Running")),
            Arc::new(pod("f", "Running")),
            Arc::new(pod("g", "Running")),
        ];
        assert_eq!(count_terminating_pods(&pods), 2);
        assert_eq!(filter_terminating_pods(&pods).len(), 2);
        assert_eq!(filter_active_pods(&pods).len(), 3);
    }

    /// Spec derived vector D2.
    #[test]
    fn deletion_cost_parsing() {
        let cases: &[(Option<&str>, i32)] = &[
            (None, 0),
            (Some("10"), 10),
            (Some("-10"), -10),
            (Some("0"), 0),
            (Some("-0"), 0),
            (Some("+10"), 0),
            (Some("010"), 0),
            (Some(""), 0),
            (Some("abc"), 0),
            (Some("1.5"), 0),
            (Some("2147483647"), 2_147_483_647),
            (Some("2147483648"), 0),
            (Some("-2147483648"), -2_147_483_648),
            (Some("-"), 0),
        ];
        for (value, want) in cases {
            let mut p = pod("p", "Running");
            if let Some(v) = value {
                p.metadata.annotations = Some(
                    [(POD_DELETION_COST_ANNOTATION.to_string(), v.to_string())]
                        .into_iter()
                        .collect(),
                );
            }
            assert_eq!(pod_deletion_cost(&p), *want, "value {value:?}");
        }
        assert!(parse_deletion_cost("+10").is_err());
        assert_eq!(parse_deletion_cost("-5"), Ok(-5));
    }

    /// Spec derived vector D3 and upstream `IsPodAvailable` table.
    #[test]
    fn availability() {
        let now = t(100);
        let cases: &[(&str, PodView, i32, bool)] = &[
            ("not ready", pod("p", "Running"), 0, false),
            (
                "ready, m=0",
                ready_at(pod("p", "Running"), Some(now)),
                0,
                true,
            ),
            (
                "ready zero ltt, m=0",
                ready_at(pod("p", "Running"), None),
                0,
                true,
            ),
            (
                "ready zero ltt, m=1",
                ready_at(pod("p", "Running"), None),
                1,
                false,
            ),
            (
                "boundary counts",
                ready_at(pod("p", "Running"), Some(t(95))),
                5,
                true,
            ),
            (
                "just short",
                ready_at(
                    pod("p", "Running"),
                    Some(now.checked_sub(SignedDuration::from_millis(4999)).unwrap()),
                ),
                5,
                false,
            ),
            (
                "long ago",
                ready_at(pod("p", "Running"), Some(t(0))),
                5,
                true,
            ),
        ];
        for (name, p, m, want) in cases {
            assert_eq!(is_pod_available(p, *m, now), *want, "{name}");
        }
    }

    #[test]
    fn ready_requires_true_status() {
        let mut p = pod("p", "Running");
        p.status.conditions.push(PodConditionView {
            type_: "Ready".into(),
            status: "False".into(),
            last_transition_time: None,
        });
        assert!(!is_pod_ready(&p));
        assert!(pod_ready_time(&p).is_none());
        let p = ready_at(pod("p", "Running"), Some(t(3)));
        assert!(is_pod_ready(&p));
        assert_eq!(pod_ready_time(&p), Some(&Time(t(3))));
    }

    /// Upstream `TestNextPodAvailabilityCheck` (master).
    #[test]
    fn test_next_pod_availability_check() {
        let now = t(0);
        let mut not_ready = pod("p", "Running");
        not_ready.status.conditions.push(PodConditionView {
            type_: "Ready".into(),
            status: "False".into(),
            last_transition_time: Some(Time(now)),
        });
        let cases: &[(&str, PodView, i32, Option<Duration>)] = &[
            ("not ready", not_ready, 0, None),
            (
                "ready m0",
                ready_at(pod("p", "Running"), Some(now)),
                0,
                None,
            ),
            ("zero ltt m1", ready_at(pod("p", "Running"), None), 1, None),
            (
                "ready now m1",
                ready_at(pod("p", "Running"), Some(now)),
                1,
                Some(Duration::from_secs(1)),
            ),
            (
                "ready 20s ago m30",
                ready_at(pod("p", "Running"), Some(t(-20))),
                30,
                Some(Duration::from_secs(10)),
            ),
            (
                "ready 51s ago m50",
                ready_at(pod("p", "Running"), Some(t(-51))),
                50,
                None,
            ),
        ];
        for (name, p, m, want) in cases {
            assert_eq!(next_pod_availability_check(p, *m, now), *want, "{name}");
        }
    }

    /// Upstream `TestFindMinNextPodAvailabilitySimpleCheck` and
    /// `TestFindMinNextPodAvailability` (master).
    #[test]
    fn test_find_min_next_pod_availability() {
        let now = t(0);
        let unready = pod("u", "Running");
        let ready = |s: i64| Arc::new(ready_at(pod("r", "Running"), Some(t(s))));
        let empty: Vec<Arc<PodView>> = vec![];
        assert_eq!(
            find_min_next_pod_availability_simple_check(&empty, 0, now),
            None
        );
        let two_unready = vec![Arc::new(unready.clone()), Arc::new(unready.clone())];
        assert_eq!(
            find_min_next_pod_availability_simple_check(&two_unready, 0, now),
            None
        );
        assert_eq!(
            find_min_next_pod_availability_simple_check(&[ready(0), ready(0)], 0, now),
            None
        );
        let mixed = vec![
            Arc::new(unready.clone()),
            ready(-2),
            ready(0),
            ready(-4),
            Arc::new(unready.clone()),
        ];
        assert_eq!(
            find_min_next_pod_availability_simple_check(&mixed, 10, now),
            Some((Duration::from_secs(6), 3))
        );
        let boundary = vec![
            Arc::new(unready.clone()),
            ready(-15),
            ready(-11),
            ready(-10),
            Arc::new(unready),
        ];
        assert_eq!(
            find_min_next_pod_availability_simple_check(&boundary, 10, now),
            None
        );

        let clock = FakeClock::new(t(2));
        assert_eq!(
            find_min_next_pod_availability_check(&mixed, 10, now, &clock),
            Some(Duration::from_secs(4))
        );
        clock.set(t(7));
        assert_eq!(
            find_min_next_pod_availability_check(&mixed, 10, now, &clock),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn controller_ref_picks_first_controller() {
        let mk = |uid: &str, controller: Option<bool>| OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: uid.into(),
            uid: uid.into(),
            controller,
            block_owner_deletion: None,
        };
        let mut meta = ObjectMeta::default();
        assert!(controller_ref(&meta).is_none());
        meta.owner_references = Some(vec![
            mk("a", None),
            mk("b", Some(true)),
            mk("c", Some(true)),
        ]);
        assert_eq!(controller_ref(&meta).unwrap().uid, "b");
        assert!(is_controlled_by(&meta, "b"));
        assert!(!is_controlled_by(&meta, "c"));
    }

    #[test]
    fn full_pod_and_view_agree() {
        let json = include_str!("../tests/data/pod.json");
        let full: Pod = serde_json::from_str(json).unwrap();
        let view: PodView = serde_json::from_str(json).unwrap();
        assert_eq!(full.max_container_restarts(), (2, 1));
        assert_eq!(view.max_container_restarts(), (2, 1));
        assert_eq!(is_pod_ready(&full), is_pod_ready(&view));
        assert_eq!(pod_ready_time(&full), pod_ready_time(&view));
        assert_eq!(pod_deletion_cost(&full), 10);
        assert_eq!(pod_deletion_cost(&view), 10);
        assert_eq!(full.node_name(), view.node_name());
        assert_eq!(pod_key(&view), "default/web-7c5ddbdf54-x2x7k");
        assert!(is_pod_terminating(&view) && is_pod_terminating(&full));
    }
}
