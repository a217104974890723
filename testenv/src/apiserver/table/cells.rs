//! Row cells per kind (upstream `printers.go` print functions, server-side wide form).

use serde_json::{Value, json};

use super::human_duration::{human_duration, since};
use crate::registry::events_v1;
use crate::registry::meta::{self, at, selector_string};
use crate::registry::{ResourceInfo, StorageId};

fn int(v: &Value, path: &[&str]) -> i64 {
    at(v, path).and_then(Value::as_i64).unwrap_or(0)
}

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

fn or_none(x: &str) -> String {
    if x.is_empty() {
        "<none>".into()
    } else {
        x.to_string()
    }
}

fn template_containers(v: &Value) -> (String, String) {
    let cs = at(v, &["spec", "template", "spec", "containers"]).and_then(Value::as_array);
    let names: Vec<&str> = cs.into_iter().flatten().map(|c| s(c, &["name"])).collect();
    let images: Vec<&str> = cs.into_iter().flatten().map(|c| s(c, &["image"])).collect();
    (names.join(","), images.join(","))
}

/// The pod's printed status reason.
pub fn pod_reason(v: &Value) -> String {
    let mut reason = s(v, &["status", "phase"]).to_string();
    let sr = s(v, &["status", "reason"]);
    if !sr.is_empty() {
        reason = sr.to_string();
    }
    let mut has_running = false;
    let statuses = at(v, &["status", "containerStatuses"]).and_then(Value::as_array);
    for c in statuses.into_iter().flatten().rev() {
        let w = s(c, &["state", "waiting", "reason"]);
        let t = at(c, &["state", "terminated"]);
        if !w.is_empty() {
            reason = w.to_string();
        } else if let Some(t) = t {
            let tr = s(t, &["reason"]);
            reason = if !tr.is_empty() {
                tr.to_string()
            } else if int(t, &["signal"]) != 0 {
                format!("Signal:{}", int(t, &["signal"]))
            } else {
                format!("ExitCode:{}", int(t, &["exitCode"]))
            };
        } else if c.get("ready").and_then(Value::as_bool) == Some(true)
            && at(c, &["state", "running"]).is_some()
        {
            has_running = true;
        }
    }
    if reason == "Completed" && has_running {
        let ready = at(v, &["status", "conditions"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|c| s(c, &["type"]) == "Ready" && s(c, &["status"]) == "True");
        reason = if ready {
            "Running".into()
        } else {
            "NotReady".into()
        };
    }
    if at(v, &["metadata", "deletionTimestamp"]).is_some() {
        reason = if sr == "NodeLost" {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    reason
}

pub(super) fn cells(res: &ResourceInfo, v: &Value) -> Vec<Value> {
    if let Some(c) = super::more_kinds::cells(res, v) {
        return c;
    }
    let name = meta::name_of(v);
    let age = since(at(v, &["metadata", "creationTimestamp"]));
    match res.storage {
        StorageId::CUSTOMRESOURCEDEFINITIONS => super::custom::crd_cells(v),
        _ if res.storage.is_custom() => match res.custom {
            Some(cv) => super::custom::custom_cells(cv, v),
            None => vec![json!(name), json!(age)],
        },
        StorageId::DEPLOYMENTS => {
            let (c, i) = template_containers(v);
            let ready = format!(
                "{}/{}",
                int(v, &["status", "readyReplicas"]),
                int(v, &["spec", "replicas"])
            );
            vec![
                json!(name),
                json!(ready),
                json!(int(v, &["status", "updatedReplicas"])),
                json!(int(v, &["status", "availableReplicas"])),
                json!(age),
                json!(c),
                json!(i),
                json!(selector_string(at(v, &["spec", "selector"]))),
            ]
        }
        StorageId::REPLICASETS => {
            let (c, i) = template_containers(v);
            vec![
                json!(name),
                json!(int(v, &["spec", "replicas"])),
                json!(int(v, &["status", "replicas"])),
                json!(int(v, &["status", "readyReplicas"])),
                json!(age),
                json!(c),
                json!(i),
                json!(selector_string(at(v, &["spec", "selector"]))),
            ]
        }
        StorageId::PODS => {
            let total = at(v, &["spec", "containers"])
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let statuses = at(v, &["status", "containerStatuses"]).and_then(Value::as_array);
            let ready = statuses
                .into_iter()
                .flatten()
                .filter(|c| c.get("ready").and_then(Value::as_bool) == Some(true))
                .count();
            let restarts: i64 = statuses
                .into_iter()
                .flatten()
                .map(|c| int(c, &["restartCount"]))
                .sum();
            let last = statuses
                .into_iter()
                .flatten()
                .filter_map(|c| at(c, &["lastState", "terminated", "finishedAt"]))
                .filter_map(|t| t.as_str().and_then(meta::parse_time))
                .max();
            let restarts_cell = match last {
                Some(t) if restarts > 0 => format!(
                    "{restarts} ({} ago)",
                    human_duration(jiff::Timestamp::now().as_second() - t.as_second())
                ),
                _ => restarts.to_string(),
            };
            let gates = at(v, &["spec", "readinessGates"])
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let gates_cell = if gates == 0 {
                "<none>".to_string()
            } else {
                let conds = at(v, &["status", "conditions"]).and_then(Value::as_array);
                let ok = at(v, &["spec", "readinessGates"])
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|g| {
                        conds.into_iter().flatten().any(|c| {
                            c.get("type") == g.get("conditionType") && s(c, &["status"]) == "True"
                        })
                    })
                    .count();
                format!("{ok}/{gates}")
            };
            vec![
                json!(name),
                json!(format!("{ready}/{total}")),
                json!(pod_reason(v)),
                json!(restarts_cell),
                json!(age),
                json!(or_none(s(v, &["status", "podIP"]))),
                json!(or_none(s(v, &["spec", "nodeName"]))),
                json!(or_none(s(v, &["status", "nominatedNodeName"]))),
                json!(gates_cell),
            ]
        }
        StorageId::NAMESPACES => vec![json!(name), json!(s(v, &["status", "phase"])), json!(age)],
        StorageId::EVENTS => {
            // a stored core/v1 event; events.k8s.io objects are converted back for printing
            let core = if res.is_events_v1() {
                events_v1::to_core(v.clone())
            } else {
                v.clone()
            };
            let v = &core;
            let mut first = since(at(v, &["firstTimestamp"]));
            if at(v, &["firstTimestamp"]).is_none_or(Value::is_null) {
                first = since(at(v, &["eventTime"]));
            }
            let mut last = since(at(v, &["lastTimestamp"]));
            if at(v, &["lastTimestamp"]).is_none_or(Value::is_null) {
                last = first.clone();
            }
            let mut count = int(v, &["count"]);
            if let Some(series) = v.get("series").filter(|x| !x.is_null()) {
                last = since(series.get("lastObservedTime"));
                count = int(series, &["count"]);
            } else if count == 0 {
                count = 1;
            }
            let kind = s(v, &["involvedObject", "kind"]).to_lowercase();
            let iname = s(v, &["involvedObject", "name"]);
            let target = if iname.is_empty() {
                kind
            } else {
                format!("{kind}/{iname}")
            };
            let comp = s(v, &["source", "component"]);
            let host = s(v, &["source", "host"]);
            let source = match (comp.is_empty(), host.is_empty()) {
                (false, false) => format!("{comp}, {host}"),
                (false, true) => comp.to_string(),
                _ => {
                    let rc = s(v, &["reportingComponent"]);
                    let ri = s(v, &["reportingInstance"]);
                    if ri.is_empty() {
                        rc.to_string()
                    } else {
                        format!("{rc}, {ri}")
                    }
                }
            };
            vec![
                json!(last),
                json!(s(v, &["type"])),
                json!(s(v, &["reason"])),
                json!(target),
                json!(s(v, &["involvedObject", "fieldPath"])),
                json!(source),
                json!(s(v, &["message"]).trim()),
                json!(first),
                json!(count),
                json!(name),
            ]
        }
        StorageId::LEASES => vec![
            json!(name),
            json!(s(v, &["spec", "holderIdentity"])),
            json!(age),
        ],
        StorageId::NODES => {
            let conds = at(v, &["status", "conditions"]).and_then(Value::as_array);
            let ready = conds
                .into_iter()
                .flatten()
                .find(|c| s(c, &["type"]) == "Ready");
            let mut status = match ready.map(|c| s(c, &["status"])) {
                Some("True") => "Ready".to_string(),
                Some("False") => "NotReady".to_string(),
                _ => "Unknown".to_string(),
            };
            if at(v, &["spec", "unschedulable"]).and_then(Value::as_bool) == Some(true) {
                status.push_str(",SchedulingDisabled");
            }
            let mut roles: Vec<String> = at(v, &["metadata", "labels"])
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, _)| {
                    k.strip_prefix("node-role.kubernetes.io/")
                        .map(str::to_string)
                })
                .collect();
            roles.sort();
            let addr = |t: &str| {
                at(v, &["status", "addresses"])
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find(|a| s(a, &["type"]) == t)
                    .map(|a| s(a, &["address"]).to_string())
                    .unwrap_or_else(|| "<none>".into())
            };
            vec![
                json!(name),
                json!(status),
                json!(if roles.is_empty() {
                    "<none>".into()
                } else {
                    roles.join(",")
                }),
                json!(age),
                json!(s(v, &["status", "nodeInfo", "kubeletVersion"])),
                json!(addr("InternalIP")),
                json!(addr("ExternalIP")),
            ]
        }
        _ => vec![json!(name), json!(age)],
    }
}
