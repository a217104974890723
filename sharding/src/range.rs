//! Half-open ranges of the 64-bit hash space, and normalized sets of them.
//!
//! A shard selector's `shardRange(field, start, end)` selects the hashes `h` with
//! `start <= h < end`, where `end` may be 2^64 (written `0x10000000000000000`) so that the last
//! hash, `0xffffffffffffffff`, can be included. [`ShardRange`] keeps `end` as a `u128` for that
//! reason; [`ShardRanges`] is a sorted set of disjoint, non-adjacent ranges (adjacent ones are
//! merged), the form a ring hands out and a selector is built from.

use std::fmt;

/// The exclusive end of the hash space: 2^64.
pub const HASH_SPACE_END: u128 = 1 << 64;

/// A range that is not a non-empty part of the hash space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid shard range [{start:#x}, {end:#x}): need start < end <= 2^64")]
pub struct InvalidRange {
    /// The rejected start.
    pub start: u64,
    /// The rejected end.
    pub end: u128,
}

/// The hashes `start <= h < end` of the 64-bit hash space, never empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShardRange {
    start: u64,
    end: u128,
}

impl ShardRange {
    /// The whole hash space, `[0, 2^64)`.
    pub const FULL: ShardRange = ShardRange {
        start: 0,
        end: HASH_SPACE_END,
    };

    /// `[start, end)`; `end` may be [`HASH_SPACE_END`]. Errors if the range would be empty or
    /// reach past 2^64 (the server rejects both).
    pub fn new(start: u64, end: u128) -> Result<Self, InvalidRange> {
        if u128::from(start) < end && end <= HASH_SPACE_END {
            Ok(Self { start, end })
        } else {
            Err(InvalidRange { start, end })
        }
    }

    /// `[start, 2^64)`: from `start` to the end of the hash space.
    #[must_use]
    pub const fn to_end(start: u64) -> Self {
        Self {
            start,
            end: HASH_SPACE_END,
        }
    }

    /// The inclusive lower bound.
    #[must_use]
    pub const fn start(&self) -> u64 {
        self.start
    }

    /// The exclusive upper bound, at most 2^64.
    #[must_use]
    pub const fn end(&self) -> u128 {
        self.end
    }

    /// Whether `hash` lies in the range: `start <= hash < end`, the server's test.
    #[must_use]
    pub const fn contains(&self, hash: u64) -> bool {
        self.start <= hash && (hash as u128) < self.end
    }

    /// How many hashes the range holds (at least 1, at most 2^64).
    #[must_use]
    pub const fn width(&self) -> u128 {
        self.end - self.start as u128
    }

    /// The fraction of the hash space the range holds, in `(0, 1]`.
    #[must_use]
    pub fn fraction(&self) -> f64 {
        self.width() as f64 / HASH_SPACE_END as f64
    }
}

impl fmt::Display for ShardRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{:#018x}, {:#018x})", self.start, self.end)
    }
}

/// A set of hashes as a sorted list of disjoint, non-adjacent [`ShardRange`]s (the smallest list
/// that describes the set).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ShardRanges {
    ranges: Vec<ShardRange>,
}

impl ShardRanges {
    /// The empty set.
    #[must_use]
    pub const fn new() -> Self {
        Self { ranges: Vec::new() }
    }

    /// The whole hash space.
    #[must_use]
    pub fn full() -> Self {
        Self {
            ranges: vec![ShardRange::FULL],
        }
    }

    /// The set covered by `ranges` (in any order, overlapping or not), sorted and merged.
    pub fn from_ranges(ranges: impl IntoIterator<Item = ShardRange>) -> Self {
        let mut ranges: Vec<ShardRange> = ranges.into_iter().collect();
        ranges.sort_unstable();
        let mut merged: Vec<ShardRange> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if u128::from(r.start) <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        Self { ranges: merged }
    }

