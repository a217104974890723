//! Pure parts of `cargo xtask bench controllers` read from kube-apiserver's audit log: the
//! events slimmed as they are read, per-phase write accounting (through the differential
//! suite's audit reader; on kcm-testenv, [`super::testenv_counters`] gives the same figures),
//! and the latency from a Deployment change to its ReplicaSet's first write.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::diff::audit::{self, received_micros};

/// One audit log line as the benchmark keeps it: a completed request of one of `users`, with
/// only the fields [`phase_writes`] and [`change_to_rs_write_ms`] read (stage, verb, user,
/// object reference, response code, time received, and the response's name, which a create's
/// object reference lacks). Lines of other users (the simulated nodes' pod status writes, most
/// of a large run's log) are dropped before they are parsed: `users` are matched as the
/// compact `"username":"…"` kube-apiserver writes.
pub fn slim_event(line: &str, users: &[&str]) -> Option<Value> {
    if !users
        .iter()
        .any(|u| line.contains(&format!("\"username\":\"{u}\"")))
    {
        return None;
    }
    let e: SlimEvent = serde_json::from_str(line).ok()?;
    if e.stage != "ResponseComplete" {
        return None;
    }
    let name = e
        .response_object
        .and_then(|o| o.metadata)
        .and_then(|m| m.name);
    Some(serde_json::json!({
        "stage": e.stage,
        "verb": e.verb,
        "user": {"username": e.user.username},
        "objectRef": e.object_ref,
        "responseStatus": {"code": e.response_status.and_then(|s| s.code)},
        "requestReceivedTimestamp": e.request_received_timestamp,
        "responseObject": {"metadata": {"name": name}},
    }))
}

/// The fields of an audit event [`slim_event`] keeps; the rest (request and response bodies)
/// is skipped while parsing.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SlimEvent {
    stage: String,
    #[serde(default)]
    verb: String,
    user: SlimUser,
    #[serde(default)]
    object_ref: Option<SlimRef>,
    #[serde(default)]
    response_status: Option<SlimStatus>,
    #[serde(default)]
    request_received_timestamp: Option<String>,
    #[serde(default)]
    response_object: Option<SlimObject>,
}

/// The object reference's fields the figures read (no API version, uid or resourceVersion).
#[derive(serde::Deserialize, serde::Serialize)]
struct SlimRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subresource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

#[derive(serde::Deserialize)]
struct SlimUser {
    #[serde(default)]
    username: String,
}

#[derive(serde::Deserialize)]
struct SlimStatus {
    #[serde(default)]
    code: Option<i64>,
}

#[derive(serde::Deserialize)]
struct SlimObject {
    #[serde(default)]
    metadata: Option<SlimMeta>,
}

#[derive(serde::Deserialize)]
struct SlimMeta {
    #[serde(default)]
    name: Option<String>,
}

/// The controllers' write figures of one phase.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PhaseWrites {
    /// `verb resource[/subresource] code` → count (events included).
    pub counts: BTreeMap<String, u64>,
    /// Writes other than to events.
    pub total: u64,
    /// Answers 409 Conflict.
    pub conflicts: u64,
}

/// The controllers' writes to the namespaces `namespaces` received in `[from, to)`
/// (microseconds since the epoch), summed over them.
pub fn phase_writes(events: &[Value], namespaces: &[String], from: i64, to: i64) -> PhaseWrites {
    let in_phase: Vec<&Value> = events
        .iter()
        .filter(|e| received_micros(e).is_some_and(|t| t >= from && t < to))
        .collect();
    let mut counts = BTreeMap::new();
    for ns in namespaces {
        for (key, n) in audit::writes(in_phase.iter().copied(), ns).counts {
            *counts.entry(key).or_insert(0) += n;
        }
    }
    totals(counts)
}

/// Totals of per-key write counts: all but events, and the 409s.
pub(super) fn totals(counts: BTreeMap<String, u64>) -> PhaseWrites {
    let total = counts
        .iter()
        .filter(|(k, _)| !k.split(' ').nth(1).unwrap_or("").starts_with("events"))
        .map(|(_, n)| n)
        .sum();
    let conflicts = counts
        .iter()
        .filter(|(k, _)| k.ends_with(" 409"))
        .map(|(_, n)| n)
        .sum();
    PhaseWrites {
        counts,
        total,
        conflicts,
    }
}

