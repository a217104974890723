//! KEP-5866 shard selectors: the `shardSelector` string sent on list and watch, the client-side
//! predicate that is exactly the server's, and the check of the server's `shardInfo` echo.
//!
//! The string is `shardRange(<field>, '<start>', '<end>')`, several joined with ` || `, where
//! `<field>` is `object.metadata.namespace` or `object.metadata.uid`, and `<start>`/`<end>` are
//! `0x` plus exactly 16 lowercase hex digits, the end alternatively `0x10000000000000000` (2^64).
//! An object matches when the FNV-1a hash of its field lies in any range (`start <= h < end`).
//! [`ShardSelector`]'s `Display` writes exactly what kube-apiserver's own `String()` writes, so the
//! server's echo in `ListMeta.shardInfo.selector` equals the string that was sent.

use std::fmt;

use crate::hash::hash_field;
use crate::range::{HASH_SPACE_END, ShardRange, ShardRanges};

/// The object field a selector hashes (the server supports exactly these two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShardKey {
    /// `object.metadata.namespace`: the empty string for cluster-scoped objects.
    Namespace,
    /// `object.metadata.uid`.
    Uid,
}

impl ShardKey {
    /// The CEL-style path written in the selector.
    #[must_use]
    pub const fn field_path(self) -> &'static str {
        match self {
            Self::Namespace => "object.metadata.namespace",
            Self::Uid => "object.metadata.uid",
        }
    }

    /// The key written as `path`, if the server supports it.
    #[must_use]
    pub fn from_field_path(path: &str) -> Option<Self> {
        match path {
            "object.metadata.namespace" => Some(Self::Namespace),
            "object.metadata.uid" => Some(Self::Uid),
            _ => None,
        }
    }
}

/// A non-empty shard selector: a key and one or more ranges, any of which matches.
///
/// Built from a set of ranges ([`ShardSelector::new`], sorted and merged) or parsed from a string
/// ([`ShardSelector::parse`], ranges kept in the order written, as the server keeps them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardSelector {
    key: ShardKey,
    requirements: Vec<ShardRange>,
    set: ShardRanges,
}

impl ShardSelector {
    /// The selector for `ranges`, or `None` when `ranges` is empty: no selector string selects
    /// nothing (the server rejects an empty one, and one without ranges would mean "everything").
    /// Use [`ShardFilter::new`] to handle the empty and the full set too.
    #[must_use]
    pub fn new(key: ShardKey, ranges: &ShardRanges) -> Option<Self> {
        if ranges.is_empty() {
            return None;
        }
        Some(Self {
            key,
            requirements: ranges.as_slice().to_vec(),
            set: ranges.clone(),
        })
    }

    /// Builds a selector from requirements already validated by the parser (at least one).
    pub(crate) fn from_requirements(key: ShardKey, requirements: Vec<ShardRange>) -> Self {
        let set = ShardRanges::from_ranges(requirements.iter().copied());
        Self {
            key,
            requirements,
            set,
        }
    }

    /// The field hashed.
    #[must_use]
    pub fn key(&self) -> ShardKey {
        self.key
    }

    /// The ranges as written (parsed selectors may repeat or overlap them, as the server allows).
    #[must_use]
    pub fn requirements(&self) -> &[ShardRange] {
        &self.requirements
    }

    /// The set of hashes selected, sorted and merged.
    #[must_use]
    pub fn ranges(&self) -> &ShardRanges {
        &self.set
    }

    /// Whether an object whose key field hashes to `hash` is selected: the server's test.
    #[must_use]
    pub fn matches_hash(&self, hash: u64) -> bool {
        self.set.contains(hash)
    }

    /// Whether an object whose key field (namespace or UID) is `value` is selected.
    #[must_use]
    pub fn matches(&self, value: &str) -> bool {
        self.matches_hash(hash_field(value))
    }

    /// What the server's echo in a list response says about this request's filtering.
    /// `echoed` is `ListMeta.shardInfo.selector`, `None` when the list had no `shardInfo`.
    #[must_use]
    pub fn check_echo(&self, echoed: Option<&str>) -> ServerFiltering {
        match echoed {
            None => ServerFiltering::NotApplied,
            Some(s) if s == self.to_string() => ServerFiltering::Applied,
            Some(s) => match ShardSelector::parse(s) {
                Ok(other) if other.key == self.key && other.set == self.set => {
                    ServerFiltering::Applied
                }
                _ => ServerFiltering::Mismatch,
            },
        }
    }
}

impl fmt::Display for ShardSelector {
    /// The wire form, the same bytes kube-apiserver's `String()` produces for it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(" || ")?;
            }
            write_requirement(f, self.key, r)?;
        }
        Ok(())
    }
}

fn write_requirement(f: &mut fmt::Formatter<'_>, key: ShardKey, r: &ShardRange) -> fmt::Result {
    // 16 digits, or 17 for the end 2^64 (`0x10000000000000000`).
    debug_assert!(r.end() <= HASH_SPACE_END);
    write!(
        f,
        "shardRange({}, '0x{:016x}', '0x{:016x}')",
        key.field_path(),
        r.start(),
        r.end()
    )
}

/// What the server did with a request's shard selector, judged from the list response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerFiltering {
    /// `shardInfo` echoes the selector: the server filtered the list (and filters the watch).
    Applied,
    /// No `shardInfo`: the server ignored the selector (feature gate off, an older server, or a
    /// resource not served by the generic registry); every object came back, filter on the client.
    NotApplied,
    /// `shardInfo` names a different selector: do not trust the response's filtering.
    Mismatch,
}

