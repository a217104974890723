//! Ownership of a namespace and the writes to it, as sharded kcm replicas' logs tell them
//! (`-v 2`), on one host clock: a process's ownership of the namespace starts at its "ranges
//! that became active" line whose ranges contain the namespace's shard key, and ends when
//! another process's activation of it is logged. Every write a process sent to the namespace
//! (`"API write"`, `result="ok"`; a write refused by the fence was never sent) must lie inside
//! one of its own ownerships: a write logged while another process owns the namespace means two
//! active owners, or a write answered after the takeover that the server received before it
//! (the audit log's check, [`super::ownership_audit`], decides), or one that landed late (the
//! residual risk of docs/sharding.md §6).

use kcm_sharding::hash_field;

use super::terms_log::klog_time;

/// Whether the `[0x…, 0x…)` ranges of a log value contain `hash`.
fn ranges_contain(ranges: &str, hash: u64) -> bool {
    ranges.split('[').skip(1).any(|r| {
        let mut ends = r
            .split([',', ')'])
            .map(|x| x.trim().trim_start_matches("0x"))
            .filter(|x| !x.is_empty());
        let (Some(start), Some(end)) = (ends.next(), ends.next()) else {
            return false;
        };
        let (Ok(start), Ok(end)) = (
            u128::from_str_radix(start, 16),
            u128::from_str_radix(end, 16),
        ) else {
            return false;
        };
        (start..end).contains(&u128::from(hash))
    })
}

/// One process's log, for one namespace.
#[derive(Debug, Default)]
pub(crate) struct Ownership {
    pub(crate) name: String,
    /// The member identity the process logged its activations with (its User-Agent's
    /// `shard-member/<identity>`).
    pub(crate) member: Option<String>,
    /// When the namespace became active in this process.
    pub(crate) activations: Vec<f64>,
    /// Its sent writes to the namespace.
    pub(crate) writes: Vec<(f64, String)>,
    /// Its writes refused by the fence (never sent).
    pub(crate) fenced: usize,
}

/// Reads process `name`'s log `text` for namespace `ns`.
pub(crate) fn read_ownership(name: &str, text: &str, ns: &str) -> Ownership {
    let hash = hash_field(ns);
    let object = format!("object=\"{ns}/");
    let mut o = Ownership {
        name: name.to_string(),
        ..Default::default()
    };
    for line in text.lines() {
        if line.contains("\"ranges that became active\"") {
            if let Some(ranges) = line.split("gained=\"").nth(1)
                && ranges_contain(ranges, hash)
                && let Some(at) = klog_time(line)
            {
                o.activations.push(at);
                if o.member.is_none() {
                    o.member = line
                        .split("member=\"")
                        .nth(1)
                        .and_then(|m| m.split('"').next())
                        .map(str::to_string);
                }
            }
        } else if line.contains("\"API write\"") && line.contains(&object) {
            if line.contains("result=\"fenced\"") {
                o.fenced += 1;
            } else if line.contains("result=\"ok\"")
                && let Some(at) = klog_time(line)
            {
                o.writes.push((at, line.to_string()));
            }
        }
    }
    o
}

/// A replica stopped (SIGSTOP) from `from` to `to`, seconds since midnight as the logs count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pause {
    pub(crate) replica: usize,
    pub(crate) from: f64,
    pub(crate) to: f64,
}

/// How long after its SIGCONT a paused replica may still complete writes it had passed through
/// its fence before it was stopped.
pub(crate) const LATE_AFTER_RESUME_S: f64 = 1.0;

/// The replica index of a process log `kcm-<i>-<start>.log`.
fn replica_of(name: &str) -> Option<usize> {
    name.strip_prefix("kcm-")?.split('-').next()?.parse().ok()
}

