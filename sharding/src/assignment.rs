//! What changes between two rings: the input to the handover protocol (docs/sharding.md).
//!
//! [`Assignment`] is one member's view (what it gains, loses and keeps); [`moves`] lists every
//! range that changes owner, with both owners. Both are pure functions of the two rings.

use crate::hash::hash_field;
use crate::range::{HASH_SPACE_END, ShardRange, ShardRanges};
use crate::ring::Ring;

/// One member's change of shard between a previous and a next ring.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    gained: ShardRanges,
    lost: ShardRanges,
    kept: ShardRanges,
}

/// What happens to one hash (one namespace) for a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Owned before and after.
    Kept,
    /// Owned after only: start on it once the handover allows.
    Gained,
    /// Owned before only: stop, drain and forget it before acknowledging the next ring.
    Lost,
    /// Owned neither before nor after.
    NotOwned,
}

impl Assignment {
    /// `member`'s change from `previous` to `next` (a member on only one ring gains or loses all).
    #[must_use]
    pub fn between(previous: &Ring, next: &Ring, member: &str) -> Self {
        Self::from_ranges(&previous.ranges(member), &next.ranges(member))
    }

    /// The change from owning `previous` to owning `next`.
    #[must_use]
    pub fn from_ranges(previous: &ShardRanges, next: &ShardRanges) -> Self {
        Self {
            gained: next.difference(previous),
            lost: previous.difference(next),
            kept: previous.intersection(next),
        }
    }

    /// Hashes owned after but not before.
    #[must_use]
    pub fn gained(&self) -> &ShardRanges {
        &self.gained
    }

    /// Hashes owned before but not after.
    #[must_use]
    pub fn lost(&self) -> &ShardRanges {
        &self.lost
    }

    /// Hashes owned before and after.
    #[must_use]
    pub fn kept(&self) -> &ShardRanges {
        &self.kept
    }

    /// Whether the member's shard is the same on both rings.
    #[must_use]
    pub fn is_unchanged(&self) -> bool {
        self.gained.is_empty() && self.lost.is_empty()
    }

    /// What happens to `hash`.
    #[must_use]
    pub fn change_of_hash(&self, hash: u64) -> Change {
        if self.kept.contains(hash) {
            Change::Kept
        } else if self.gained.contains(hash) {
            Change::Gained
        } else if self.lost.contains(hash) {
            Change::Lost
        } else {
            Change::NotOwned
        }
    }

    /// What happens to namespace `namespace`.
    #[must_use]
    pub fn change_of(&self, namespace: &str) -> Change {
        self.change_of_hash(hash_field(namespace))
    }
}

/// A range whose owner differs between two rings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// The hashes that move.
    pub range: ShardRange,
    /// The previous owner (`None`: the previous ring was empty).
    pub from: Option<String>,
    /// The next owner (`None`: the next ring is empty).
    pub to: Option<String>,
}

/// Every range that changes owner from `previous` to `next`, sorted and merged (adjacent ranges
/// with the same two owners are one move).
#[must_use]
pub fn moves(previous: &Ring, next: &Ring) -> Vec<Move> {
    let mut cuts: Vec<u64> = std::iter::once(0)
        .chain(previous.boundaries())
        .chain(next.boundaries())
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Move> = Vec::new();
    for (k, &start) in cuts.iter().enumerate() {
        // Neither ring has a boundary inside [start, end): both owners are constant on it.
        let end = cuts.get(k + 1).map_or(HASH_SPACE_END, |&e| u128::from(e));
        let (from, to) = (previous.owner(start), next.owner(start));
        if from == to {
            continue;
        }
        if let Some(last) = out.last_mut()
            && last.range.end() == u128::from(start)
            && last.from.as_deref() == from
            && last.to.as_deref() == to
            && let Ok(merged) = ShardRange::new(last.range.start(), end)
        {
            last.range = merged;
            continue;
        }
        if let Ok(range) = ShardRange::new(start, end) {
            out.push(Move {
                range,
                from: from.map(str::to_string),
                to: to.map(str::to_string),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_table() {
        let r = |s: u64, e: u128| ShardRange::new(s, e).unwrap();
        let a = Assignment::from_ranges(
            &ShardRanges::from_ranges([r(0, 100)]),
            &ShardRanges::from_ranges([r(50, 150)]),
        );
        assert_eq!(a.kept().as_slice(), [r(50, 100)]);
        assert_eq!(a.gained().as_slice(), [r(100, 150)]);
        assert_eq!(a.lost().as_slice(), [r(0, 50)]);
        let cases = [
            (0, Change::Lost),
            (49, Change::Lost),
            (50, Change::Kept),
            (99, Change::Kept),
            (100, Change::Gained),
            (149, Change::Gained),
            (150, Change::NotOwned),
        ];
        for (hash, want) in cases {
            assert_eq!(a.change_of_hash(hash), want, "hash {hash}");
        }
        assert!(!a.is_unchanged());
        assert!(Assignment::from_ranges(&ShardRanges::full(), &ShardRanges::full()).is_unchanged());
    }

    #[test]
    fn joining_and_leaving_the_ring() {
        let empty = Ring::new(Vec::<String>::new());
        let one = Ring::new(["a"]);
        let two = Ring::new(["a", "b"]);
        let join = Assignment::between(&empty, &one, "a");
        assert!(join.gained().is_full());
        let leave = Assignment::between(&two, &one, "b");
        assert_eq!(leave.lost(), &two.ranges("b"));
        assert!(leave.gained().is_empty() && leave.kept().is_empty());
        assert_eq!(
            Assignment::between(&two, &one, "a").gained(),
            &two.ranges("b")
        );
        assert_eq!(
            Assignment::between(&two, &two, "a").change_of("default"),
            match two.owner_of_namespace("default") {
                Some("a") => Change::Kept,
                _ => Change::NotOwned,
            }
        );
    }

    #[test]
    fn moves_from_and_to_an_empty_ring() {
        let empty = Ring::new(Vec::<String>::new());
        let one = Ring::new(["a"]);
        let all = moves(&empty, &one);
        assert_eq!(
            all,
            [Move {
                range: ShardRange::FULL,
                from: None,
                to: Some("a".into())
            }]
        );
        let all = moves(&one, &empty);
        assert_eq!(
            all,
            [Move {
                range: ShardRange::FULL,
                from: Some("a".into()),
                to: None
            }]
        );
        assert!(moves(&one, &one).is_empty());
    }
}
