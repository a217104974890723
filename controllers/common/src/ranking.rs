//! Which pods to delete first when scaling down (upstream `ActivePodsWithRanks`
//! in `pkg/controller/controller_utils.go`, and `getPodsToDelete` /
//! `getIndirectlyRelatedPods` in `pkg/controller/replicaset/replica_set.go`).
//!
//! [`pod_deletion_less`] answers "should pod *i* be deleted before pod *j*?" by
//! applying these rules in order, the first that distinguishes the pods deciding:
//!
//! 1. unassigned (empty `spec.nodeName`) before assigned;
//! 2. phase `Pending` < `Unknown` < `Running` (other phases count as `Pending`);
//! 3. not ready before ready;
//! 4. lower `controller.kubernetes.io/pod-deletion-cost` first (gate `PodDeletionCost`, on);
//! 5. higher rank (more related active pods on the same node) first;
//! 6. both ready: more recently ready first, compared in log2 buckets of
//!    nanoseconds since ready, UID as tie-break (formerly the `LogarithmicScaleDown` gate, now
//!    unconditional);
//!    an unset ready time sorts first;
//! 7. more container restarts first (regular containers, then sidecars);
//! 8. newer creation first, compared like rule 6;
//! 9. otherwise equal.

use std::collections::{HashMap, HashSet};
use std::ops::Deref;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::pod_util::{PodLike, is_pod_active, is_pod_ready, pod_deletion_cost, pod_ready_time};

/// Feature switches that change the ordering (defaults = upstream defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankingOptions {
    /// Gate `PodDeletionCost` (beta, default on): apply rule 4.
    pub pod_deletion_cost: bool,
}

impl Default for RankingOptions {
    fn default() -> Self {
        Self {
            pod_deletion_cost: true,
        }
    }
}

fn phase_ordinal(phase: Option<&str>) -> u8 {
    match phase {
        Some("Unknown") => 1,
        Some("Running") => 2,
        _ => 0,
    }
}

/// ⌊log2(d)⌋ for a duration `d` in nanoseconds, −1 for `d <= 0`: Go's
/// `int64(math.Log2(float64(d)))`, reproduced with Go's algorithm (split into
/// mantissa and exponent, exact for powers of two) so bucket edges match.
pub fn log_rank(d_nanos: i128) -> i64 {
    if d_nanos <= 0 {
        return -1;
    }
    go_log2(d_nanos as f64) as i64
}

/// Go's `math.Log2` for positive, finite, normal `x`.
fn go_log2(x: f64) -> f64 {
    const EXP_MASK: u64 = 0x7ff << 52;
    let bits = x.to_bits();
    let exp = ((bits & EXP_MASK) >> 52) as i64 - 1022;
    let frac = f64::from_bits((bits & !EXP_MASK) | (1022 << 52));
    if frac == 0.5 {
        return (exp - 1) as f64;
    }
    frac.ln() * (1.0 / std::f64::consts::LN_2) + exp as f64
}

fn logarithmic_rank_diff(t1: Timestamp, t2: Timestamp, now: Timestamp) -> i64 {
    let d1 = now.duration_since(t1).as_nanos();
    let d2 = now.duration_since(t2).as_nanos();
    log_rank(d1) - log_rank(d2)
}

/// `afterOrZero`: an unset time counts as after any set time; otherwise `t1 > t2`.
fn after_or_zero(t1: Option<&Time>, t2: Option<&Time>) -> bool {
    match (t1, t2) {
        (Some(a), Some(b)) => a.0 > b.0,
        (None, _) => true,
        (Some(_), None) => false,
    }
}

fn compare_times<P: PodLike>(
    t_i: Option<&Time>,
    t_j: Option<&Time>,
    now: Option<Timestamp>,
    pi: &P,
    pj: &P,
) -> bool {
    match (now, t_i, t_j) {
        (Some(now), Some(a), Some(b)) => {
            let diff = logarithmic_rank_diff(a.0, b.0, now);
            if diff == 0 {
                let ui = pi.meta().uid.as_deref().unwrap_or_default();
                let uj = pj.meta().uid.as_deref().unwrap_or_default();
                ui < uj
            } else {
                diff < 0
            }
        }
        _ => after_or_zero(t_i, t_j),
    }
}

