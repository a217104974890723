//! Leader terms and writes as kube-apiserver saw them, from its audit log: a clock-free check
//! (one clock, the server's) that no two kcm replicas wrote in overlapping terms.
//!
//! Each replica authenticates as its own ServiceAccount, so the audit log names the writer of
//! every request. A replica's term starts with a successful write of the Lease by it after one by
//! another replica (an acquisition; its renewals continue it) and ends with the next successful
//! Lease write by another replica. A write belongs to the term in force when the server received
//! it: the holder of the latest Lease write committed (`stageTimestamp`) at or before the write's
//! `requestReceivedTimestamp`. Audit timestamps are RFC 3339 in UTC with microseconds and a fixed
//! width, so they order as strings.

use serde_json::Value;

/// What the audit log says about one Lease and the writes of its candidates.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct AuditTerms {
    /// Acquisitions in server order: `(commit time, user)`.
    pub(crate) acquisitions: Vec<(String, String)>,
    /// Successful writes of Deployments, ReplicaSets, pods and events by the candidates.
    pub(crate) writes: usize,
    /// Writes received outside their writer's term, one line each.
    pub(crate) outside: Vec<String>,
}

/// The string at `path` in an audit event, empty when absent.
pub(super) fn str_at<'a>(e: &'a Value, path: &[&str]) -> &'a str {
    let mut v = e;
    for p in path {
        v = &v[*p];
    }
    v.as_str().unwrap_or_default()
}

fn succeeded(e: &Value) -> bool {
    e["responseStatus"]["code"]
        .as_i64()
        .is_some_and(|c| (200..300).contains(&c))
}

pub(super) const WRITE_VERBS: &[&str] =
    &["create", "update", "patch", "delete", "deletecollection"];

/// What the controllers write (with any subresource); a candidate's other requests, such as the
/// SelfSubjectReview kcm makes at start to log who it is, change no state.
pub(super) const CONTROLLED: &[&str] = &["deployments", "replicasets", "pods", "events"];

/// Reads the terms of Lease `namespace/lease` and the writes of `users` among the audit `events`.
pub(crate) fn audit_terms(
    events: &[Value],
    namespace: &str,
    lease: &str,
    users: &[String],
) -> AuditTerms {
    let done: Vec<&Value> = events
        .iter()
        .filter(|e| e["stage"] == "ResponseComplete" && succeeded(e))
        .filter(|e| WRITE_VERBS.contains(&str_at(e, &["verb"])))
        .filter(|e| users.iter().any(|u| u == str_at(e, &["user", "username"])))
        .collect();
    let is_lease = |e: &Value| {
        str_at(e, &["objectRef", "resource"]) == "leases"
            && str_at(e, &["objectRef", "namespace"]) == namespace
            && str_at(e, &["objectRef", "name"]) == lease
    };
    let mut lease_writes: Vec<(&str, &str)> = done
        .iter()
        .filter(|e| is_lease(e))
        .map(|e| {
            (
                str_at(e, &["stageTimestamp"]),
                str_at(e, &["user", "username"]),
            )
        })
        .collect();
    lease_writes.sort();
    let mut out = AuditTerms::default();
    for (at, user) in &lease_writes {
        if out.acquisitions.last().is_none_or(|(_, u)| u != user) {
            out.acquisitions.push((at.to_string(), user.to_string()));
        }
    }
    for e in done
        .iter()
        .filter(|e| CONTROLLED.contains(&str_at(e, &["objectRef", "resource"])))
    {
        out.writes += 1;
        let received = str_at(e, &["requestReceivedTimestamp"]);
        let writer = str_at(e, &["user", "username"]);
        let holder = out
            .acquisitions
            .iter()
            .rev()
            .find(|(at, _)| at.as_str() <= received)
            .map(|(_, u)| u.as_str());
        if holder != Some(writer) {
            out.outside.push(format!(
                "{writer} {} {}/{} received {received} while {} held the Lease",
                str_at(e, &["verb"]),
                str_at(e, &["objectRef", "resource"]),
                str_at(e, &["objectRef", "name"]),
                holder.unwrap_or("nobody")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(user: &str, verb: &str, resource: &str, name: &str, at: &str, code: i64) -> Value {
        json!({"stage": "ResponseComplete", "verb": verb,
               "user": {"username": user},
               "objectRef": {"resource": resource, "namespace": "ns", "name": name},
               "responseStatus": {"code": code},
               "requestReceivedTimestamp": at, "stageTimestamp": at})
    }

    fn users() -> Vec<String> {
        vec!["a".into(), "b".into()]
    }

    #[test]
    fn writes_inside_their_terms_pass() {
        let events = [
            event(
                "a",
                "create",
                "leases",
                "l",
                "2026-01-01T00:00:01.000000Z",
                201,
            ),
            event(
                "a",
                "update",
                "replicasets",
                "x",
                "2026-01-01T00:00:01.500000Z",
                200,
            ),
            event(
                "a",
                "update",
                "leases",
                "l",
                "2026-01-01T00:00:02.000000Z",
                200,
            ),
            event(
                "b",
                "update",
                "leases",
                "l",
                "2026-01-01T00:00:05.000000Z",
                409,
            ),
            event(
                "b",
                "update",
                "leases",
                "l",
                "2026-01-01T00:00:06.000000Z",
                200,
            ),
            event(
                "b",
                "create",
                "pods",
                "p",
                "2026-01-01T00:00:06.100000Z",
                201,
            ),
            // A read, another user's write, another Lease, a review: not counted.
            event("a", "get", "pods", "p", "2026-01-01T00:00:07.000000Z", 200),
            event(
                "b",
                "update",
                "leases",
                "other",
                "2026-01-01T00:00:07.000000Z",
                200,
            ),
            event(
                "a",
                "create",
                "selfsubjectreviews",
                "",
                "2026-01-01T00:00:07.000000Z",
                201,
            ),
            event(
                "c",
                "delete",
                "pods",
                "p",
                "2026-01-01T00:00:07.000000Z",
                200,
            ),
        ];
        let t = audit_terms(&events, "ns", "l", &users());
        assert_eq!(t.acquisitions.len(), 2, "{t:?}");
        assert_eq!(t.writes, 2);
        assert!(t.outside.is_empty(), "{t:?}");
    }

    #[test]
    fn a_write_after_another_acquired_or_before_any_term_is_reported() {
        let events = [
            event(
                "a",
                "create",
                "pods",
                "early",
                "2026-01-01T00:00:00.500000Z",
                201,
            ),
            event(
                "a",
                "create",
                "leases",
                "l",
                "2026-01-01T00:00:01.000000Z",
                201,
            ),
            event(
                "b",
                "update",
                "leases",
                "l",
                "2026-01-01T00:00:05.000000Z",
                200,
            ),
            event(
                "a",
                "update",
                "replicasets",
                "late",
                "2026-01-01T00:00:05.000001Z",
                200,
            ),
            // A failed write is no write.
            event(
                "a",
                "update",
                "replicasets",
                "x",
                "2026-01-01T00:00:06.000000Z",
                409,
            ),
        ];
        let t = audit_terms(&events, "ns", "l", &users());
        assert_eq!(t.writes, 2);
        assert_eq!(t.outside.len(), 2, "{t:?}");
        assert!(t.outside[0].contains("early") && t.outside[0].contains("nobody"));
        assert!(t.outside[1].contains("late") && t.outside[1].contains("while b held"));
    }
}