/// The filter for one member's shard: what to send on list and watch, and the client-side test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardFilter {
    /// The whole hash space: list and watch without a `shardSelector` (the server's own advice
    /// for unfiltered lists), keep every object.
    Everything,
    /// Part of the hash space: send the selector, keep only matching objects.
    Ranges(ShardSelector),
    /// No hash at all: no selector string expresses this, so do not list or watch; keep nothing.
    Nothing,
}

impl ShardFilter {
    /// The filter selecting `ranges` of `key`.
    #[must_use]
    pub fn new(key: ShardKey, ranges: &ShardRanges) -> Self {
        if ranges.is_full() {
            Self::Everything
        } else {
            ShardSelector::new(key, ranges).map_or(Self::Nothing, Self::Ranges)
        }
    }

    /// The value of the `shardSelector` query parameter, if one is to be sent.
    #[must_use]
    pub fn query_value(&self) -> Option<String> {
        match self {
            Self::Ranges(selector) => Some(selector.to_string()),
            Self::Everything | Self::Nothing => None,
        }
    }

    /// Whether an object whose key field hashes to `hash` belongs to the shard.
    #[must_use]
    pub fn matches_hash(&self, hash: u64) -> bool {
        match self {
            Self::Everything => true,
            Self::Ranges(selector) => selector.matches_hash(hash),
            Self::Nothing => false,
        }
    }

    /// Whether an object whose key field (namespace or UID) is `value` belongs to the shard.
    #[must_use]
    pub fn matches(&self, value: &str) -> bool {
        self.matches_hash(hash_field(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u64, end: u128) -> ShardRange {
        ShardRange::new(start, end).unwrap()
    }

    #[test]
    fn display_is_upstreams_wire_form() {
        let set =
            ShardRanges::from_ranges([r(0, 1 << 63), ShardRange::to_end(0xc000_0000_0000_0000)]);
        let sel = ShardSelector::new(ShardKey::Namespace, &set).unwrap();
        assert_eq!(
            sel.to_string(),
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000') || \
             shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')"
        );
        let one = ShardSelector::new(ShardKey::Uid, &ShardRanges::from_ranges([r(0xaa, 0xff)]));
        assert_eq!(
            one.unwrap().to_string(),
            "shardRange(object.metadata.uid, '0x00000000000000aa', '0x00000000000000ff')"
        );
    }

    #[test]
    fn matches_like_upstreams_selector_matches() {
        // Upstream's TestSelectorMatches, on the UID "test-uid-123".
        let hash = hash_field("test-uid-123");
        let cases: &[(&str, ShardRange, bool)] = &[
            ("full range", ShardRange::FULL, true),
            // upstream writes the end as the hash with an "f" appended: any 17-digit end is past it.
            ("hash in [hash, 2^64)", ShardRange::to_end(hash), true),
            (
                "below start",
                ShardRange::to_end(u64::MAX),
                hash == u64::MAX,
            ),
            ("at or above end", r(0, 1), hash < 1),
        ];
        for (name, range, want) in cases {
            let sel =
                ShardSelector::new(ShardKey::Uid, &ShardRanges::from_ranges([*range])).unwrap();
            assert_eq!(sel.matches("test-uid-123"), *want, "{name}");
        }
    }

    #[test]
    fn matches_boundaries_exactly() {
        let h = hash_field("default");
        let set = ShardRanges::from_ranges([r(h, u128::from(h) + 1)]);
        let sel = ShardSelector::new(ShardKey::Namespace, &set).unwrap();
        assert!(sel.matches("default"));
        assert!(!sel.matches_hash(h - 1));
        assert!(!sel.matches_hash(h + 1));
        let last = ShardSelector::new(
            ShardKey::Namespace,
            &ShardRanges::from_ranges([ShardRange::to_end(u64::MAX)]),
        )
        .unwrap();
        assert!(last.matches_hash(u64::MAX));
    }

    #[test]
    fn filter_for_full_and_empty_sets() {
        let full = ShardFilter::new(ShardKey::Namespace, &ShardRanges::full());
        assert_eq!(full, ShardFilter::Everything);
        assert_eq!(full.query_value(), None);
        assert!(full.matches("anything"));

        let none = ShardFilter::new(ShardKey::Namespace, &ShardRanges::new());
        assert_eq!(none, ShardFilter::Nothing);
        assert_eq!(none.query_value(), None);
        assert!(!none.matches("anything"));
        assert!(!none.matches(""));

        let half = ShardFilter::new(
            ShardKey::Namespace,
            &ShardRanges::from_ranges([r(0, 1 << 63)]),
        );
        assert_eq!(
            half.query_value().as_deref(),
            Some(
                "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"
            )
        );
        assert_eq!(half.matches(""), hash_field("") < 1 << 63);
    }

    #[test]
    fn check_echo() {
        let set = ShardRanges::from_ranges([r(0, 1 << 63)]);
        let sel = ShardSelector::new(ShardKey::Namespace, &set).unwrap();
        assert_eq!(sel.check_echo(None), ServerFiltering::NotApplied);
        assert_eq!(
            sel.check_echo(Some(&sel.to_string())),
            ServerFiltering::Applied
        );
        // The same ranges written differently still count as applied.
        let spaced = "shardRange( object.metadata.namespace ,'0x0000000000000000','0x4000000000000000') || \
                      shardRange(object.metadata.namespace, '0x4000000000000000', '0x8000000000000000')";
        assert_eq!(sel.check_echo(Some(spaced)), ServerFiltering::Applied);
        let other =
            "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')";
        assert_eq!(sel.check_echo(Some(other)), ServerFiltering::Mismatch);
        let uid = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
        assert_eq!(sel.check_echo(Some(uid)), ServerFiltering::Mismatch);
        assert_eq!(sel.check_echo(Some("garbage")), ServerFiltering::Mismatch);
    }
}
