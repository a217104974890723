//! The controllers' writes in one namespace, read from kube-apiserver's audit log (JSON lines,
//! written at RequestResponse level for every write by the upstream control plane).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Users whose writes are the controllers': upstream's with per-controller credentials, and kcm's
/// ServiceAccount (or its per-controller ones with `--use-service-account-credentials`).
pub const CONTROLLER_USERS: &[&str] = &[
    "system:serviceaccount:kube-system:deployment-controller",
    "system:serviceaccount:kube-system:replicaset-controller",
    "system:serviceaccount:kube-system:kcm",
];

/// The controllers' writes to one namespace.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Writes {
    /// `verb resource[/subresource] code` → count.
    pub counts: BTreeMap<String, u64>,
    /// ReplicaSet scale writes in order: `name→replicas` (names as the API saw them; normalise
    /// with the snapshot's renames before comparing).
    pub scale_order: Vec<String>,
    /// Deployments whose last rollout's Progressing=True/`NewReplicaSetCreated` status write
    /// was answered 409 and never landed (no write with that message answered 200): the
    /// controller does not write it again once the ReplicaSet exists, so the rollout's
    /// conditions take another path.
    pub lost_new_replica_set_condition: BTreeSet<String>,
}

/// Whether an audit event is a request of the controllers (one of [`CONTROLLER_USERS`]).
pub fn by_controllers(e: &Value) -> bool {
    e["user"]["username"]
        .as_str()
        .is_some_and(|u| CONTROLLER_USERS.contains(&u))
}

/// When the API server received an audit event's request, in microseconds since the epoch.
pub fn received_micros(e: &Value) -> Option<i64> {
    crate::timestamps::unix_micros(e["requestReceivedTimestamp"].as_str()?)
}

/// Every audit event of the control plane whose run folder is `dir`, oldest first: the rotated
/// files kube-apiserver leaves beside `audit.log` (`audit-<time>.log`, should a log outgrow
/// `--audit-log-maxsize`), then `audit.log` itself. A missing log reads as no events; lines
/// that are not JSON objects are skipped.
pub fn read(dir: &std::path::Path) -> Vec<Value> {
    read_lines(dir, |line| serde_json::from_str::<Value>(line).ok())
}

/// [`read`] line by line, keeping what `keep` makes of each line: for logs too large to hold
/// as `Value`s (the controllers benchmark at N = 3,000 wrote 2.2 GB, over 24 GB parsed whole).
pub fn read_lines(
    dir: &std::path::Path,
    mut keep: impl FnMut(&str) -> Option<Value>,
) -> Vec<Value> {
    use std::io::BufRead as _;
    let mut out = Vec::new();
    for path in log_files(dir) {
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                // A line that is not UTF-8 is skipped, as one that is not JSON is.
                Ok(_) => {
                    if let Ok(text) = std::str::from_utf8(&line) {
                        out.extend(keep(text.trim_end()));
                    }
                }
            }
        }
    }
    out
}

/// The audit files of the run folder `dir`, oldest first (see [`read`]).
fn log_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut rotated: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("audit-") && n.ends_with(".log"))
                })
                .collect()
        })
        .unwrap_or_default();
    // The rotation time stamp in the name sorts oldest first.
    rotated.sort();
    rotated.push(dir.join("audit.log"));
    rotated
}