/// Whether `pi` (with rank `ri`) should be deleted before `pj` (rank `rj`);
/// `now` is the reference for the logarithmic time comparisons (`None` compares
/// the raw timestamps, as upstream does for a zero `Now`).
pub fn pod_deletion_less<P: PodLike>(
    pi: &P,
    ri: i32,
    pj: &P,
    rj: i32,
    now: Option<Timestamp>,
    opts: RankingOptions,
) -> bool {
    // 1. Unassigned < assigned.
    let ni = pi.node_name().unwrap_or_default();
    let nj = pj.node_name().unwrap_or_default();
    if ni != nj && (ni.is_empty() || nj.is_empty()) {
        return ni.is_empty();
    }
    // 2. Pending < Unknown < Running.
    let (oi, oj) = (phase_ordinal(pi.phase()), phase_ordinal(pj.phase()));
    if oi != oj {
        return oi < oj;
    }
    // 3. Not ready < ready.
    let (ready_i, ready_j) = (is_pod_ready(pi), is_pod_ready(pj));
    if ready_i != ready_j {
        return !ready_i;
    }
    // 4. Lower deletion cost first.
    if opts.pod_deletion_cost {
        let (ci, cj) = (pod_deletion_cost(pi), pod_deletion_cost(pj));
        if ci != cj {
            return ci < cj;
        }
    }
    // 5. Doubled up (higher rank) first.
    if ri != rj {
        return ri > rj;
    }
    // 6. Ready for less time first.
    if ready_i && ready_j {
        let (ti, tj) = (pod_ready_time(pi), pod_ready_time(pj));
        if ti != tj {
            return compare_times(ti, tj, now, pi, pj);
        }
    }
    // 7. More restarts first.
    let (regular_i, sidecar_i) = pi.max_container_restarts();
    let (regular_j, sidecar_j) = pj.max_container_restarts();
    if regular_i != regular_j {
        return regular_i > regular_j;
    }
    if sidecar_i != sidecar_j {
        return sidecar_i > sidecar_j;
    }
    // 8. Newer (or unset) creation first.
    let ci = pi.meta().creation_timestamp.as_ref();
    let cj = pj.meta().creation_timestamp.as_ref();
    if ci != cj {
        return compare_times(ci, cj, now, pi, pj);
    }
    false
}

/// Sorts `pods` (with parallel `ranks`) so that the pods to delete first come
/// first. Uses a merge sort driven only by `less`, so an inconsistent ordering
/// can never panic (unlike `slice::sort_by`, which may on non-total orders).
///
/// `ranks` must have the same length as `pods`; missing ranks count as 0.
pub fn sort_active_pods_with_ranks<P: PodLike, R: Deref<Target = P> + Clone>(
    pods: &mut [R],
    ranks: &mut [i32],
    now: Option<Timestamp>,
    opts: RankingOptions,
) {
    let mut idx: Vec<usize> = (0..pods.len()).collect();
    let rank = |i: usize| ranks.get(i).copied().unwrap_or(0);
    merge_sort_by_less(&mut idx, &mut |&a: &usize, &b: &usize| {
        pod_deletion_less(&*pods[a], rank(a), &*pods[b], rank(b), now, opts)
    });
    let sorted_pods: Vec<R> = idx.iter().map(|&i| pods[i].clone()).collect();
    let sorted_ranks: Vec<i32> = idx.iter().map(|&i| rank(i)).collect();
    pods.clone_from_slice(&sorted_pods);
    for (slot, r) in ranks.iter_mut().zip(sorted_ranks) {
        *slot = r;
    }
}

