//! Properties of the ring and of what changes between rings.

use std::num::NonZeroU32;

use kcm_sharding::{
    Assignment, HASH_SPACE_END, Ring, ShardKey, ShardRange, ShardRanges, hash_field, moves,
};
use proptest::prelude::*;

fn member_names() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[a-z0-9-]{1,12}", 1..8)
}

fn vnodes() -> impl Strategy<Value = NonZeroU32> {
    (1u32..48).prop_map(|v| NonZeroU32::new(v).unwrap_or(NonZeroU32::MIN))
}

/// 10,000 namespace names like a real cluster's: team-app-env combinations.
fn namespaces() -> Vec<String> {
    let teams = [
        "payments", "search", "ads", "identity", "billing", "mobile", "web", "data", "ml", "infra",
    ];
    let envs = [
        "dev", "test", "qa", "staging", "prod", "prod-eu", "prod-us", "perf", "sandbox", "canary",
    ];
    let mut out = Vec::new();
    for app in 0..100 {
        for t in teams {
            for e in envs {
                out.push(format!("{t}-app{app}-{e}"));
            }
        }
    }
    out
}

/// Hashes worth probing on a ring: 0, the last hash, and both sides of every range boundary.
fn probes(ring: &Ring) -> Vec<u64> {
    let mut out = vec![0, u64::MAX];
    for (_, ranges) in ring.shards() {
        for r in &ranges {
            out.push(r.start());
            out.push(r.start().wrapping_sub(1));
            if let Ok(last) = u64::try_from(r.end() - 1) {
                out.push(last);
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn shards_partition_the_hash_space(names in member_names(), vn in vnodes()) {
        let ring = Ring::with_vnodes(names, vn);
        let mut all: Vec<ShardRange> = ring.shards().into_iter().flat_map(|(_, r)| r.as_slice().to_vec()).collect();
        all.sort();
        // Sorted ranges of all members tile [0, 2^64): no gap, no overlap.
        let mut next: u128 = 0;
        for r in &all {
            prop_assert_eq!(u128::from(r.start()), next);
            next = r.end();
        }
        prop_assert_eq!(next, HASH_SPACE_END);
        let total: u128 = ring.shards().iter().map(|(_, r)| r.width()).sum();
        prop_assert_eq!(total, HASH_SPACE_END);
    }

    #[test]
    fn owner_agrees_with_ranges_and_filters(names in member_names(), vn in vnodes(), extra in any::<Vec<u64>>()) {
        let ring = Ring::with_vnodes(names, vn);
        let shards = ring.shards();
        let mut hashes = probes(&ring);
        hashes.extend(extra);
        for h in hashes {
            let owner = ring.owner(h);
            prop_assert!(owner.is_some());
            let holders: Vec<&str> = shards.iter().filter(|(_, r)| r.contains(h)).map(|(m, _)| *m).collect();
            prop_assert_eq!(holders, vec![owner.unwrap_or_default()], "hash {:#x}", h);
            for m in ring.members() {
                let filter = ring.filter(m, ShardKey::Namespace);
                prop_assert_eq!(filter.matches_hash(h), owner == Some(m.as_str()));
            }
        }
    }

    #[test]
    fn ranges_are_minimal(names in member_names(), vn in vnodes()) {
        let ring = Ring::with_vnodes(names, vn);
        for (_, ranges) in ring.shards() {
            // Normalized: no two ranges touch (they would have been merged).
            for w in ranges.as_slice().windows(2) {
                prop_assert!(w[0].end() < u128::from(w[1].start()));
            }
            prop_assert!(ranges.len() <= vn.get() as usize + 1);
        }
    }

    #[test]
    fn the_ring_depends_only_on_the_member_set(names in member_names(), vn in vnodes(), seed in any::<u64>()) {
        let mut shuffled = names.clone();
        let n = shuffled.len();
        shuffled.rotate_left((seed as usize) % n);
        shuffled.push(names[0].clone());
        let a = Ring::with_vnodes(names, vn);
        let b = Ring::with_vnodes(shuffled, vn);
        prop_assert_eq!(a.fingerprint(), b.fingerprint());
        prop_assert_eq!(a.shards(), b.shards());
    }

    #[test]
    fn a_join_moves_keys_only_to_the_new_member(names in member_names(), new in "[a-z0-9-]{1,12}", vn in vnodes()) {
        prop_assume!(!names.contains(&new));
        let before = Ring::with_vnodes(names.clone(), vn);
        let after = Ring::with_vnodes(names.iter().cloned().chain([new.clone()]), vn);
        for m in moves(&before, &after) {
            prop_assert_eq!(m.to.as_deref(), Some(new.as_str()));
        }
        check_moves_match_assignments(&before, &after);
        // The newcomer's shard is exactly what moved.
        let moved: ShardRanges = moves(&before, &after).into_iter().map(|m| m.range).collect();
        prop_assert_eq!(moved, after.ranges(&new));
    }

    #[test]
    fn a_leave_moves_keys_only_from_the_leaving_member(names in member_names(), vn in vnodes()) {
        let before = Ring::with_vnodes(names.clone(), vn);
        let leaving = before.members()[0].clone();
        let after = Ring::with_vnodes(names.iter().filter(|n| **n != leaving).cloned(), vn);
        for m in moves(&before, &after) {
            prop_assert_eq!(m.from.as_deref(), Some(leaving.as_str()));
        }
        check_moves_match_assignments(&before, &after);
        let moved: ShardRanges = moves(&before, &after).into_iter().map(|m| m.range).collect();
        prop_assert_eq!(moved, before.ranges(&leaving));
    }

    #[test]
    fn arbitrary_changes_match_assignments(a in member_names(), b in member_names(), vn in vnodes()) {
        let (before, after) = (Ring::with_vnodes(a, vn), Ring::with_vnodes(b, vn));
        check_moves_match_assignments(&before, &after);
    }
}

/// `moves` and every member's `Assignment` describe the same change, and moves are exact.
fn check_moves_match_assignments(before: &Ring, after: &Ring) {
    let all = moves(before, after);
    for w in all.windows(2) {
        assert!(
            w[0].range.end() <= u128::from(w[1].range.start()),
            "moves sorted and disjoint"
        );
    }
    for m in &all {
        for h in [
            m.range.start(),
            u64::try_from(m.range.end() - 1).unwrap_or(u64::MAX),
        ] {
            assert_eq!(before.owner(h), m.from.as_deref());
            assert_eq!(after.owner(h), m.to.as_deref());
        }
    }
    let mut members: Vec<&String> = before.members().iter().chain(after.members()).collect();
    members.sort();
    members.dedup();
    for member in members {
        let a = Assignment::between(before, after, member);
        let gained: ShardRanges = all
            .iter()
            .filter(|m| m.to.as_ref() == Some(member))
            .map(|m| m.range)
            .collect();
        let lost: ShardRanges = all
            .iter()
            .filter(|m| m.from.as_ref() == Some(member))
            .map(|m| m.range)
            .collect();
        assert_eq!(a.gained(), &gained, "gained by {member}");
        assert_eq!(a.lost(), &lost, "lost by {member}");
        assert_eq!(
            a.kept(),
            &before.ranges(member).intersection(&after.ranges(member))
        );
    }
}

/// Deterministic member sets of pod-like names (`kcm-0-<i>-<set>`).
fn member_set(set: usize, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("kcm-{set}-{i}")).collect()
}

#[test]
fn one_member_joining_or_leaving_moves_about_one_nth_of_the_namespaces() {
    let hashes: Vec<u64> = namespaces().iter().map(|n| hash_field(n)).collect();
    assert_eq!(hashes.len(), 10_000);
    for n in [2usize, 3, 5, 8] {
        let (mut join_sum, mut leave_sum) = (0.0, 0.0);
        let sets = 20;
        for set in 0..sets {
            let names = member_set(set, n + 1);
            let small = Ring::new(names[..n].to_vec());
            let big = Ring::new(names.clone());
            let moved = hashes
                .iter()
                .filter(|&&h| small.owner(h) != big.owner(h))
                .count();
            // Measured as a multiple of the ideal 1/(n+1): one set may be off by the
            // newcomer's shard (vnode noise), the average over sets may not.
            let ratio = moved as f64 / hashes.len() as f64 * (n + 1) as f64;
            assert!(
                (0.3..2.0).contains(&ratio),
                "join n={n} set={set}: {ratio:.2} x ideal"
            );
            join_sum += ratio;

            let left = Ring::new(names[1..n].to_vec());
            let moved = hashes
                .iter()
                .filter(|&&h| small.owner(h) != left.owner(h))
                .count();
            let ratio = moved as f64 / hashes.len() as f64 * n as f64;
            assert!(
                (0.3..2.0).contains(&ratio),
                "leave n={n} set={set}: {ratio:.2} x ideal"
            );
            leave_sum += ratio;
        }
        let (join, leave) = (join_sum / sets as f64, leave_sum / sets as f64);
        eprintln!("{n} members: join moves {join:.3} x 1/(n+1), leave moves {leave:.3} x 1/n");
        assert!(
            (0.85..1.15).contains(&join),
            "join n={n}: mean {join:.3} x ideal"
        );
        assert!(
            (0.85..1.15).contains(&leave),
            "leave n={n}: mean {leave:.3} x ideal"
        );
    }
}

#[test]
fn default_vnodes_balance_the_namespaces() {
    // The largest member's namespaces over a fair share, averaged over member sets: what
    // DEFAULT_VNODES was chosen for (see the README's measurements).
    let hashes: Vec<u64> = namespaces().iter().map(|n| hash_field(n)).collect();
    for (n, bound) in [(2usize, 1.12), (3, 1.15), (5, 1.22), (10, 1.30)] {
        let sets = 20;
        let mut sum = 0.0;
        for set in 0..sets {
            let ring = Ring::new(member_set(100 + set, n));
            let mut counts = vec![0usize; n];
            for &h in &hashes {
                let owner = ring.owner(h).unwrap_or_default();
                let i = ring.members().iter().position(|m| m == owner).unwrap_or(0);
                counts[i] += 1;
            }
            sum += *counts.iter().max().unwrap_or(&0) as f64 * n as f64 / hashes.len() as f64;
        }
        let mean = sum / sets as f64;
        eprintln!("{n} members: largest shard {mean:.3} x fair");
        assert!(mean < bound, "{n} members: largest shard {mean:.3} x fair");
    }
}
