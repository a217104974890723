//! How long a namespace's controllers paused after a replica was SIGKILLed, from the audit log:
//! for each namespace, the time from the benchmark's scale request (`deployments/scale`, received
//! after the kill) to the controllers' first write there after it. The killed replica's
//! namespaces wait for the handover (its Lease to expire, the ring to move, a fresh list); the
//! others' should not wait at all.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::diff::audit::{self, received_micros};
use crate::timestamps::unix_micros;

/// Per-namespace pauses in seconds, the killed replica's apart from the others'.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Pauses {
    /// The killed replica's namespaces.
    pub(super) killed: Vec<f64>,
    /// Every other namespace.
    pub(super) others: Vec<f64>,
    /// Those of `others` scaled at or after the first takeover (their replica then has the
    /// killed replica's work too).
    pub(super) others_after_takeover: Vec<f64>,
    /// Namespaces scaled after the kill where no controller wrote afterwards.
    pub(super) never_resumed: usize,
}

/// The pauses among audit `events` after `since` (µs since the epoch, the kill), with
/// `killed` the killed replica's namespaces and `takeover` the first time a survivor took
/// namespaces on after the kill.
pub(super) fn pauses(
    events: &[Value],
    since: i64,
    killed: &BTreeSet<String>,
    takeover: Option<i64>,
) -> Pauses {
    let mut scaled: BTreeMap<&str, i64> = BTreeMap::new();
    let mut writes: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for e in events {
        let Some(at) = received_micros(e).filter(|t| *t >= since) else {
            continue;
        };
        if e["stage"] != "ResponseComplete" {
            continue;
        }
        let ns = e["objectRef"]["namespace"].as_str().unwrap_or_default();
        let verb = e["verb"].as_str().unwrap_or_default();
        let resource = e["objectRef"]["resource"].as_str().unwrap_or_default();
        let sub = e["objectRef"]["subresource"].as_str().unwrap_or_default();
        if !matches!(verb, "create" | "update" | "patch" | "delete") || ns.is_empty() {
            continue;
        }
        if audit::by_controllers(e) {
            if resource != "events" {
                writes.entry(ns).or_default().push(at);
            }
        } else if resource == "deployments" && sub == "scale" {
            let first = scaled.entry(ns).or_insert(at);
            *first = (*first).min(at);
        }
    }
    let mut out = Pauses::default();
    for (ns, at) in scaled {
        let resumed = writes
            .get(ns)
            .and_then(|w| w.iter().copied().filter(|t| *t >= at).min());
        let Some(resumed) = resumed else {
            out.never_resumed += 1;
            continue;
        };
        let pause = (resumed - at) as f64 / 1e6;
        if killed.contains(ns) {
            out.killed.push(pause);
        } else {
            out.others.push(pause);
            if takeover.is_some_and(|t| at >= t) {
                out.others_after_takeover.push(pause);
            }
        }
    }
    out
}

/// Each writer's largest gap in seconds between two consecutive controller writes received in
/// `[from, to)` (µs), by the `shard-member/<identity>` of its User-Agent; writers whose identity
/// is `except` are left out. A replica that stopped (a relist, a stall) shows a gap.
pub(super) fn largest_write_gaps(
    events: &[Value],
    (from, to): (i64, i64),
    except: &str,
) -> BTreeMap<String, f64> {
    let mut at: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for e in events {
        let Some(t) = received_micros(e).filter(|t| (from..to).contains(t)) else {
            continue;
        };
        let verb = e["verb"].as_str().unwrap_or_default();
        if !matches!(verb, "create" | "update" | "patch" | "delete") || !audit::by_controllers(e) {
            continue;
        }
        let Some(member) = e["userAgent"]
            .as_str()
            .and_then(|ua| ua.split("shard-member/").nth(1))
            .map(|m| m.split_whitespace().next().unwrap_or_default())
            .filter(|m| !m.is_empty() && *m != except)
        else {
            continue;
        };
        at.entry(member.to_string()).or_default().push(t);
    }
    at.into_iter()
        .map(|(member, mut ts)| {
            ts.sort_unstable();
            let gap = ts.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
            (member, gap as f64 / 1e6)
        })
        .collect()
}

/// The time (µs) of the first "namespaces became active" line after `since` in a klog-format
/// replica log, in the year `year` (klog headers carry none).
pub(super) fn first_activation(log: &str, since: i64, year: &str) -> Option<i64> {
    log.lines()
        .filter(|l| l.contains("\"namespaces became active\""))
        .filter_map(|l| {
            // I1206 03:18:34.282563 ...
            let head = l.get(1..21)?;
            let (date, time) = head.split_once(' ')?;
            let ts = format!("{year}-{}-{}T{}Z", date.get(0..2)?, date.get(2..4)?, time);
            unix_micros(&ts)
        })
        .find(|t| *t >= since)
}