    /// The ranges, sorted, disjoint and non-adjacent.
    #[must_use]
    pub fn as_slice(&self) -> &[ShardRange] {
        &self.ranges
    }

    /// Iterates over the ranges in order.
    pub fn iter(&self) -> std::slice::Iter<'_, ShardRange> {
        self.ranges.iter()
    }

    /// The number of ranges (what a selector for this set would list).
    #[must_use]
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether the set holds no hash at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether the set is the whole hash space.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.ranges.as_slice() == [ShardRange::FULL]
    }

    /// Whether `hash` is in the set (binary search).
    #[must_use]
    pub fn contains(&self, hash: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.end <= u128::from(hash));
        self.ranges.get(i).is_some_and(|r| r.start <= hash)
    }

    /// How many hashes the set holds.
    #[must_use]
    pub fn width(&self) -> u128 {
        self.ranges.iter().map(ShardRange::width).sum()
    }

    /// The fraction of the hash space the set holds, in `[0, 1]`.
    #[must_use]
    pub fn fraction(&self) -> f64 {
        self.width() as f64 / HASH_SPACE_END as f64
    }

    /// The hashes in `self` or `other`.
    #[must_use]
    pub fn union(&self, other: &Self) -> Self {
        Self::from_ranges(self.ranges.iter().chain(&other.ranges).copied())
    }

    /// The hashes in both `self` and `other`.
    #[must_use]
    pub fn intersection(&self, other: &Self) -> Self {
        let (a, b) = (&self.ranges, &other.ranges);
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < a.len() && j < b.len() {
            let start = a[i].start.max(b[j].start);
            let end = a[i].end.min(b[j].end);
            if u128::from(start) < end {
                out.push(ShardRange { start, end });
            }
            if a[i].end <= b[j].end {
                i += 1;
            } else {
                j += 1;
            }
        }
        Self::from_ranges(out)
    }

    /// The hashes in `self` but not in `other`.
    #[must_use]
    pub fn difference(&self, other: &Self) -> Self {
        let b = &other.ranges;
        let mut out = Vec::new();
        let mut j = 0;
        for r in &self.ranges {
            let mut start = u128::from(r.start);
            while j < b.len() && b[j].end <= start {
                j += 1;
            }
            let mut k = j;
            while k < b.len() && u128::from(b[k].start) < r.end && start < r.end {
                let cut = u128::from(b[k].start);
                if cut > start {
                    out.push(piece(start, cut));
                }
                start = start.max(b[k].end);
                k += 1;
            }
            if start < r.end {
                out.push(piece(start, r.end));
            }
        }
        Self::from_ranges(out)
    }
}

/// `[start, end)` for `start < end <= 2^64`, which the callers guarantee (so `start` fits in u64).
fn piece(start: u128, end: u128) -> ShardRange {
    ShardRange {
        start: u64::try_from(start).unwrap_or(u64::MAX),
        end,
    }
}

impl FromIterator<ShardRange> for ShardRanges {
    fn from_iter<I: IntoIterator<Item = ShardRange>>(iter: I) -> Self {
        Self::from_ranges(iter)
    }
}

impl<'a> IntoIterator for &'a ShardRanges {
    type Item = &'a ShardRange;
    type IntoIter = std::slice::Iter<'a, ShardRange>;

    fn into_iter(self) -> Self::IntoIter {
        self.ranges.iter()
    }
}