/// Per Deployment change in `namespaces` by `user` (create, update or patch of the Deployment
/// itself), the milliseconds until the first successful ReplicaSet write (create or update, any
/// subresource) by someone else to a ReplicaSet named `<deployment>-…` in its namespace.
/// Changes never followed by one are left out.
pub fn change_to_rs_write_ms(events: &[Value], namespaces: &[String], user: &str) -> Vec<f64> {
    let ns_of = |e: &Value| e["objectRef"]["namespace"].as_str().map(str::to_string);
    let done = |e: &Value| {
        e["stage"] == "ResponseComplete" && ns_of(e).is_some_and(|ns| namespaces.contains(&ns))
    };
    // (namespace, Deployment) → times of its ReplicaSets' writes.
    let mut rs_writes: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
    for e in events.iter().filter(|e| done(e)) {
        let ok = e["responseStatus"]["code"]
            .as_i64()
            .is_some_and(|c| (200..300).contains(&c));
        if e["objectRef"]["resource"] != "replicasets"
            || e["user"]["username"] == user
            || !ok
            || !matches!(e["verb"].as_str(), Some("create" | "update" | "patch"))
        {
            continue;
        }
        let (Some(name), Some(t)) = (written_name(e), received_micros(e)) else {
            continue;
        };
        if let Some((owner, _hash)) = name.rsplit_once('-') {
            let ns = ns_of(e).unwrap_or_default();
            rs_writes
                .entry((ns, owner.to_string()))
                .or_default()
                .push(t);
        }
    }
    for v in rs_writes.values_mut() {
        v.sort_unstable();
    }
    let mut out = Vec::new();
    for e in events.iter().filter(|e| done(e)) {
        if e["objectRef"]["resource"] != "deployments"
            || e["user"]["username"] != user
            || !e["objectRef"]["subresource"]
                .as_str()
                .unwrap_or("")
                .is_empty()
            || !matches!(e["verb"].as_str(), Some("create" | "update" | "patch"))
        {
            continue;
        }
        let (Some(name), Some(t)) = (written_name(e), received_micros(e)) else {
            continue;
        };
        let key = (ns_of(e).unwrap_or_default(), name.to_string());
        let first = rs_writes
            .get(&key)
            .and_then(|w| w.iter().find(|&&x| x >= t));
        if let Some(first) = first {
            out.push((first - t) as f64 / 1000.0);
        }
    }
    out
}

/// The name of the object an audit event wrote: a create's object reference has none, its
/// response has it.
fn written_name(e: &Value) -> Option<&str> {
    e["objectRef"]["name"]
        .as_str()
        .or_else(|| e["responseObject"]["metadata"]["name"].as_str())
}

