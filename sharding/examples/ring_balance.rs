//! Measures the ring: balance, selector size and movement, per virtual node count.
//!
//! ```sh
//! cargo run --release -p kcm-sharding --example ring_balance
//! ```
//!
//! For each member count and vnode count it builds rings over many random member-name sets (pod
//! names such as `kcm-5c9f7d8b4-x2k4q`) and reports, averaged over the sets and as the worst set:
//! the largest member's shard of the hash space against a fair share (1.00 = perfect), the same for
//! 10,000 namespace names of three kinds, the ranges in one member's selector and the selector's
//! length (raw and URL-encoded), and the keys that move when one member joins or leaves against
//! the ideal 1/N. Deterministic: the same output every run.

use std::num::NonZeroU32;

use kcm_sharding::{Ring, ShardKey, hash_field};

/// SplitMix64, for deterministic pseudo-random names.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn word(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize] as char)
            .collect()
    }
}

const LOWER_DIGITS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const POD_SUFFIX: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn pod_name(rng: &mut Rng) -> String {
    format!(
        "kcm-{}-{}",
        rng.word(POD_SUFFIX, 9),
        rng.word(POD_SUFFIX, 5)
    )
}

fn namespace_sets() -> Vec<(&'static str, Vec<String>)> {
    let sequential = (0..10_000).map(|i| format!("ns-{i}")).collect();
    let teams = [
        "payments", "search", "ads", "identity", "billing", "mobile", "web", "data", "ml", "infra",
        "growth", "checkout", "catalog", "shipping", "support", "security", "platform", "media",
        "maps", "mail", "chat", "video", "music", "games", "devtools",
    ];
    let apps = [
        "api",
        "worker",
        "frontend",
        "backend",
        "cache",
        "db",
        "queue",
        "cron",
        "gateway",
        "auth",
        "indexer",
        "crawler",
        "ranker",
        "ingest",
        "export",
        "report",
        "notifier",
        "scheduler",
        "proxy",
        "store",
        "sync",
        "batch",
        "stream",
        "etl",
        "admin",
        "portal",
        "bot",
        "hooks",
        "metrics",
        "logs",
        "tracing",
        "alerts",
        "config",
        "secrets",
        "registry",
        "builder",
        "runner",
        "tester",
        "canary",
        "mirror",
    ];
    let envs = [
        "dev", "test", "qa", "staging", "prod", "prod-eu", "prod-us", "prod-ap", "perf", "sandbox",
    ];
    let mut realistic = Vec::new();
    for t in teams {
        for a in apps {
            for e in envs {
                realistic.push(format!("{t}-{a}-{e}"));
            }
        }
    }
    let mut rng = Rng(7);
    let random = (0..10_000)
        .map(|_| {
            let len = 6 + (rng.next() % 15) as usize;
            rng.word(LOWER_DIGITS, len)
        })
        .collect();
    vec![
        ("sequential ns-N", sequential),
        ("team-app-env", realistic),
        ("random", random),
    ]
}

/// Largest member's count over the fair share (count / members).
fn max_over_fair(counts: &[usize], total: usize) -> f64 {
    let max = counts.iter().copied().max().unwrap_or(0);
    max as f64 * counts.len() as f64 / total as f64
}

fn url_encoded_len(s: &str) -> usize {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"*-._ ".contains(&b) {
                1
            } else {
                3
            }
        })
        .sum()
}

#[derive(Default)]
struct Stats {
    sum: f64,
    worst: f64,
    n: usize,
}

impl Stats {
    fn add(&mut self, x: f64) {
        self.sum += x;
        self.worst = self.worst.max(x);
        self.n += 1;
    }
    fn mean(&self) -> f64 {
        self.sum / self.n as f64
    }
}

fn main() {
    let sets = namespace_sets();
    let hashes: Vec<Vec<u64>> = sets
        .iter()
        .map(|(_, names)| names.iter().map(|n| hash_field(n)).collect())
        .collect();
    let trials = 40;
    println!(
        "trials: {trials} random member sets per row; namespace sets of {} names",
        hashes[0].len()
    );
    println!();
    print!("| members | vnodes | space max/fair mean (worst) |");
    for (name, _) in &sets {
        print!(" {name} max/fair mean (worst) |");
    }
    println!(
        " ranges/member mean (max) | selector bytes max (URL-encoded) | moved on join / ideal | moved on leave / ideal |"
    );
    print!("|---|---|---|");
    for _ in &sets {
        print!("---|");
    }
    println!("---|---|---|---|");
    for members in [2usize, 3, 5, 10] {
        for vnodes in [1u32, 4, 8, 16, 32, 64, 128, 256] {
            let vn = NonZeroU32::new(vnodes).unwrap_or(NonZeroU32::MIN);
            let mut rng = Rng(members as u64 * 1000 + u64::from(vnodes));
            let mut space = Stats::default();
            let mut keys: Vec<Stats> = sets.iter().map(|_| Stats::default()).collect();
            let (mut ranges_sum, mut ranges_n, mut ranges_max, mut sel_max, mut url_max) =
                (0usize, 0usize, 0usize, 0usize, 0usize);
            let (mut join, mut leave) = (Stats::default(), Stats::default());
            for _ in 0..trials {
                let names: Vec<String> = (0..members).map(|_| pod_name(&mut rng)).collect();
                let ring = Ring::with_vnodes(names.clone(), vn);
                let shards = ring.shards();
                let max_fraction = shards.iter().map(|(_, r)| r.fraction()).fold(0.0, f64::max);
                space.add(max_fraction * members as f64);
                for (_, r) in &shards {
                    ranges_sum += r.len();
                    ranges_n += 1;
                    ranges_max = ranges_max.max(r.len());
                }
                for member in ring.members() {
                    if let Some(q) = ring.filter(member, ShardKey::Namespace).query_value() {
                        sel_max = sel_max.max(q.len());
                        url_max = url_max.max(url_encoded_len(&q));
                    }
                }
                for (k, hs) in hashes.iter().enumerate() {
                    let mut counts = vec![0usize; members];
                    for &h in hs {
                        let owner = ring.owner(h).unwrap_or_default();
                        if let Ok(i) = ring.members().binary_search_by(|m| m.as_str().cmp(owner)) {
                            counts[i] += 1;
                        }
                    }
                    keys[k].add(max_over_fair(&counts, hs.len()));
                }
                // Movement over the realistic names: one joins, then the first member leaves.
                let hs = &hashes[1];
                let mut bigger = names.clone();
                bigger.push(pod_name(&mut rng));
                let joined = Ring::with_vnodes(bigger, vn);
                let moved = hs
                    .iter()
                    .filter(|&&h| ring.owner(h) != joined.owner(h))
                    .count();
                join.add(moved as f64 / hs.len() as f64 * (members + 1) as f64);
                let left = Ring::with_vnodes(names[1..].to_vec(), vn);
                let moved = hs
                    .iter()
                    .filter(|&&h| ring.owner(h) != left.owner(h))
                    .count();
                leave.add(moved as f64 / hs.len() as f64 * members as f64);
            }
            print!(
                "| {members} | {vnodes} | {:.2} ({:.2}) |",
                space.mean(),
                space.worst
            );
            for k in &keys {
                print!(" {:.2} ({:.2}) |", k.mean(), k.worst);
            }
            println!(
                " {:.1} ({ranges_max}) | {sel_max} ({url_max}) | {:.2} ({:.2}) | {:.2} ({:.2}) |",
                ranges_sum as f64 / ranges_n as f64,
                join.mean(),
                join.worst,
                leave.mean(),
                leave.worst
            );
        }
    }
}
