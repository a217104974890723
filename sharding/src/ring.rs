//! The consistent-hash ring: which member owns which part of the 64-bit hash space.
//!
//! Each member places `vnodes` points on the ring; a point owns the hashes from its position up
//! to the next point's (`[p_i, p_{i+1})`), the last point also the wrap-around from 0 to the first
//! point. The owner of a hash is thus the member of the last point at or before it (or of the last
//! point on the ring, for hashes before the first point).
//!
//! Positions: `mix64(fnv1a_64("<member>#<i>"))` for `i` in `0..vnodes`, `<i>` in decimal and
//! `mix64` SplitMix64's finalizer. The finalizer is there because FNV-1a alone spreads the last
//! byte poorly: `"m#1"` … `"m#9"` land within 2^48 of each other (1/65,536 of the ring), so a
//! member's points would clump into one arc (see `plain_fnv_clusters_vnodes` below). The member
//! set is sorted and deduplicated first, so every replica that sees the same members computes the
//! same ring, whatever the order it learned them in.

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

use crate::hash::{FNV_OFFSET_BASIS, FNV_PRIME, fnv1a_64, hash_field};
use crate::range::{HASH_SPACE_END, ShardRange, ShardRanges};
use crate::selector::{ShardFilter, ShardKey};

/// Virtual nodes per member unless told otherwise, chosen by measurement (README, "Choosing the
/// number of virtual nodes"): the busiest of 3 members holds about 1.1× a fair share of the hash
/// space (1.2× of 10), and a member's selector stays under 65 ranges (≈5.5 KB, ≈7 KB
/// URL-encoded, inside the 8 KB request line common proxies allow).
pub const DEFAULT_VNODES: NonZeroU32 = match NonZeroU32::new(64) {
    Some(n) => n,
    None => unreachable!(),
};

/// A consistent-hash ring over a set of member names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ring {
    /// Sorted and deduplicated.
    members: Vec<String>,
    vnodes: NonZeroU32,
    /// Sorted by position, positions unique.
    points: Vec<Point>,
    fingerprint: RingFingerprint,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Point {
    position: u64,
    /// Index into `members`.
    member: usize,
}

impl Ring {
    /// The ring of `members` with [`DEFAULT_VNODES`] points each.
    pub fn new<I, S>(members: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::with_vnodes(members, DEFAULT_VNODES)
    }

    /// The ring of `members` with `vnodes` points each. Every replica must use the same `vnodes`:
    /// it is part of the [fingerprint](Ring::fingerprint).
    pub fn with_vnodes<I, S>(members: I, vnodes: NonZeroU32) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut members: Vec<String> = members.into_iter().map(Into::into).collect();
        members.sort_unstable();
        members.dedup();
        let mut points: Vec<(u64, usize, u32)> =
            Vec::with_capacity(members.len() * vnodes.get() as usize);
        for (m, name) in members.iter().enumerate() {
            for i in 0..vnodes.get() {
                points.push((vnode_position(name, i), m, i));
            }
        }
        let points = sorted_points(points);
        let fingerprint = RingFingerprint::of(&members, vnodes);
        Self {
            members,
            vnodes,
            points,
            fingerprint,
        }
    }

    /// The members, sorted.
    #[must_use]
    pub fn members(&self) -> &[String] {
        &self.members
    }

    /// Whether `member` is on the ring.
    #[must_use]
    pub fn contains_member(&self, member: &str) -> bool {
        self.member_index(member).is_some()
    }

    /// Whether the ring has no member (then nobody owns anything).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Virtual nodes per member.
    #[must_use]
    pub fn vnodes(&self) -> NonZeroU32 {
        self.vnodes
    }

    /// Identifies the ring: equal for equal member sets and vnode counts, so replicas can compare
    /// the rings they applied (e.g. recorded in their Leases).
    #[must_use]
    pub fn fingerprint(&self) -> RingFingerprint {
        self.fingerprint
    }

    /// The member owning `hash`, `None` on an empty ring.
    #[must_use]
    pub fn owner(&self, hash: u64) -> Option<&str> {
        let i = self.points.partition_point(|p| p.position <= hash);
        let point = if i == 0 {
            self.points.last()
        } else {
            self.points.get(i - 1)
        };
        point.map(|p| self.members[p.member].as_str())
    }

    /// The member owning namespace `namespace` (its FNV-1a hash).
    #[must_use]
    pub fn owner_of_namespace(&self, namespace: &str) -> Option<&str> {
        self.owner(hash_field(namespace))
    }

    /// The hashes `member` owns, as the fewest sorted ranges (empty if not a member).
    #[must_use]
    pub fn ranges(&self, member: &str) -> ShardRanges {
        match self.member_index(member) {
            Some(m) => self
                .arcs()
                .filter(|(owner, _)| *owner == m)
                .map(|(_, r)| r)
                .collect(),
            None => ShardRanges::new(),
        }
    }

    /// Every member with its shard (its ranges), in member order.
    #[must_use]
    pub fn shards(&self) -> Vec<(&str, ShardRanges)> {
        let mut per_member: Vec<Vec<ShardRange>> = vec![Vec::new(); self.members.len()];
        for (m, r) in self.arcs() {
            per_member[m].push(r);
        }
        self.members
            .iter()
            .zip(per_member)
            .map(|(name, ranges)| (name.as_str(), ShardRanges::from_ranges(ranges)))
            .collect()
    }

    /// The filter for `member`'s shard of `key`: the selector to send and the client-side test.
    #[must_use]
    pub fn filter(&self, member: &str, key: ShardKey) -> ShardFilter {
        ShardFilter::new(key, &self.ranges(member))
    }

    /// The hash positions where ownership may change, sorted (for comparing rings).
    pub(crate) fn boundaries(&self) -> impl Iterator<Item = u64> + '_ {
        self.points.iter().map(|p| p.position)
    }

    fn member_index(&self, member: &str) -> Option<usize> {
        self.members
            .binary_search_by(|m| m.as_str().cmp(member))
            .ok()
    }

    /// Each point's arc as (member index, range); the last point's arc is split at the wrap.
    fn arcs(&self) -> impl Iterator<Item = (usize, ShardRange)> + '_ {
        let n = self.points.len();
        let wrap = match (self.points.first(), self.points.last()) {
            (Some(first), Some(last)) if first.position > 0 => {
                ShardRange::new(0, u128::from(first.position))
                    .ok()
                    .map(|r| (last.member, r))
            }
            _ => None,
        };
        self.points
            .iter()
            .enumerate()
            .filter_map(move |(k, p)| {
                let end = if k + 1 < n {
                    u128::from(self.points[k + 1].position)
                } else {
                    HASH_SPACE_END
                };
                ShardRange::new(p.position, end).ok().map(|r| (p.member, r))
            })
            .chain(wrap)
    }
}

