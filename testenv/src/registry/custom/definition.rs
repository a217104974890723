//! What serving a custom resource needs from its CustomResourceDefinition: per served version
//! a [`ResourceInfo`] (names, scope, verbs, subresources, storage bucket) carrying a
//! [`CustomVersion`] (schema, status and scale subresources, printer columns, storage version).
//!
//! A CRD's entries are built once per distinct definition and kept for the life of the
//! process (as the built-in table is static), so the rest of the server keeps handing out
//! `&'static ResourceInfo`; a CRD that changes gets new entries.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use serde_json::Value;

use super::schema::Schema;
pub use super::version::{CustomVersion, PrinterColumn, ScalePaths};
use super::version_order::by_priority;
use crate::registry::meta::{at, strings};
use crate::registry::resources::{ResourceInfo, StorageId, SubresourceInfo};

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

/// Whether a CRD condition is `True`.
pub fn condition_true(crd: &Value, kind: &str) -> bool {
    at(crd, &["status", "conditions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// Whether the CRD is being deleted.
pub fn terminating(crd: &Value) -> bool {
    at(crd, &["metadata", "deletionTimestamp"]).is_some() || condition_true(crd, "Terminating")
}

fn columns(version: &Value) -> Vec<PrinterColumn> {
    let cols: Vec<PrinterColumn> = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| PrinterColumn {
            name: s(c, &["name"]).to_string(),
            type_: s(c, &["type"]).to_string(),
            format: s(c, &["format"]).to_string(),
            description: s(c, &["description"]).to_string(),
            priority: c["priority"].as_i64().unwrap_or(0),
            json_path: s(c, &["jsonPath"]).to_string(),
        })
        .collect();
    if !cols.is_empty() {
        return cols;
    }
    vec![PrinterColumn {
        name: "Age".into(),
        type_: "date".into(),
        format: String::new(),
        description: AGE_DESCRIPTION.into(),
        priority: 0,
        json_path: ".metadata.creationTimestamp".into(),
    }]
}

const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// `<group>/<version> <Kind> is deprecated`, pointing at the newest served version that is not
/// deprecated and newer than this one, as upstream words it.
fn default_deprecation_warning(crd: &Value, version: &str, kind: &str) -> String {
    let group = s(crd, &["spec", "group"]);
    let mut msg = format!("{group}/{version} {kind} is deprecated");
    let mut newer: Vec<&str> = at(crd, &["spec", "versions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["served"] == true && v["deprecated"] != true)
        .map(|v| s(v, &["name"]))
        .filter(|n| by_priority(n, version).is_lt())
        .collect();
    newer.sort_by(|a, b| by_priority(a, b));
    if let Some(n) = newer.first() {
        msg.push_str(&format!("; use {group}/{n} {kind}"));
    }
    msg
}

const ALL_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];
const TERMINATING_VERBS: &[&str] = &["delete", "deletecollection", "get", "list", "watch"];
const GPU: &[&str] = &["get", "patch", "update"];

fn leak_strs(v: Vec<String>) -> &'static [&'static str] {
    let v: Vec<&'static str> = v.into_iter().map(|x| &*x.leak()).collect();
    v.leak()
}

fn build_version(crd: &Value, version: &Value, storage: StorageId) -> ResourceInfo {
    let accepted = |k: &str| {
        let a = s(crd, &["status", "acceptedNames", k]);
        if a.is_empty() {
            s(crd, &["spec", "names", k])
        } else {
            a
        }
        .to_string()
    };
    let kind = accepted("kind");
    let list_kind = {
        let l = accepted("listKind");
        if l.is_empty() {
            format!("{kind}List")
        } else {
            l
        }
    };
    let storage_version = at(crd, &["spec", "versions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v["storage"] == true)
        .map(|v| s(v, &["name"]).to_string())
        .unwrap_or_default();
    let status = at(version, &["subresources", "status"]).is_some_and(Value::is_object);
    let scale = at(version, &["subresources", "scale"])
        .filter(|v| v.is_object())
        .map(|sc| ScalePaths {
            spec_replicas: s(sc, &["specReplicasPath"]).to_string(),
            status_replicas: s(sc, &["statusReplicasPath"]).to_string(),
            label_selector: sc
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(str::to_string),
        });
    let mut subresources = Vec::new();
    if status {
        subresources.push(SubresourceInfo {
            name: "status",
            kind: "",
            group: None,
            version: None,
            verbs: GPU,
        });
    }
    if scale.is_some() {
        subresources.push(SubresourceInfo {
            name: "scale",
            kind: "Scale",
            group: Some("autoscaling"),
            version: Some("v1"),
            verbs: GPU,
        });
    }
    let terminating = terminating(crd);
    let name = s(version, &["name"]);
    let warning = (version["deprecated"] == true).then(|| {
        match version.get("deprecationWarning").and_then(Value::as_str) {
            Some(w) => w.to_string(),
            None => default_deprecation_warning(crd, name, &kind),
        }
    });
    let storage_version_hash = {
        use base64::Engine as _;
        use sha2::Digest as _;
        let gvk = format!(
            "{}/{storage_version}/{}",
            s(crd, &["spec", "group"]),
            s(crd, &["spec", "names", "kind"])
        );
        let digest = sha2::Sha256::digest(gvk.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(&digest[..8])
    };
    let storage_schema = at(crd, &["spec", "versions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v["storage"] == true && v["name"] != version["name"])
        .and_then(|v| at(v, &["schema", "openAPIV3Schema"]))
        .map(Schema::from_json);
    let custom = CustomVersion {
        crd_name: s(crd, &["metadata", "name"]).to_string(),
        storage_schema,
        storage_version,
        list_kind,
        schema: at(version, &["schema", "openAPIV3Schema"]).map(Schema::from_json),
        status,
        scale,
        columns: columns(version),
        terminating,
        warning,
        storage_version_hash,
    };
    let singular = {
        let x = accepted("singular");
        if x.is_empty() { kind.to_lowercase() } else { x }
    };
    let accepted_list = |k: &str| {
        let a = at(crd, &["status", "acceptedNames", k]);
        strings(a.or_else(|| at(crd, &["spec", "names", k])))
    };
    ResourceInfo {
        group: s(crd, &["spec", "group"]).to_string().leak(),
        version: name.to_string().leak(),
        plural: s(crd, &["spec", "names", "plural"]).to_string().leak(),
        singular: singular.leak(),
        kind: kind.leak(),
        namespaced: s(crd, &["spec", "scope"]) == "Namespaced",
        short_names: leak_strs(accepted_list("shortNames")),
        categories: leak_strs(accepted_list("categories")),
        verbs: if terminating {
            TERMINATING_VERBS
        } else {
            ALL_VERBS
        },
        subresources: subresources.leak(),
        storage,
        storage_version_hash: "",
        custom: Some(Box::leak(Box::new(custom))),
    }
}

/// Entries already built, by the definition they were built from.
static BUILT: LazyLock<Mutex<HashMap<String, &'static ResourceInfo>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// What identifies a CRD's serving definition: its spec and accepted names (upstream keeps a
/// CRD's storage, and its watches, while these stay the same).
pub fn definition_key(crd: &Value) -> String {
    serde_json::to_string(&(&crd["spec"], at(crd, &["status", "acceptedNames"])))
        .unwrap_or_default()
}

/// The entries of a CRD's served versions, stored in `storage`.
pub fn served_versions(crd: &Value, storage: StorageId) -> Vec<&'static ResourceInfo> {
    let versions = at(crd, &["spec", "versions"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let key_base = serde_json::to_string(&(
        &crd["spec"],
        at(crd, &["status", "acceptedNames"]),
        terminating(crd),
        storage.index(),
    ))
    .unwrap_or_default();
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    versions
        .iter()
        .filter(|v| v["served"] == true)
        .map(|v| {
            let key = format!("{key_base}/{}", s(v, &["name"]));
            *built
                .entry(key)
                .or_insert_with(|| Box::leak(Box::new(build_version(crd, v, storage))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn crd() -> Value {
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wg"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object"}},
                     "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}},
                    {"name": "v1beta1", "served": true, "storage": false, "deprecated": true,
                     "schema": {"openAPIV3Schema": {"type": "object"}}},
                    {"name": "v0", "served": false, "storage": false},
                ],
            },
            "status": {"acceptedNames": {"plural": "widgets", "kind": "Widget"}},
        })
    }

    #[test]
    fn served_versions_and_their_subresources() {
        let vs = served_versions(&crd(), StorageId::custom(3));
        let names: Vec<&str> = vs.iter().map(|r| r.version).collect();
        assert_eq!(names, vec!["v1", "v1beta1"]);
        let v1 = vs[0];
        assert_eq!(
            (v1.group, v1.plural, v1.kind, v1.namespaced, v1.short_names),
            ("example.com", "widgets", "Widget", true, &["wg"][..])
        );
        assert!(v1.has_subresource("status") && v1.has_subresource("scale"));
        let c = v1.custom.expect("custom");
        assert_eq!(
            (c.storage_version.as_str(), c.list_kind.as_str()),
            ("v1", "WidgetList")
        );
        assert_eq!(c.columns[0].name, "Age");
        let beta = vs[1].custom.expect("custom");
        assert_eq!(
            beta.warning.as_deref(),
            Some("example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget")
        );
        assert!(!vs[1].has_subresource("status"));
        // built once per distinct definition
        let again = served_versions(&crd(), StorageId::custom(3));
        assert!(std::ptr::eq(again[0], v1));
        let mut deleting = crd();
        deleting["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        let d = served_versions(&deleting, StorageId::custom(3));
        assert!(!std::ptr::eq(d[0], v1));
        assert!(!d[0].verbs.contains(&"create"));
    }
}