/// Writes logged while their writer did not own the namespace: before its first activation, or
/// after another process's later activation. Returns (violations, late writes): a write is
/// *late*, not a violation, when its writer was paused while the other took the namespace over
/// and the write completed within [`LATE_AFTER_RESUME_S`] of the SIGCONT: its fence check
/// passed before the pause (the fence is closed on resume), and its request was sent, or left
/// the process, only then (the residual risk (A3) of docs/sharding.md §6; on kcm-testenv, which
/// has no audit log, when the server received it is unknown).
pub(crate) fn writes_outside_ownership(
    all: &[Ownership],
    pauses: &[Pause],
) -> (Vec<String>, Vec<String>) {
    let mut activations: Vec<(f64, &str)> = all
        .iter()
        .flat_map(|o| o.activations.iter().map(|a| (*a, o.name.as_str())))
        .collect();
    activations.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut bad, mut late) = (Vec::new(), Vec::new());
    for o in all {
        for (at, line) in &o.writes {
            let owner = activations.iter().take_while(|(a, _)| a <= at).last();
            if owner.map(|(_, n)| *n) == Some(o.name.as_str()) {
                continue;
            }
            let paused_meanwhile = owner.is_some_and(|(since, _)| {
                pauses.iter().any(|p| {
                    Some(p.replica) == replica_of(&o.name)
                        && p.from <= *since
                        && *since <= p.to
                        && p.to <= *at
                        && *at <= p.to + LATE_AFTER_RESUME_S
                })
            });
            let what = format!(
                "{} wrote while {} owned the namespace: {line}",
                o.name,
                owner.map_or("nobody", |(_, n)| *n)
            );
            if paused_meanwhile {
                late.push(what);
            } else {
                bad.push(what);
            }
        }
    }
    (bad, late)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t: &str, msg: &str, rest: &str) -> String {
        format!("I1128 {t}    42 x.rs:1] \"{msg}\" {rest}")
    }

    #[test]
    fn a_write_belongs_to_the_latest_activation() {
        let h = hash_field("chaos");
        let all = format!("gained=\"[0x{:016x}, 0x{:016x})\"", h - 1, h + 1);
        let other = "gained=\"[0x0000000000000000, 0x0000000000000001)\"";
        let write = |t| {
            line(
                t,
                "API write",
                "verb=\"create\" object=\"chaos/web-1\" result=\"ok\"",
            )
        };
        let a = [
            line(
                "10:00:01.000000",
                "ranges that became active",
                &format!("member=\"a_1\" {all}"),
            ),
            write("10:00:02.000000"),
            write("10:00:05.000000"),
        ]
        .join("\n");
        let b = [
            line("10:00:00.500000", "ranges that became active", other),
            line("10:00:04.000000", "ranges that became active", &all),
            write("10:00:04.500000"),
        ]
        .join("\n");
        let owners = [
            read_ownership("kcm-0-1", &a, "chaos"),
            read_ownership("kcm-1-1", &b, "chaos"),
        ];
        assert_eq!(owners[0].activations.len(), 1);
        assert_eq!(owners[0].member.as_deref(), Some("a_1"));
        assert_eq!(
            owners[1].activations.len(),
            1,
            "the other range does not count"
        );
        let (bad, late) = writes_outside_ownership(&owners, &[]);
        assert_eq!((bad.len(), late.len()), (1, 0), "{bad:?}");
        assert!(bad[0].starts_with("kcm-0-1 wrote while kcm-1-1 owned"));
        // kcm-0 was paused from 3.5 s to 4.9 s, while kcm-1 took over at 4 s: its write
        // completing 0.1 s after the SIGCONT is late, not a violation; a second later it is.
        let pause = |to: f64| Pause {
            replica: 0,
            from: 36003.5,
            to,
        };
        let (bad, late) = writes_outside_ownership(&owners, &[pause(36004.9)]);
        assert_eq!((bad.len(), late.len()), (0, 1));
        let (bad, late) = writes_outside_ownership(&owners, &[pause(36003.9)]);
        assert_eq!(
            (bad.len(), late.len()),
            (1, 0),
            "paused, but resumed before the takeover"
        );
        assert!(ranges_contain("[0x00, 0x10000000000000000)", u64::MAX));
        assert!(!ranges_contain("[0x05, 0x06) [0x08, 0x09)", 7));
    }
}
