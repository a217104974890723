//! Server-side Table rendering for `kubectl get` (spec §9.3; upstream
//! `pkg/printers/internalversion/printers.go` and `apimachinery/pkg/util/duration`).

use http::{HeaderValue, Response, header};
use serde_json::{Value, json};

use crate::list::{Filter, fetch, list_meta};
use crate::meta::{self, at};
use crate::registry::{ResourceInfo, StorageId};
use crate::routes::Target;
use crate::scale::selector_string;
use crate::server::{ApiServer, Body, Ctx, value_response};
use crate::status::ApiResult;

/// Upstream `duration.HumanDuration`.
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Age of a timestamp, `<unknown>` when absent.
pub fn since(ts: Option<&Value>) -> String {
    match ts.and_then(Value::as_str).and_then(meta::parse_time) {
        None => "<unknown>".into(),
        Some(t) => {
            let d = jiff::Timestamp::now().as_second() - t.as_second();
            human_duration(d)
        }
    }
}

fn col(name: &str, ty: &str, format: &str, priority: i32, description: &str) -> Value {
    json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority})
}

const NAME_DESC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DESC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn columns(res: &ResourceInfo) -> Vec<Value> {
    let name = col("Name", "string", "name", 0, NAME_DESC);
    let age = col("Age", "string", "", 0, AGE_DESC);
    match res.storage {
        StorageId::Deployments => vec![
            name,
            col(
                "Ready",
                "string",
                "",
                0,
                "Number of the pod with ready state",
            ),
            col(
                "Up-to-date",
                "integer",
                "",
                0,
                "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
            ),
            col(
                "Available",
                "integer",
                "",
                0,
                "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
            ),
            age,
            col(
                "Containers",
                "string",
                "",
                1,
                "Names of each container in the template.",
            ),
            col(
                "Images",
                "string",
                "",
                1,
                "Images referenced by each container in the template.",
            ),
            col(
                "Selector",
                "string",
                "",
                1,
                "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
            ),
        ],
        StorageId::ReplicaSets => vec![
            name,
            col(
                "Desired",
                "integer",
                "",
                0,
                "Replicas is the number of desired replicas.",
            ),
            col(
                "Current",
                "integer",
                "",
                0,
                "Replicas is the most recently observed number of replicas.",
            ),
            col(
                "Ready",
                "integer",
                "",
                0,
                "The number of ready replicas for this replica set.",
            ),
            age,
            col(
                "Containers",
                "string",
                "",
                1,
                "Names of each container in the template.",
            ),
            col(
                "Images",
                "string",
                "",
                1,
                "Images referenced by each container in the template.",
            ),
            col(
                "Selector",
                "string",
                "",
                1,
                "Selector is a label query over pods that should match the replica count.",
            ),
        ],
        StorageId::Pods => vec![
            name,
            col(
                "Ready",
                "string",
                "",
                0,
                "The aggregate readiness state of this pod for accepting traffic.",
            ),
            col(
                "Status",
                "string",
                "",
                0,
                "The aggregate status of the containers in this pod.",
            ),
            col(
                "Restarts",
                "string",
                "",
                0,
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            ),
            age,
            col(
                "IP",
                "string",
                "",
                1,
                "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
            ),
            col(
                "Node",
                "string",
                "",
                1,
                "NodeName is a request to schedule this pod onto a specific node.",
            ),
            col(
                "Nominated Node",
                "string",
                "",
                1,
                "nominatedNodeName is set only when this pod preempts other pods on the node.",
            ),
            col(
                "Readiness Gates",
                "string",
                "",
                1,
                "If specified, all readiness gates will be evaluated for pod readiness.",
            ),
        ],
        StorageId::Namespaces => vec![
            name,
            col("Status", "string", "", 0, "The status of the namespace"),
            age,
        ],
        StorageId::Events => vec![
            col(
                "Last Seen",
                "string",
                "",
                0,
                "Time when this Event was last seen",
            ),
            col(
                "Type",
                "string",
                "",
                0,
                "Type of this event (Normal, Warning), new types could be added in the future.",
            ),
            col(
                "Reason",
                "string",
                "",
                0,
                "This should be a short, machine understandable string that gives the reason for this event being generated.",
            ),
            col(
                "Object",
                "string",
                "",
                0,
                "The object that this event is about.",
            ),
            col(
                "Subobject",
                "string",
                "",
                1,
                "The subobject that this event is about.",
            ),
            col(
                "Source",
                "string",
                "",
                1,
                "The component reporting this event.",
            ),
            col(
                "Message",
                "string",
                "",
                0,
                "A human-readable description of the status of this operation.",
            ),
            col(
                "First Seen",
                "string",
                "",
                1,
                "The time at which the event was first recorded.",
            ),
            col(
                "Count",
                "integer",
                "",
                1,
                "The number of times this event has occurred.",
            ),
            col("Name", "string", "", 1, NAME_DESC),
        ],
        StorageId::Leases => vec![
            name,
            col("Holder", "string", "", 0, "The holder of the lease."),
            age,
        ],
        StorageId::Nodes => vec![
            name,
            col("Status", "string", "", 0, "The status of the node"),
            col("Roles", "string", "", 0, "The roles of the node"),
            age,
            col(
                "Version",
                "string",
                "",
                0,
                "Kubelet Version reported by the node.",
            ),
            col("Internal-IP", "string", "", 1, "List of internal IPs."),
            col("External-IP", "string", "", 1, "List of external IPs."),
        ],
    }
}

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

