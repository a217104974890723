//! A small seeded random number generator (SplitMix64): plans must be a pure function of their
//! seed on every machine and every toolchain, and xtask has no `rand` dependency.

/// SplitMix64 (Steele, Lea, Flood 2014): 64-bit state, full period, good enough statistics for
/// drawing fault plans.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose whole output is determined by `seed`.
    pub(crate) fn seed_from_u64(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi]` (inclusive); `lo` when the range is empty.
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One of `items`, uniformly.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len().saturating_sub(1) as u64) as usize]
    }
}

/// The seed of schedule `index` of a run started with `base`: one SplitMix64 step, so that
/// neighbouring schedules get unrelated plans.
pub(crate) fn schedule_seed(base: u64, index: u64) -> u64 {
    SplitMix64::seed_from_u64(base ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_different_seeds_differ() {
        let a: Vec<u64> = {
            let mut r = SplitMix64::seed_from_u64(7);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let mut r = SplitMix64::seed_from_u64(7);
        assert_eq!(a, (0..8).map(|_| r.next_u64()).collect::<Vec<_>>());
        let mut r = SplitMix64::seed_from_u64(8);
        assert_ne!(a, (0..8).map(|_| r.next_u64()).collect::<Vec<_>>());
    }

    #[test]
    fn ranges_stay_in_bounds_and_cover_them() {
        let mut r = SplitMix64::seed_from_u64(1);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = r.range(3, 7);
            assert!((3..=7).contains(&v));
            seen[(v - 3) as usize] = true;
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert!(
            seen.iter().all(|s| *s),
            "every value of 3..=7 drawn: {seen:?}"
        );
        assert_eq!(r.range(4, 4), 4);
    }

    #[test]
    fn schedule_seeds_differ_per_index() {
        let seeds: std::collections::HashSet<u64> = (0..100).map(|i| schedule_seed(1, i)).collect();
        assert_eq!(seeds.len(), 100);
        assert_eq!(schedule_seed(1, 5), schedule_seed(1, 5));
    }
}
