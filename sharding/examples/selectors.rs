//! Three replicas split the namespaces into shards; a fourth joins.
//!
//! ```sh
//! cargo run -p kcm-sharding --example selectors
//! ```
//!
//! Prints each replica's shard and `shardSelector`, who owns a few namespaces, and what moves
//! (and between whom) when `kcm-3` joins: only ranges going to `kcm-3`, about a quarter.

use kcm_sharding::{Assignment, Change, Ring, ShardKey, moves};

fn main() {
    let ring = Ring::new(["kcm-0", "kcm-1", "kcm-2"]);
    println!(
        "ring {} ({} vnodes per member)",
        ring.fingerprint(),
        ring.vnodes()
    );
    for (member, ranges) in ring.shards() {
        let selector = ring
            .filter(member, ShardKey::Namespace)
            .query_value()
            .unwrap_or_default();
        println!(
            "\n{member}: {:.1}% of the hash space, {} ranges, selector of {} bytes:\n  {selector}",
            ranges.fraction() * 100.0,
            ranges.len(),
            selector.len()
        );
    }

    let namespaces = [
        "default",
        "kube-system",
        "payments-prod",
        "search-staging",
        "ml-dev",
    ];
    println!();
    for ns in namespaces {
        println!(
            "{ns:>16} -> {}",
            ring.owner_of_namespace(ns).unwrap_or("nobody")
        );
    }

    let next = Ring::new(["kcm-0", "kcm-1", "kcm-2", "kcm-3"]);
    let moved = moves(&ring, &next);
    let moved_fraction: f64 = moved.iter().map(|m| m.range.fraction()).sum();
    println!(
        "\nkcm-3 joins (ring {}): {} ranges, {:.1}% of the hash space, move",
        next.fingerprint(),
        moved.len(),
        moved_fraction * 100.0
    );
    for m in moved.iter().take(5) {
        println!(
            "  {} {} -> {}",
            m.range,
            m.from.as_deref().unwrap_or("-"),
            m.to.as_deref().unwrap_or("-")
        );
    }
    for member in ["kcm-0", "kcm-3"] {
        let a = Assignment::between(&ring, &next, member);
        let changes: Vec<String> = namespaces
            .iter()
            .filter(|ns| a.change_of(ns) != Change::NotOwned)
            .map(|ns| format!("{ns}: {:?}", a.change_of(ns)))
            .collect();
        println!(
            "{member}: gains {:.1}%, loses {:.1}%; {}",
            a.gained().fraction() * 100.0,
            a.lost().fraction() * 100.0,
            changes.join(", ")
        );
    }
}
