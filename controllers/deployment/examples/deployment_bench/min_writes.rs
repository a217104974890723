//! The fewest controller writes a phase can take: the yardstick the benchmark reports against.

/// Fewest controller writes (Events excluded) that can take one Deployment of `r` replicas from
/// created to complete, assuming every sync happens at the ideal moment:
/// * Deployment controller: 1 ReplicaSet create (at full size: with no old pods the surge limit
///   allows all `r` at once) + 1 Deployment status write (the one that reports `r` available);
/// * ReplicaSet controller: `r` pod creates + 1 ReplicaSet status write (the one that reports `r`
///   ready and available).
pub(super) fn min_writes_create(r: u64) -> u64 {
    1 + 1 + r + 1
}

/// Fewest controller writes for one rollout of `r` replicas with maxSurge `s` and maxUnavailable
/// `u` (resolved): 1 new ReplicaSet create + the ReplicaSet scale updates (see
/// [`rolling_scale_steps`]) + 1 Deployment status write; for the ReplicaSet controller `r` pod
/// creates + `r` pod deletes + 1 status write on the new ReplicaSet (all ready) + 1 on the old
/// one (0 replicas; the Deployment's own `status.replicas` sums these, so it cannot reach `r`
/// before the old ReplicaSet reports 0).
pub(super) fn min_writes_rollout(r: u64, s: u64, u: u64) -> u64 {
    let (_, updates) = rolling_scale_steps(r, s, u);
    1 + updates + 1 + r + r + 1 + 1
}

/// The scale updates of an ideal RollingUpdate from an old ReplicaSet of `r` ready replicas:
/// returns (size the new ReplicaSet is created with, number of ReplicaSet scale updates after
/// that). Each sync does one step, as upstream `rolloutRolling` does (scale up the new
/// ReplicaSet, else scale down old ones), and every step waits until all pods are ready, which
/// lets it move the furthest: up to `r + s` pods in total, at least `r - u` available.
pub(super) fn rolling_scale_steps(r: u64, s: u64, u: u64) -> (u64, u64) {
    let max_total = r + s;
    let min_available = r.saturating_sub(u);
    let mut old = r;
    let mut new = (max_total - old).min(r);
    let create_size = new;
    let mut updates = 0;
    while old > 0 || new < r {
        // Scale up the new ReplicaSet as far as the surge allows.
        let up = (max_total.saturating_sub(old + new)).min(r - new);
        if up > 0 {
            new += up;
            updates += 1;
            continue;
        }
        // Otherwise scale the old one down as far as availability allows (all pods ready).
        let down = (old + new).saturating_sub(min_available).min(old);
        if down == 0 {
            // maxSurge and maxUnavailable both 0 cannot happen (validation).
            break;
        }
        old -= down;
        updates += 1;
    }
    (create_size, updates)
}

/// Resolves the default 25% fenceposts: surge rounds up, unavailable rounds down; both 0 is
/// not allowed (unavailable becomes 1), as upstream `ResolveFenceposts`.
pub(super) fn default_fenceposts(r: u64) -> (u64, u64) {
    let s = (r * 25).div_ceil(100);
    let u = r * 25 / 100;
    if s == 0 && u == 0 { (0, 1) } else { (s, u) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_rolling_update_of_ten_with_default_fenceposts() {
        // Create the new RS at 3 (surge); old 10→5 once those 3 are ready; new 3→8; old 5→0;
        // new 8→10.
        assert_eq!(default_fenceposts(10), (3, 2));
        assert_eq!(rolling_scale_steps(10, 3, 2), (3, 4));
        assert_eq!(min_writes_rollout(10, 3, 2), 1 + 4 + 1 + 10 + 10 + 2);
    }
}