/// Sorts `(position, member index, vnode index)` into ring order. Equal positions (a 64-bit
/// collision) go to the smallest (member, vnode): any total order works as long as every replica
/// uses the same one.
fn sorted_points(mut points: Vec<(u64, usize, u32)>) -> Vec<Point> {
    points.sort_unstable();
    points.dedup_by_key(|p| p.0);
    points
        .into_iter()
        .map(|(position, member, _)| Point { position, member })
        .collect()
}

/// The position of `member`'s `i`-th virtual node.
fn vnode_position(member: &str, i: u32) -> u64 {
    mix64(fnv1a_64(format!("{member}#{i}").as_bytes()))
}

/// SplitMix64's finalizer: a bijection on u64 with full avalanche.
const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Identifies a ring (member set and vnode count), printed as 16 lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RingFingerprint(u64);

impl RingFingerprint {
    /// FNV-1a over a versioned, length-prefixed encoding of the sorted members and `vnodes`.
    fn of(members: &[String], vnodes: NonZeroU32) -> Self {
        let mut h = FNV_OFFSET_BASIS;
        let mut feed = |bytes: &[u8]| {
            for &b in bytes {
                h ^= u64::from(b);
                h = h.wrapping_mul(FNV_PRIME);
            }
        };
        feed(b"kcm-sharding ring v1\0");
        feed(&vnodes.get().to_le_bytes());
        for m in members {
            feed(&(m.len() as u64).to_le_bytes());
            feed(m.as_bytes());
        }
        Self(h)
    }

    /// The fingerprint as a number.
    #[must_use]
    pub const fn as_u64(self) -> u64 {
        self.0
    }
}

impl fmt::Display for RingFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// A string that is not 16 lowercase hex digits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid ring fingerprint {0:?}: want 16 lowercase hex digits")]
pub struct InvalidFingerprint(pub String);