fn cells(res: &ResourceInfo, v: &Value) -> Vec<Value> {
    let name = meta::name_of(v);
    let age = since(at(v, &["metadata", "creationTimestamp"]));
    match res.storage {
        StorageId::Deployments => {
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
        StorageId::ReplicaSets => {
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
        StorageId::Pods => {
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
        StorageId::Namespaces => vec![json!(name), json!(s(v, &["status", "phase"])), json!(age)],
        StorageId::Events => {
            // a stored core/v1 event; events.k8s.io objects are converted back for printing
            let core = if res.is_events_v1() {
                crate::events_v1::to_core(v.clone())
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
        StorageId::Leases => vec![
            json!(name),
            json!(s(v, &["spec", "holderIdentity"])),
            json!(age),
        ],
        StorageId::Nodes => {
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
    }
}

fn row(res: &ResourceInfo, v: &Value, include: &str) -> Value {
    let mut r = json!({"cells": cells(res, v)});
    match include {
        "None" => {}
        "Object" => r["object"] = v.clone(),
        _ => {
            r["object"] = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": v.get("metadata").cloned().unwrap_or(json!({}))});
        }
    }
    r
}

/// A Table for one watch event (column definitions only on the first).
pub fn watch_table(res: &ResourceInfo, v: &Value, first: bool) -> Value {
    let cols = if first { columns(res) } else { Vec::new() };
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": meta::rv_of(v)}, "columnDefinitions": cols, "rows": [row(res, v, "")]})
}

fn table_response(v: &Value) -> Response<Body> {
    let mut r = value_response(200, v);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json;as=Table;v=v1;g=meta.k8s.io"),
    );
    r
}

/// A Table for one object.
pub fn single(res: &ResourceInfo, v: &Value, ctx: &Ctx) -> Response<Body> {
    table_response(
        &json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": meta::rv_of(v)}, "columnDefinitions": columns(res), "rows": [row(res, v, ctx.q("includeObject"))]}),
    )
}

/// A Table for a list.
pub fn list(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let f = Filter::from_ctx(t, ctx)?;
    let page = fetch(srv, t, ctx, &f)?;
    let include = ctx.q("includeObject");
    let rows: Vec<Value> = page
        .items
        .iter()
        .map(|o| {
            row(
                t.res,
                &crate::events_v1::view_value(t.res, &o.value),
                include,
            )
        })
        .collect();
    Ok(table_response(
        &json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta(&page), "columnDefinitions": columns(t.res), "rows": rows}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_duration_table() {
        // upstream TestHumanDuration cases
        for (secs, want) in [
            (1, "1s"),
            (70, "70s"),
            (190, "3m10s"),
            (70 * 60, "70m"),
            (47 * 60 * 60, "47h"),
            (49 * 60 * 60, "2d1h"),
            ((8 * 24 + 2) * 60 * 60, "8d"),
            (367 * 24 * 60 * 60, "367d"),
            ((365 * 2 + 10) * 24 * 60 * 60, "2y10d"),
            ((365 * 8 + 10) * 24 * 60 * 60, "8y"),
            (-2, "<invalid>"),
            (-1, "0s"),
            (120, "2m"),
            (5 * 3600 + 60 * 5, "5h5m"),
        ] {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
    }

    #[test]
    fn pod_status_reasons() {
        assert_eq!(
            pod_reason(&json!({"status": {"phase": "Pending"}})),
            "Pending"
        );
        let w = json!({"status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "ContainerCreating"}}}]}});
        assert_eq!(pod_reason(&w), "ContainerCreating");
        let t = json!({"metadata": {"deletionTimestamp": "x"}, "status": {"phase": "Running"}});
        assert_eq!(pod_reason(&t), "Terminating");
    }

    #[test]
    fn deployment_cells() {
        let d = json!({"metadata": {"name": "web"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}, "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
        let res = crate::registry::find("apps", "v1", "deployments").expect("d");
        let c = cells(res, &d);
        assert_eq!(c[..4], [json!("web"), json!("2/3"), json!(3), json!(2)]);
        assert_eq!(c[5..], [json!("web"), json!("nginx"), json!("app=web")]);
        assert_eq!(columns(res).len(), c.len());
    }
}