/// The controllers' writes to namespace `ns` among the audit `events`.
pub fn writes<'a>(events: impl IntoIterator<Item = &'a Value>, ns: &str) -> Writes {
    let mut w = Writes::default();
    // Per Deployment, the newest NewReplicaSetCreated message written (answered 200 or 409);
    // and the (Deployment, message) pairs that landed.
    let mut newest: BTreeMap<String, String> = BTreeMap::new();
    let mut landed: BTreeSet<(String, String)> = BTreeSet::new();
    for e in events {
        if e["stage"] != "ResponseComplete" || e["objectRef"]["namespace"] != ns {
            continue;
        }
        let user = e["user"]["username"].as_str().unwrap_or_default();
        if !CONTROLLER_USERS.contains(&user) {
            continue;
        }
        let verb = e["verb"].as_str().unwrap_or_default();
        let resource = e["objectRef"]["resource"].as_str().unwrap_or_default();
        let sub = e["objectRef"]["subresource"].as_str().unwrap_or_default();
        let code = e["responseStatus"]["code"].as_i64().unwrap_or_default();
        let res = if sub.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}/{sub}")
        };
        *w.counts.entry(format!("{verb} {res} {code}")).or_default() += 1;
        if res == "replicasets" && verb == "update" && code == 200 {
            let name = e["objectRef"]["name"].as_str().unwrap_or_default();
            if let Some(replicas) = e["requestObject"]["spec"]["replicas"].as_i64() {
                let step = format!("{name}→{replicas}");
                if w.scale_order.last() != Some(&step) {
                    w.scale_order.push(step);
                }
            }
        }
        if res == "deployments/status" && verb == "update" {
            let name = e["objectRef"]["name"].as_str().unwrap_or_default();
            let msg = new_replica_set_created_message(&e["requestObject"]);
            if let (Some(msg), 200 | 409) = (msg, code) {
                newest.insert(name.to_string(), msg.to_string());
                if code == 200 {
                    landed.insert((name.to_string(), msg.to_string()));
                }
            }
        }
    }
    w.lost_new_replica_set_condition = newest
        .into_iter()
        .filter(|(name, msg)| !landed.contains(&(name.clone(), msg.clone())))
        .map(|(name, _)| name)
        .collect();
    w
}

/// The message of a Deployment's Progressing=True/`NewReplicaSetCreated` condition, if it has one.
fn new_replica_set_created_message(d: &Value) -> Option<&str> {
    d["status"]["conditions"].as_array()?.iter().find(|c| {
        c["type"] == "Progressing" && c["status"] == "True" && c["reason"] == "NewReplicaSetCreated"
    })?["message"]
        .as_str()
}

