//! An audit log of the writes the server answered, in kube-apiserver's format (one
//! `audit.k8s.io/v1` Event a line, level Metadata, stage ResponseComplete), so that tools
//! reading a real control plane's audit log read this one too: who wrote (the User-Agent, and
//! the user: the ServiceAccount of a token this server signed, `system:anonymous` otherwise),
//! what, with which answer, and when the server received the request. Reads and watches are not
//! logged.
//!
//! Timestamps are RFC 3339 in UTC with six fractional digits (fixed width, as kube-apiserver
//! writes them), so they order as strings. The file is opened for appending: a server restarted
//! on the same path continues it.

use std::io::Write;
use std::path::Path;

use serde_json::json;

/// The verbs whose requests are logged.
pub const AUDITED_VERBS: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];

/// An append-only audit log file.
#[derive(Debug)]
pub struct AuditLog {
    file: parking_lot::Mutex<std::fs::File>,
}

/// One answered write.
#[derive(Debug, Clone, Copy)]
pub struct AuditEntry<'a> {
    /// `create`, `update`, `patch`, `delete` or `deletecollection`.
    pub verb: &'a str,
    /// The request's path and query.
    pub request_uri: &'a str,
    /// The `User-Agent` header.
    pub user_agent: &'a str,
    /// The authenticated user (`username`, `uid`, `groups`), as
    /// [`request_user`](super::tokens::request_user) gives it.
    pub user: &'a serde_json::Value,
    /// The plural resource.
    pub resource: &'a str,
    /// The subresource, if any.
    pub subresource: Option<&'a str>,
    /// The namespace, if any.
    pub namespace: Option<&'a str>,
    /// The object's name (none for a create of a collection).
    pub name: Option<&'a str>,
    /// The HTTP status answered.
    pub code: u16,
    /// When the request arrived ([`timestamp`]).
    pub received: &'a str,
}

/// Now as an audit timestamp: `2026-11-28T10:40:01.123456Z`.
pub fn timestamp() -> String {
    let now = jiff::Timestamp::now();
    format!(
        "{}.{:06}Z",
        now.strftime("%Y-%m-%dT%H:%M:%S"),
        now.subsec_microsecond()
    )
}

impl AuditLog {
    /// Opens (creating it if needed) the log at `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<AuditLog> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(AuditLog {
            file: parking_lot::Mutex::new(file),
        })
    }

    /// Appends `entry`, completed now. A failed write is logged and dropped: the log must not
    /// fail the request it describes.
    pub fn record(&self, entry: &AuditEntry<'_>) {
        let mut object = json!({"resource": entry.resource});
        for (key, value) in [
            ("subresource", entry.subresource),
            ("namespace", entry.namespace),
            ("name", entry.name),
        ] {
            if let Some(v) = value {
                object[key] = json!(v);
            }
        }
        let event = json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": uuid::Uuid::new_v4().to_string(),
            "stage": "ResponseComplete",
            "requestURI": entry.request_uri,
            "verb": entry.verb,
            "user": entry.user,
            "userAgent": entry.user_agent,
            "objectRef": object,
            "responseStatus": {"code": entry.code},
            "requestReceivedTimestamp": entry.received,
            "stageTimestamp": timestamp(),
        });
        let mut line = event.to_string();
        line.push('\n');
        // One write per line: a reader never sees half of one.
        if let Err(e) = self.file.lock().write_all(line.as_bytes()) {
            tracing::warn!(error = %e, "writing the audit log");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_kube_apiserver_audit_events_in_order() {
        let dir = std::env::temp_dir().join(format!("kcm-testenv-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("audit.log");
        let _ = std::fs::remove_file(&path);
        let received = timestamp();
        let anonymous =
            json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]});
        let entry = AuditEntry {
            verb: "create",
            request_uri: "/api/v1/namespaces/ns/pods",
            user_agent: "kcm/v1.37.2 (linux/amd64) kubernetes/ff8fb4c/replicaset-controller shard-member/a_1",
            user: &anonymous,
            resource: "pods",
            subresource: None,
            namespace: Some("ns"),
            name: None,
            code: 201,
            received: &received,
        };
        AuditLog::open(&path).expect("open").record(&entry);
        // A restarted server appends.
        AuditLog::open(&path).expect("reopen").record(&AuditEntry {
            verb: "update",
            subresource: Some("status"),
            name: Some("web"),
            code: 409,
            ..entry
        });
        let text = std::fs::read_to_string(&path).expect("read");
        let events: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0]["stage"], "ResponseComplete");
        assert_eq!(events[0]["user"]["username"], "system:anonymous");
        assert_eq!(events[0]["objectRef"]["namespace"], "ns");
        assert!(events[0]["objectRef"].get("name").is_none());
        assert_eq!(events[1]["objectRef"]["subresource"], "status");
        assert_eq!(events[1]["responseStatus"]["code"], 409);
        assert!(
            events[0]["userAgent"]
                .as_str()
                .is_some_and(|u| u.ends_with("shard-member/a_1"))
        );
        let at = events[0]["requestReceivedTimestamp"].as_str().expect("ts");
        assert_eq!(at.len(), "2026-11-28T10:40:01.123456Z".len(), "{at}");
        assert!(at <= events[1]["stageTimestamp"].as_str().expect("ts"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