impl FromStr for RingFingerprint {
    type Err = InvalidFingerprint;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let ok = s.len() == 16
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        match u64::from_str_radix(s, 16) {
            Ok(n) if ok => Ok(Self(n)),
            _ => Err(InvalidFingerprint(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_ring_owns_nothing() {
        let ring = Ring::new(Vec::<String>::new());
        assert!(ring.is_empty());
        assert_eq!(ring.owner(0), None);
        assert!(ring.ranges("a").is_empty());
        assert!(ring.shards().is_empty());
        assert_eq!(ring.filter("a", ShardKey::Namespace), ShardFilter::Nothing);
    }

    #[test]
    fn single_member_owns_everything() {
        for vnodes in [1, 2, 32] {
            let ring = Ring::with_vnodes(["only"], NonZeroU32::new(vnodes).unwrap());
            assert!(ring.ranges("only").is_full(), "vnodes {vnodes}");
            assert_eq!(ring.owner(0), Some("only"));
            assert_eq!(ring.owner(u64::MAX), Some("only"));
            assert_eq!(
                ring.filter("only", ShardKey::Namespace),
                ShardFilter::Everything
            );
            assert!(ring.ranges("other").is_empty());
        }
    }

    #[test]
    fn member_order_and_duplicates_do_not_matter() {
        let a = Ring::new(["a", "b", "c"]);
        let b = Ring::new(["c", "a", "b", "a"]);
        assert_eq!(a, b);
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.members(), ["a", "b", "c"]);
    }

    #[test]
    fn fingerprint_covers_members_and_vnodes() {
        let base = Ring::new(["a", "b"]).fingerprint();
        assert_ne!(base, Ring::new(["a", "b", "c"]).fingerprint());
        assert_ne!(base, Ring::new(["a"]).fingerprint());
        assert_ne!(base, Ring::new(["ab"]).fingerprint());
        assert_ne!(
            base,
            Ring::with_vnodes(["a", "b"], NonZeroU32::MIN).fingerprint()
        );
        // Length prefixes: no two member lists share an encoding.
        assert_ne!(
            Ring::new(["a", "bc"]).fingerprint(),
            Ring::new(["ab", "c"]).fingerprint()
        );
        let text = base.to_string();
        assert_eq!(text.len(), 16);
        assert_eq!(text.parse::<RingFingerprint>(), Ok(base));
        assert!("ABCDEF0123456789".parse::<RingFingerprint>().is_err());
        assert!("+bcdef012345678".parse::<RingFingerprint>().is_err());
        assert!("abc".parse::<RingFingerprint>().is_err());
    }

    #[test]
    fn fingerprint_is_stable_across_releases() {
        // Replicas of different builds compare fingerprints: changing the encoding is a protocol
        // change (bump the "v1" in it).
        // Pinned value, computed independently (Python) from the documented encoding.
        let ring = Ring::with_vnodes(["a", "b", "c"], NonZeroU32::new(32).unwrap());
        assert_eq!(ring.fingerprint().to_string(), "adbc415876dbf5bb");
    }

    #[test]
    fn positions_are_pinned() {
        // The ring layout is part of the protocol too: every replica must place the same points.
        assert_eq!(vnode_position("a", 0), mix64(fnv1a_64(b"a#0")));
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
    }

    #[test]
    fn plain_fnv_clusters_vnodes() {
        // Why positions go through mix64: plain FNV-1a of names differing in the last byte stay
        // within 255 * FNV_PRIME < 2^48 of each other.
        let plain: Vec<u64> = (1..10)
            .map(|i| fnv1a_64(format!("member#{i}").as_bytes()))
            .collect();
        let spread = plain.iter().max().unwrap() - plain.iter().min().unwrap();
        assert!(spread < 1 << 48, "spread {spread:#x}");
        let mixed: Vec<u64> = (1..10).map(|i| vnode_position("member", i)).collect();
        let spread = mixed.iter().max().unwrap() - mixed.iter().min().unwrap();
        assert!(spread > 1 << 62, "spread {spread:#x}");
    }

    #[test]
    fn wrap_around_is_split_and_owned_by_the_last_point() {
        let ring = Ring::with_vnodes(["a", "b", "c"], NonZeroU32::MIN);
        let first = ring.points.first().unwrap().position;
        let last = ring.points.last().unwrap();
        let last_owner = ring.members[last.member].clone();
        assert_eq!(ring.owner(0).unwrap(), last_owner);
        assert_eq!(ring.owner(u64::MAX).unwrap(), last_owner);
        assert_eq!(
            ring.owner(first).unwrap(),
            ring.members[ring.points[0].member]
        );
        let ranges = ring.ranges(&last_owner);
        assert_eq!(ranges.len(), 2, "{ranges}");
        assert_eq!(
            ranges.as_slice()[0],
            ShardRange::new(0, u128::from(first)).unwrap()
        );
        assert_eq!(ranges.as_slice()[1], ShardRange::to_end(last.position));
    }

    #[test]
    fn colliding_positions_go_to_the_smallest_member() {
        let points = sorted_points(vec![(7, 1, 0), (3, 1, 1), (7, 0, 5), (7, 0, 2), (9, 1, 2)]);
        let expected =
            [(3, 1), (7, 0), (9, 1)].map(|(position, member)| Point { position, member });
        assert_eq!(points, expected);
        let ring = Ring {
            members: vec!["a".into(), "b".into()],
            vnodes: NonZeroU32::MIN,
            points,
            fingerprint: RingFingerprint(0),
        };
        assert_eq!(
            ring.ranges("a").as_slice(),
            [ShardRange::new(7, 9).unwrap()]
        );
        assert_eq!(ring.owner(7), Some("a"));
        assert_eq!(ring.owner(6), Some("b"));
        assert_eq!(ring.owner(0), Some("b"));
    }
}