/// The `q`-quantile (0..=1) of `values` by nearest rank; `None` for none.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(t: &str, user: &str, verb: &str, res: &str, sub: &str, name: &str, code: i64) -> Value {
        in_ns("b", ev_in(t, user, verb, res, sub, name, code))
    }

    fn ev_in(
        t: &str,
        user: &str,
        verb: &str,
        res: &str,
        sub: &str,
        name: &str,
        code: i64,
    ) -> Value {
        json!({"stage": "ResponseComplete", "requestReceivedTimestamp": t,
               "user": {"username": user}, "verb": verb,
               "objectRef": {"resource": res, "subresource": sub, "name": name},
               "responseStatus": {"code": code}})
    }

    fn in_ns(ns: &str, mut e: Value) -> Value {
        e["objectRef"]["namespace"] = ns.into();
        e
    }

    fn names(ns: &[&str]) -> Vec<String> {
        ns.iter().map(|n| n.to_string()).collect()
    }

    const RS: &str = "system:serviceaccount:kube-system:replicaset-controller";
    const DC: &str = "system:serviceaccount:kube-system:deployment-controller";
    const ADMIN: &str = "kcm-rs-admin";

    #[test]
    fn writes_are_split_by_phase_with_totals_and_conflicts() {
        let events = vec![
            ev("2026-01-01T00:00:01Z", RS, "create", "pods", "", "", 201),
            ev(
                "2026-01-01T00:00:02Z",
                RS,
                "update",
                "replicasets",
                "status",
                "w-1",
                409,
            ),
            ev("2026-01-01T00:00:02Z", DC, "create", "events", "", "", 201),
            ev(
                "2026-01-01T00:00:03Z",
                ADMIN,
                "create",
                "deployments",
                "",
                "w",
                201,
            ),
            ev("2026-01-01T00:00:05Z", RS, "create", "pods", "", "", 201),
            // Another namespace: counted only when asked for.
            in_ns(
                "c",
                ev_in("2026-01-01T00:00:03Z", RS, "create", "pods", "", "", 201),
            ),
        ];
        let t = |s: &str| crate::timestamps::unix_micros(s).unwrap_or_default();
        let first = phase_writes(
            &events,
            &names(&["b"]),
            t("2026-01-01T00:00:00Z"),
            t("2026-01-01T00:00:04Z"),
        );
        assert_eq!(first.counts["create pods 201"], 1);
        assert_eq!(first.counts["create events 201"], 1);
        assert_eq!(
            first.total, 2,
            "events are left out, the admin is no controller"
        );
        assert_eq!(first.conflicts, 1);
        let both = phase_writes(
            &events,
            &names(&["b", "c"]),
            t("2026-01-01T00:00:00Z"),
            t("2026-01-01T00:00:04Z"),
        );
        assert_eq!(both.counts["create pods 201"], 2);
        assert_eq!((both.total, both.conflicts), (3, 1));
        let second = phase_writes(
            &events,
            &names(&["b"]),
            t("2026-01-01T00:00:04Z"),
            t("2026-01-01T00:00:09Z"),
        );
        assert_eq!((second.total, second.conflicts), (1, 0));
    }

    #[test]
    fn each_change_pairs_with_the_first_later_write_of_its_replica_sets() {
        let events = vec![
            ev(
                "2026-01-01T00:00:01.000Z",
                ADMIN,
                "create",
                "deployments",
                "",
                "web",
                201,
            ),
            ev(
                "2026-01-01T00:00:01.010Z",
                DC,
                "create",
                "replicasets",
                "",
                "web-aaa",
                201,
            ),
            ev(
                "2026-01-01T00:00:01.020Z",
                DC,
                "update",
                "replicasets",
                "",
                "web-aaa",
                200,
            ),
            // Another Deployment's ReplicaSet and a failed write do not count.
            ev(
                "2026-01-01T00:00:02.000Z",
                ADMIN,
                "patch",
                "deployments",
                "",
                "web",
                200,
            ),
            ev(
                "2026-01-01T00:00:02.001Z",
                DC,
                "update",
                "replicasets",
                "",
                "api-bbb",
                200,
            ),
            ev(
                "2026-01-01T00:00:02.002Z",
                DC,
                "update",
                "replicasets",
                "",
                "web-aaa",
                409,
            ),
            ev(
                "2026-01-01T00:00:02.050Z",
                DC,
                "create",
                "replicasets",
                "",
                "web-ccc",
                201,
            ),
            // A status write of the Deployment is not a change, nor is a controller's write.
            ev(
                "2026-01-01T00:00:03.000Z",
                ADMIN,
                "update",
                "deployments",
                "status",
                "web",
                200,
            ),
            ev(
                "2026-01-01T00:00:03.000Z",
                DC,
                "update",
                "deployments",
                "",
                "web",
                200,
            ),
            // Never followed by a ReplicaSet write: left out.
            ev(
                "2026-01-01T00:00:04.000Z",
                ADMIN,
                "create",
                "deployments",
                "",
                "api",
                201,
            ),
        ];
        assert_eq!(
            change_to_rs_write_ms(&events, &names(&["b"]), ADMIN),
            [10.0, 50.0]
        );
        assert!(change_to_rs_write_ms(&events, &names(&["other"]), ADMIN).is_empty());
    }

    #[test]
    fn slim_events_give_the_answers_of_whole_ones() {
        // Whole events as kube-apiserver writes them: bodies, annotations, a create whose name
        // is only in the response.
        let whole = |t: &str, user: &str, verb: &str, res: &str, sub: &str, name: &str, code| {
            let mut e = ev(t, user, verb, res, sub, name, code);
            e["annotations"] = json!({"authorization.k8s.io/decision": "allow"});
            e["requestObject"] = json!({"spec": {"replicas": 10, "template": {"x": "y"}}});
            e["responseObject"] = json!({"metadata": {"name": name, "uid": "u"}, "spec": {}});
            if verb == "create" {
                e["objectRef"].as_object_mut().map(|o| o.remove("name"));
            }
            e
        };
        let t = "2026-01-01T00:00:01";
        let events = vec![
            whole(
                &format!("{t}.000Z"),
                ADMIN,
                "create",
                "deployments",
                "",
                "web",
                201,
            ),
            whole(
                &format!("{t}.010Z"),
                DC,
                "create",
                "replicasets",
                "",
                "web-aaa",
                201,
            ),
            whole(
                &format!("{t}.020Z"),
                RS,
                "create",
                "pods",
                "",
                "web-aaa-x",
                201,
            ),
            whole(
                &format!("{t}.030Z"),
                RS,
                "update",
                "replicasets",
                "status",
                "web-aaa",
                409,
            ),
            whole(
                &format!("{t}.040Z"),
                DC,
                "create",
                "events",
                "",
                "web.1",
                201,
            ),
            // The simulated nodes: dropped before parsing.
            whole(
                &format!("{t}.050Z"),
                "system:node:n1",
                "update",
                "pods",
                "status",
                "p",
                200,
            ),
        ];
        let mut lines: Vec<String> = events.iter().map(Value::to_string).collect();
        let mut received = events[0].clone();
        received["stage"] = json!("RequestReceived");
        lines.push(received.to_string());
        lines.push("not json".to_string());
        let users = [ADMIN, DC, RS];
        let slim: Vec<Value> = lines.iter().filter_map(|l| slim_event(l, &users)).collect();
        assert_eq!(
            slim.len(),
            5,
            "the node's write, the received stage and junk are dropped"
        );
        assert!(slim.iter().all(|e| e.get("requestObject").is_none()));
        let ns = names(&["b"]);
        let (from, to) = (0, i64::MAX);
        assert_eq!(
            phase_writes(&slim, &ns, from, to),
            phase_writes(&events, &ns, from, to)
        );
        assert_eq!(phase_writes(&slim, &ns, from, to).total, 3);
        assert_eq!(
            change_to_rs_write_ms(&slim, &ns, ADMIN),
            change_to_rs_write_ms(&events, &ns, ADMIN)
        );
        assert_eq!(change_to_rs_write_ms(&slim, &ns, ADMIN), [10.0]);
    }

    #[test]
    fn a_change_pairs_only_with_replica_sets_of_its_own_namespace() {
        let at = |ns: &str, t: &str, user: &str, res: &str, name: &str| {
            in_ns(ns, ev_in(t, user, "create", res, "", name, 201))
        };
        let events = vec![
            at("b", "2026-01-01T00:00:01.000Z", ADMIN, "deployments", "web"),
            at("c", "2026-01-01T00:00:01.000Z", ADMIN, "deployments", "web"),
            // Namespace c's web gets its ReplicaSet first; b's waits 30 ms more.
            at(
                "c",
                "2026-01-01T00:00:01.005Z",
                DC,
                "replicasets",
                "web-ccc",
            ),
            at(
                "b",
                "2026-01-01T00:00:01.035Z",
                DC,
                "replicasets",
                "web-bbb",
            ),
            // A namespace not measured: neither its change nor its write counts.
            at("d", "2026-01-01T00:00:01.000Z", ADMIN, "deployments", "web"),
            at(
                "d",
                "2026-01-01T00:00:01.001Z",
                DC,
                "replicasets",
                "web-ddd",
            ),
        ];
        let mut ms = change_to_rs_write_ms(&events, &names(&["b", "c"]), ADMIN);
        ms.sort_by(f64::total_cmp);
        assert_eq!(ms, [5.0, 35.0]);
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), Some(50.0));
        assert_eq!(quantile(&v, 0.99), Some(99.0));
        assert_eq!(quantile(&[7.0], 0.99), Some(7.0));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