/// The median and the maximum of `v` (`None` when empty).
pub(super) fn median_max(v: &[f64]) -> Option<(f64, f64)> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let max = *v.last()?;
    Some((v[v.len() / 2], max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(user: &str, verb: &str, resource: &str, sub: &str, ns: &str, second: u32) -> Value {
        json!({"stage": "ResponseComplete", "verb": verb, "user": {"username": user},
               "objectRef": {"resource": resource, "subresource": sub, "namespace": ns},
               "requestReceivedTimestamp": format!("2026-11-28T10:00:{second:02}.000000Z")})
    }

    const KCM: &str = "system:serviceaccount:kube-system:kcm";

    #[test]
    fn a_pause_runs_from_the_scale_to_the_first_controller_write() {
        let since = unix_micros("2026-11-28T10:00:10.000000Z").expect("ts");
        let events = [
            // Before the kill: ignored.
            event("admin", "patch", "deployments", "scale", "a", 5),
            event(KCM, "update", "replicasets", "", "a", 6),
            // a (the killed replica's): scaled at 11, resumed at 30.
            event("admin", "patch", "deployments", "scale", "a", 11),
            event(KCM, "create", "events", "", "a", 12),
            event(KCM, "update", "replicasets", "", "a", 30),
            // b: scaled at 12, written at 12 and 13.
            event("admin", "patch", "deployments", "scale", "b", 12),
            event(KCM, "update", "replicasets", "", "b", 13),
            event(KCM, "create", "pods", "", "b", 12),
            // c: scaled, never written.
            event("admin", "patch", "deployments", "scale", "c", 14),
        ];
        let killed: BTreeSet<String> = ["a".to_string()].into();
        let p = pauses(&events, since, &killed, None);
        assert_eq!(
            p,
            Pauses {
                killed: vec![19.0],
                others: vec![0.0],
                others_after_takeover: vec![],
                never_resumed: 1
            }
        );
        // b was scaled at 12: after a takeover at 12, not after one at 13.
        let at = |s: &str| unix_micros(&format!("2026-11-28T10:00:{s}.000000Z"));
        assert_eq!(
            pauses(&events, since, &killed, at("12")).others_after_takeover,
            vec![0.0]
        );
        assert!(
            pauses(&events, since, &killed, at("13"))
                .others_after_takeover
                .is_empty()
        );
        assert_eq!(median_max(&[3.0, 1.0, 2.0]), Some((2.0, 3.0)));
        assert_eq!(median_max(&[]), None);
    }

    #[test]
    fn gaps_are_per_member_and_leave_the_killed_one_out() {
        let write = |member: &str, second: u32| {
            let mut e = event(KCM, "update", "replicasets", "", "a", second);
            e["userAgent"] = json!(format!(
                "kcm/v1.37.2 (linux/amd64) replicaset-controller shard-member/{member}"
            ));
            e
        };
        let events = [
            write("m1", 10),
            write("m1", 11),
            write("m1", 15),
            write("m2", 12),
            write("dead", 10),
            write("dead", 30),
            // Outside the window.
            write("m2", 40),
        ];
        let from = unix_micros("2026-11-28T10:00:10.000000Z").expect("ts");
        let to = unix_micros("2026-11-28T10:00:35.000000Z").expect("ts");
        let gaps = largest_write_gaps(&events, (from, to), "dead");
        assert_eq!(gaps.get("m1"), Some(&4.0));
        assert_eq!(gaps.get("m2"), Some(&0.0));
        assert!(!gaps.contains_key("dead"));
    }

    #[test]
    fn the_first_activation_after_the_kill_is_read_from_a_klog_line() {
        let log = "I1206 03:18:30.000000   17691 shard_member.rs:286] \"namespaces became active\" ranges=3\n\
                   I1206 03:18:34.282563   17691 shard_member.rs:286] \"namespaces became active\" ranges=33\n";
        let since = unix_micros("2026-12-06T03:18:31.000000Z").expect("ts");
        assert_eq!(
            first_activation(log, since, "2026"),
            unix_micros("2026-12-06T03:18:34.282563Z")
        );
        assert_eq!(first_activation(log, since + 10_000_000, "2026"), None);
    }
}