/// The ReplicaSets created in namespace `ns` by anyone, in order: `(owning Deployment or "",
/// pod-template-hash)`.
pub fn created_replica_sets(events: &[Value], ns: &str) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| {
            e["stage"] == "ResponseComplete"
                && e["verb"] == "create"
                && e["objectRef"]["resource"] == "replicasets"
                && e["objectRef"]["namespace"] == ns
                && e["responseStatus"]["code"] == 201
        })
        .filter_map(|e| {
            let meta = &e["responseObject"]["metadata"];
            let hash = meta["labels"]["pod-template-hash"].as_str()?;
            let owner = meta["ownerReferences"][0]["name"]
                .as_str()
                .unwrap_or_default();
            Some((owner.to_string(), hash.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The events of an audit log's text (lines that are not JSON skipped), as [`read`] parses.
    fn parse(audit: &str) -> Vec<Value> {
        audit
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .collect()
    }

    #[test]
    fn rotated_logs_are_read_first_then_the_current_one() {
        let dir = std::env::temp_dir().join(format!("kcm-audit-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let ev = |n: i64| format!("{}\n", json!({ "n": n }));
        std::fs::write(dir.join("audit.log"), ev(3)).expect("write");
        std::fs::write(dir.join("audit-2026-11-27T12-01-00.000.log"), ev(2)).expect("write");
        std::fs::write(dir.join("audit-2026-11-27T12-00-00.000.log"), ev(1)).expect("write");
        std::fs::write(dir.join("kube-apiserver.log"), ev(9)).expect("write");
        let order: Vec<i64> = read(&dir).iter().filter_map(|e| e["n"].as_i64()).collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(order, [1, 2, 3]);
        assert!(read(&dir).is_empty(), "a missing folder reads as no events");
    }

    fn line(
        user: &str,
        ns: &str,
        verb: &str,
        res: &str,
        sub: &str,
        code: i64,
        body: Value,
    ) -> String {
        json!({"stage": "ResponseComplete", "user": {"username": user}, "verb": verb,
               "objectRef": {"namespace": ns, "resource": res, "subresource": sub, "name": "web-1"},
               "responseStatus": {"code": code}, "requestObject": body})
        .to_string()
    }

    #[test]
    fn counts_the_controllers_writes_in_the_namespace() {
        let rs = "system:serviceaccount:kube-system:replicaset-controller";
        let kcm = "system:serviceaccount:kube-system:kcm";
        let log = [
            line(rs, "a", "create", "pods", "", 201, json!({})),
            line(rs, "a", "create", "pods", "", 201, json!({})),
            line(rs, "a", "update", "replicasets", "status", 409, json!({})),
            line(
                kcm,
                "a",
                "update",
                "replicasets",
                "",
                200,
                json!({"spec": {"replicas": 2}}),
            ),
            line(
                kcm,
                "a",
                "update",
                "replicasets",
                "",
                200,
                json!({"spec": {"replicas": 1}}),
            ),
            line(
                "kcm-rs:admin",
                "a",
                "create",
                "deployments",
                "",
                201,
                json!({}),
            ),
            line(rs, "b", "create", "pods", "", 201, json!({})),
            "not json".to_string(),
        ]
        .join("\n");
        let w = writes(&parse(&log), "a");
        assert_eq!(w.counts["create pods 201"], 2);
        assert_eq!(w.counts["update replicasets/status 409"], 1);
        assert_eq!(w.counts["update replicasets 200"], 2);
        assert!(
            !w.counts.contains_key("create deployments 201"),
            "not a controller"
        );
        assert_eq!(w.scale_order, ["web-1→2", "web-1→1"]);
    }

    #[test]
    fn a_new_replica_set_condition_refused_and_never_landed_is_lost() {
        let dc = "system:serviceaccount:kube-system:deployment-controller";
        let status = |reason: &str, msg: &str| {
            json!({"status": {"conditions": [
                {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
                {"type": "Progressing", "status": "True", "reason": reason, "message": msg},
            ]}})
        };
        let write = |code: i64, reason: &str, msg: &str| {
            line(
                dc,
                "a",
                "update",
                "deployments",
                "status",
                code,
                status(reason, msg),
            )
        };
        let created = |rs: &str| format!("Created new replica set \"{rs}\"");
        // Upstream under load (cargo xtask diff, 2026-12-07): the write refused, never retried.
        let lost = [
            write(
                200,
                "NewReplicaSetAvailable",
                "ReplicaSet \"web-1\" has successfully progressed.",
            ),
            write(409, "NewReplicaSetCreated", &created("web-2")),
            write(
                200,
                "NewReplicaSetAvailable",
                "ReplicaSet \"web-1\" has successfully progressed.",
            ),
        ];
        let w = writes(&parse(&lost.join("\n")), "a");
        assert_eq!(
            w.lost_new_replica_set_condition,
            BTreeSet::from(["web-1".to_string()])
        );
        // The usual run: it landed, and a stale sync's second try was refused.
        let landed = [
            write(200, "NewReplicaSetCreated", &created("web-2")),
            write(409, "NewReplicaSetCreated", &created("web-2")),
        ];
        let w = writes(&parse(&landed.join("\n")), "a");
        assert!(w.lost_new_replica_set_condition.is_empty());
        // Refused for one rollout, landed for the next: the last rollout's condition is there.
        let later = [
            write(409, "NewReplicaSetCreated", &created("web-2")),
            write(200, "NewReplicaSetCreated", &created("web-3")),
        ];
        let w = writes(&parse(&later.join("\n")), "a");
        assert!(w.lost_new_replica_set_condition.is_empty());
        // Landed for one rollout, refused for the next: lost.
        let earlier = [
            write(200, "NewReplicaSetCreated", &created("web-2")),
            write(409, "NewReplicaSetCreated", &created("web-3")),
        ];
        let w = writes(&parse(&earlier.join("\n")), "a");
        assert_eq!(w.lost_new_replica_set_condition.len(), 1);
        // Another namespace's, or a ReplicaSet status write, is not counted.
        let elsewhere = [
            line(
                dc,
                "b",
                "update",
                "deployments",
                "status",
                409,
                status("NewReplicaSetCreated", "x"),
            ),
            line(
                dc,
                "a",
                "update",
                "replicasets",
                "status",
                409,
                status("NewReplicaSetCreated", "x"),
            ),
        ];
        let w = writes(&parse(&elsewhere.join("\n")), "a");
        assert!(w.lost_new_replica_set_condition.is_empty());
    }

    #[test]
    fn created_replica_sets_in_order() {
        let create = |hash: &str, code: i64| {
            json!({"stage": "ResponseComplete", "verb": "create",
                   "objectRef": {"namespace": "a", "resource": "replicasets"},
                   "responseStatus": {"code": code},
                   "responseObject": {"metadata": {"labels": {"pod-template-hash": hash},
                                                   "ownerReferences": [{"name": "web"}]}}})
            .to_string()
        };
        let log = [create("h1", 201), create("hx", 409), create("h2", 201)].join("\n");
        assert_eq!(
            created_replica_sets(&parse(&log), "a"),
            [
                ("web".to_string(), "h1".to_string()),
                ("web".to_string(), "h2".to_string())
            ]
        );
    }
}
