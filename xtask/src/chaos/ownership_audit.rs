//! Ownership of a namespace against the writes the server received, from its audit log
//! (kube-apiserver's, or kcm-testenv's in the same format): every controller write to the
//! namespace must have been received while its writer owned it.
//!
//! A sharded replica's User-Agent ends with `shard-member/<identity>`, so the audit log names
//! the member behind every request. Ownership comes from the replicas' logs (`-v 2`): a
//! member's "ranges that became active" line covering the namespace, logged before its shard
//! gate opens, starts its ownership; the next such line of another member ends it. The server
//! and the replicas run on one host, so the audit log's `requestReceivedTimestamp` and the
//! logs' klog times share a clock. Unlike the check of the logs alone
//! ([`super::ownership_log`]), the time is when the server received the write, not when its
//! writer logged the answer: a write a paused replica had sent before the pause is inside its
//! ownership here, one it sent after being continued is not.

use serde_json::Value;

use super::ownership_log::Ownership;
use super::terms_audit::{CONTROLLED, WRITE_VERBS, str_at};
use crate::timestamps::unix_seconds;

/// The audit log's view of one namespace's writes.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct AuditOwnership {
    /// Writes of the members to the namespace that the server accepted.
    pub(crate) writes: usize,
    /// Accepted writes received while another member (or nobody) owned the namespace.
    pub(crate) outside: Vec<String>,
    /// Writes received outside their writer's ownership that the server refused (a conflict,
    /// a failed precondition): nothing changed, but counted.
    pub(crate) refused_outside: usize,
}

/// The member identity in a sharded replica's User-Agent.
fn member_of(user_agent: &str) -> Option<&str> {
    let (_, rest) = user_agent.split_once("shard-member/")?;
    rest.split_whitespace().next()
}

/// Seconds since midnight UTC of an audit timestamp (`2026-11-28T10:40:01.123456Z`): the
/// clock of the replicas' klog lines, which carry no date.
fn seconds_of_day(at: &str) -> Option<f64> {
    Some(unix_seconds(at)?.rem_euclid(86_400.0))
}

/// Checks the members' writes to namespace `ns` among the audit `events` against the
/// ownerships read from their logs.
pub(crate) fn audit_ownership(events: &[Value], ns: &str, owners: &[Ownership]) -> AuditOwnership {
    let mut activations: Vec<(f64, &str)> = owners
        .iter()
        .filter_map(|o| Some((o, o.member.as_deref()?)))
        .flat_map(|(o, member)| o.activations.iter().map(move |a| (*a, member)))
        .collect();
    activations.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = AuditOwnership::default();
    for e in events {
        if e["stage"] != "ResponseComplete"
            || str_at(e, &["objectRef", "namespace"]) != ns
            || !WRITE_VERBS.contains(&str_at(e, &["verb"]))
            || !CONTROLLED.contains(&str_at(e, &["objectRef", "resource"]))
        {
            continue;
        }
        let Some(writer) = member_of(str_at(e, &["userAgent"])) else {
            continue;
        };
        let received = str_at(e, &["requestReceivedTimestamp"]);
        let Some(at) = seconds_of_day(received) else {
            continue;
        };
        let accepted = e["responseStatus"]["code"]
            .as_i64()
            .is_some_and(|c| (200..300).contains(&c));
        if accepted {
            out.writes += 1;
        }
        let owner = activations
            .iter()
            .take_while(|(a, _)| *a <= at)
            .last()
            .map(|(_, m)| *m);
        if owner == Some(writer) {
            continue;
        }
        if !accepted {
            out.refused_outside += 1;
            continue;
        }
        let object = str_at(e, &["objectRef", "name"]);
        out.outside.push(format!(
            "{writer} {} {}/{} received {received} while {} owned the namespace",
            str_at(e, &["verb"]),
            str_at(e, &["objectRef", "resource"]),
            if object.is_empty() { "(new)" } else { object },
            owner.unwrap_or("nobody")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(member: &str, at: &str, code: i64) -> Value {
        json!({"stage": "ResponseComplete", "verb": "create",
               "userAgent": format!("kcm/v1.37.2 (linux/amd64) kubernetes/abc/replicaset-controller shard-member/{member}"),
               "objectRef": {"resource": "pods", "namespace": "chaos"},
               "responseStatus": {"code": code},
               "requestReceivedTimestamp": at, "stageTimestamp": at})
    }

    fn owner(member: &str, activations: &[f64]) -> Ownership {
        Ownership {
            name: format!("kcm-{member}"),
            member: Some(member.into()),
            activations: activations.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn a_write_belongs_to_the_owner_when_the_server_received_it() {
        // a owns from 10:00:01, b from 10:00:04.
        let owners = [owner("a_1", &[36001.0]), owner("b_2", &[36004.0])];
        let events = [
            write("a_1", "2026-11-28T10:00:02.000000Z", 201),
            // Sent by a before its pause, received before b took over: inside.
            write("a_1", "2026-11-28T10:00:03.999000Z", 201),
            write("b_2", "2026-11-28T10:00:04.500000Z", 201),
            // a after b took over: accepted is a violation, refused is only counted.
            write("a_1", "2026-11-28T10:00:05.000000Z", 201),
            write("a_1", "2026-11-28T10:00:05.100000Z", 409),
            // Before anyone owned the namespace.
            write("b_2", "2026-11-28T10:00:00.500000Z", 201),
        ];
        let got = audit_ownership(&events, "chaos", &owners);
        assert_eq!(got.writes, 5);
        assert_eq!(got.refused_outside, 1);
        assert_eq!(got.outside.len(), 2, "{:?}", got.outside);
        assert!(got.outside[0].starts_with("a_1 create pods/(new) received 2026-11-28T10:00:05"));
        assert!(got.outside[0].ends_with("while b_2 owned the namespace"));
        assert!(got.outside[1].ends_with("while nobody owned the namespace"));
        // Other namespaces, reads and writers without a member identity are not counted.
        let mut other = write("a_1", "2026-11-28T10:00:05.000000Z", 201);
        other["objectRef"]["namespace"] = json!("kube-system");
        let mut kubectl = write("a_1", "2026-11-28T10:00:05.000000Z", 201);
        kubectl["userAgent"] = json!("kubectl/v1.37.2");
        let mut get = write("a_1", "2026-11-28T10:00:05.000000Z", 200);
        get["verb"] = json!("get");
        assert_eq!(
            audit_ownership(&[other, kubectl, get], "chaos", &owners),
            AuditOwnership::default()
        );
    }

    #[test]
    fn audit_times_and_user_agents_parse() {
        assert_eq!(
            seconds_of_day("2026-11-28T10:00:01.250000Z"),
            Some(36001.25)
        );
        assert_eq!(seconds_of_day("garbage"), None);
        assert_eq!(member_of("x/y shard-member/host_1234"), Some("host_1234"));
        assert_eq!(member_of("kubectl/v1.37.2"), None);
    }
}