impl fmt::Display for ShardRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ranges.is_empty() {
            return f.write_str("{}");
        }
        for (i, r) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(start: u64, end: u128) -> ShardRange {
        ShardRange::new(start, end).unwrap()
    }

    #[test]
    fn new_rejects_empty_and_oversized() {
        assert!(ShardRange::new(5, 5).is_err());
        assert!(ShardRange::new(6, 5).is_err());
        assert!(ShardRange::new(0, HASH_SPACE_END + 1).is_err());
        assert!(ShardRange::new(u64::MAX, HASH_SPACE_END).is_ok());
        assert_eq!(ShardRange::new(0, HASH_SPACE_END), Ok(ShardRange::FULL));
    }

    #[test]
    fn contains_is_half_open() {
        let x = r(10, 20);
        assert!(!x.contains(9));
        assert!(x.contains(10));
        assert!(x.contains(19));
        assert!(!x.contains(20));
        let last = ShardRange::to_end(u64::MAX);
        assert!(last.contains(u64::MAX));
        assert!(!last.contains(u64::MAX - 1));
        assert_eq!(last.width(), 1);
        assert_eq!(ShardRange::FULL.width(), HASH_SPACE_END);
    }

    #[test]
    fn from_ranges_sorts_and_merges_overlapping_and_adjacent() {
        let set = ShardRanges::from_ranges([r(30, 40), r(0, 10), r(10, 15), r(35, 50), r(60, 61)]);
        assert_eq!(set.as_slice(), &[r(0, 15), r(30, 50), r(60, 61)]);
        let full = ShardRanges::from_ranges([ShardRange::to_end(1 << 63), r(0, 1 << 63)]);
        assert!(full.is_full());
        assert!(ShardRanges::from_ranges([]).is_empty());
    }

    #[test]
    fn set_operations_table() {
        let a = ShardRanges::from_ranges([r(0, 10), r(20, 30)]);
        let b = ShardRanges::from_ranges([r(5, 25)]);
        assert_eq!(a.union(&b).as_slice(), &[r(0, 30)]);
        assert_eq!(a.intersection(&b).as_slice(), &[r(5, 10), r(20, 25)]);
        assert_eq!(a.difference(&b).as_slice(), &[r(0, 5), r(25, 30)]);
        assert_eq!(b.difference(&a).as_slice(), &[r(10, 20)]);
        let full = ShardRanges::full();
        assert!(full.difference(&full).is_empty());
        assert_eq!(
            full.difference(&a).as_slice(),
            &[r(10, 20), ShardRange::to_end(30)]
        );
        assert_eq!(full.intersection(&a), a);
    }

    fn arb_set() -> impl Strategy<Value = ShardRanges> {
        // Few distinct boundaries, so that overlaps, adjacency and the 2^64 end all occur.
        let bound = prop_oneof![0u128..8, Just(HASH_SPACE_END - 1), Just(HASH_SPACE_END)];
        proptest::collection::vec((bound.clone(), bound), 0..6).prop_map(|pairs| {
            pairs
                .into_iter()
                .filter_map(|(a, b)| {
                    let (lo, hi) = (a.min(b), a.max(b));
                    ShardRange::new(u64::try_from(lo).ok()?, hi).ok()
                })
                .collect()
        })
    }

    fn probes() -> Vec<u64> {
        let mut p: Vec<u64> = (0..10).collect();
        p.extend([u64::MAX - 2, u64::MAX - 1, u64::MAX]);
        p
    }

    proptest! {
        #[test]
        fn set_operations_agree_with_membership(a in arb_set(), b in arb_set()) {
            for set in [&a, &b] {
                for w in set.as_slice().windows(2) {
                    // sorted, disjoint and non-adjacent
                    prop_assert!(w[0].end < u128::from(w[1].start));
                }
            }
            let (u, i, d) = (a.union(&b), a.intersection(&b), a.difference(&b));
            for h in probes() {
                prop_assert_eq!(u.contains(h), a.contains(h) || b.contains(h));
                prop_assert_eq!(i.contains(h), a.contains(h) && b.contains(h));
                prop_assert_eq!(d.contains(h), a.contains(h) && !b.contains(h));
                prop_assert_eq!(a.contains(h), a.iter().any(|r| r.contains(h)));
            }
            prop_assert_eq!(a.width(), i.width() + d.width());
            for w in u.as_slice().windows(2).chain(i.as_slice().windows(2)).chain(d.as_slice().windows(2)) {
                prop_assert!(w[0].end < u128::from(w[1].start));
            }
        }
    }
}