fn merge_sort_by_less<T: Copy>(v: &mut [T], less: &mut impl FnMut(&T, &T) -> bool) {
    if v.len() <= 1 {
        return;
    }
    let mid = v.len() / 2;
    merge_sort_by_less(&mut v[..mid], less);
    merge_sort_by_less(&mut v[mid..], less);
    let (mut i, mut j) = (0, mid);
    let mut out = Vec::with_capacity(v.len());
    while i < mid && j < v.len() {
        // Take from the right only if strictly less: keeps the sort stable.
        if less(&v[j], &v[i]) {
            out.push(v[j]);
            j += 1;
        } else {
            out.push(v[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&v[i..mid]);
    out.extend_from_slice(&v[j..]);
    v.copy_from_slice(&out);
}

/// Ranks each pod by the number of active `related` pods on its node
/// (unscheduled pods share the node name `""`), upstream
/// `getPodsRankedByRelatedPodsOnSameNode`.
pub fn rank_by_related_pods_on_same_node<P, R>(pods: &[R], related: &[R]) -> Vec<i32>
where
    P: PodLike,
    R: Deref<Target = P>,
{
    let mut on_node: HashMap<&str, i32> = HashMap::new();
    for p in related {
        if is_pod_active(&**p) {
            *on_node
                .entry(p.node_name().unwrap_or_default())
                .or_default() += 1;
        }
    }
    pods.iter()
        .map(|p| {
            on_node
                .get(p.node_name().unwrap_or_default())
                .copied()
                .unwrap_or(0)
        })
        .collect()
}

/// The `diff` pods to delete out of `filtered` (the controller's active pods),
/// upstream `getPodsToDelete`: when fewer than all are needed the pods are
/// ranked by co-location with `related` and sorted by [`pod_deletion_less`];
/// when all are needed the input order is kept.
pub fn get_pods_to_delete<P, R>(
    filtered: &[R],
    related: &[R],
    diff: usize,
    now: Timestamp,
    opts: RankingOptions,
) -> Vec<R>
where
    P: PodLike,
    R: Deref<Target = P> + Clone,
{
    let mut pods = filtered.to_vec();
    if diff < pods.len() {
        let mut ranks = rank_by_related_pods_on_same_node(&pods, related);
        sort_active_pods_with_ranks(&mut pods, &mut ranks, Some(now), opts);
    }
    pods.truncate(diff);
    pods
}

/// Pods selected by any of `related_sets` (e.g. all ReplicaSets of the same
/// Deployment), de-duplicated by UID, upstream `getIndirectlyRelatedPods`.
/// `pods_selected_by` lists the pods a set's selector matches, or `None` when its
/// selector is invalid (that set is skipped).
pub fn get_indirectly_related_pods<S, P, R>(
    related_sets: &[S],
    mut pods_selected_by: impl FnMut(&S) -> Option<Vec<R>>,
) -> Vec<R>
where
    P: PodLike,
    R: Deref<Target = P>,
{
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for set in related_sets {
        let Some(pods) = pods_selected_by(set) else {
            continue;
        };
        for p in pods {
            let uid = p.meta().uid.clone().unwrap_or_default();
            if seen.insert(uid) {
                out.push(p);
            } else {
                tracing::trace!(pod = ?p.meta().name, "pod is selected by more than one related set");
            }
        }
    }
    out
}

/// For each ready pod among the first `diff` of `filtered`, its age divided by
/// the age of the youngest ready pod (both in whole milliseconds, integer
/// division as upstream), for the `sorting_deletion_age_ratio` histogram. Pods
/// whose youngest-age denominator would be zero are skipped.
pub fn sorting_deletion_age_ratios<P, R>(filtered: &[R], diff: usize, now: Timestamp) -> Vec<f64>
where
    P: PodLike,
    R: Deref<Target = P>,
{
    let created = |p: &P| p.meta().creation_timestamp.as_ref().map(|t| t.0);
    let youngest = filtered
        .iter()
        .filter(|p| is_pod_ready(&***p))
        .filter_map(|p| created(p))
        .max();
    let youngest_age_ms = youngest
        .map(|y| now.duration_since(y).as_millis())
        .unwrap_or_else(|| now.duration_since(Timestamp::UNIX_EPOCH).as_millis());
    if youngest_age_ms == 0 {
        return Vec::new();
    }
    filtered
        .iter()
        .take(diff)
        .filter(|p| is_pod_ready(&***p))
        .map(|p| {
            let age_ms = created(p)
                .map(|c| now.duration_since(c).as_millis())
                .unwrap_or_else(|| now.duration_since(Timestamp::UNIX_EPOCH).as_millis());
            (age_ms / youngest_age_ms) as f64
        })
        .collect()
}

#[cfg(test)]
#[path = "ranking_tests.rs"]
mod tests;
