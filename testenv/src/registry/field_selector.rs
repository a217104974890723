//! Field selectors (`k=v`, `k==v`, `k!=v`) with the per-kind field labels
//! (`staging/src/k8s.io/apimachinery/pkg/fields/selector.go`; each kind's `GetAttrs` / `ToSelectableFields` in its registry strategy).
//!
//! Label selectors are `kcm_store::Selector`, the apimachinery `labels.Parse` port.

use serde_json::Value;

use super::resources::{ResourceInfo, StorageId};

/// One field requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// Field label.
    pub field: String,
    /// `true` for `!=`.
    pub negate: bool,
    /// Value.
    pub value: String,
}

/// A parsed field selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(pub Vec<FieldRequirement>);

/// The field labels a bucket supports beyond `metadata.name`/`metadata.namespace`.
pub fn extra_fields(id: StorageId) -> &'static [&'static str] {
    match id {
        StorageId::PODS => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        StorageId::REPLICASETS | StorageId::REPLICATIONCONTROLLERS => &["status.replicas"],
        // each kind's AddFieldLabelConversionFunc in pkg/apis/<group>/<version>/conversion.go
        StorageId::SECRETS => &["type"],
        StorageId::SERVICES => &["spec.clusterIP", "spec.type"],
        StorageId::JOBS => &["status.successful"],
        StorageId::CERTIFICATESIGNINGREQUESTS => &["spec.signerName"],
        StorageId::PODCERTIFICATEREQUESTS => &["spec.signerName", "spec.podName", "spec.nodeName"],
        StorageId::RESOURCESLICES => &["spec.nodeName", "spec.driver", "spec.pool.name"],
        StorageId::NAMESPACES => &["status.phase", "name"],
        StorageId::NODES => &["spec.unschedulable"],
        StorageId::EVENTS => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        _ => &[],
    }
}

/// The error for a field label a bucket does not serve: a kind with a field label conversion
/// of its own says so; every other built-in kind has apimachinery's default conversion, which
/// names the two labels it serves.
fn unsupported(id: StorageId, field: &str) -> String {
    let own =
        !extra_fields(id).is_empty() || super::strategy::has_special_code(id) || id.is_custom();
    if own {
        format!("field label not supported: {field}")
    } else {
        format!(
            "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        )
    }
}

impl FieldSelector {
    /// Parse and check the field labels a resource serves: a custom resource serves
    /// `metadata.name`, and `metadata.namespace` when namespaced.
    pub fn parse_for(s: &str, res: &ResourceInfo) -> Result<FieldSelector, String> {
        let sel = FieldSelector::parse(s, res.storage)?;
        if res.is_custom()
            && !res.namespaced
            && let Some(r) = sel.0.iter().find(|r| r.field == "metadata.namespace")
        {
            return Err(format!("field label not supported: {}", r.field));
        }
        Ok(sel)
    }

    /// Parse and check the field labels against the bucket (400 text on error).
    pub fn parse(s: &str, id: StorageId) -> Result<FieldSelector, String> {
        let mut reqs = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (field, negate, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, false, v)
            } else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let field = field.trim();
            let field = match (id, field) {
                // events.k8s.io names map onto the stored core fields
                (StorageId::EVENTS, f) if f.starts_with("regarding.") => {
                    format!("involvedObject.{}", &f["regarding.".len()..])
                }
                (StorageId::EVENTS, "reportingController") => "reportingComponent".to_string(),
                _ => field.to_string(),
            };
            if field != "metadata.name"
                && field != "metadata.namespace"
                && !extra_fields(id).contains(&field.as_str())
            {
                return Err(unsupported(id, &field));
            }
            reqs.push(FieldRequirement {
                field,
                negate,
                value: value.trim().to_string(),
            });
        }
        Ok(FieldSelector(reqs))
    }

    /// Whether the object matches.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0
            .iter()
            .all(|r| (field_value(obj, &r.field) == r.value) != r.negate)
    }

    /// Whether field values looked up through `get` match (missing fields are `""`).
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0
            .iter()
            .all(|r| (get(&r.field).unwrap_or("") == r.value) != r.negate)
    }

    /// The value of `metadata.name=X` if the selector pins one name.
    pub fn pinned_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|r| r.field == "metadata.name" && !r.negate)
            .map(|r| r.value.as_str())
    }

    /// Whether the selector is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    Some(cur)
}

fn scalar(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// The string value of a field label on an object (missing fields are `""`).
pub fn field_value(obj: &Value, field: &str) -> String {
    match field {
        "name" => scalar(str_at(obj, &["metadata", "name"])),
        "spec.hostNetwork" => {
            let b = str_at(obj, &["spec", "hostNetwork"])
                .and_then(Value::as_bool)
                .unwrap_or(false);
            b.to_string()
        }
        "spec.unschedulable" => {
            let b = str_at(obj, &["spec", "unschedulable"])
                .and_then(Value::as_bool)
                .unwrap_or(false);
            b.to_string()
        }
        "status.replicas" | "status.successful" => {
            let path: Vec<&str> = field.split('.').collect();
            let n = str_at(obj, &path).and_then(Value::as_i64).unwrap_or(0);
            n.to_string()
        }
        "status.podIPs" => scalar(str_at(obj, &["status", "podIP"])),
        "source" => scalar(str_at(obj, &["source", "component"])),
        f => {
            let path: Vec<&str> = f.split('.').collect();
            scalar(str_at(obj, &path))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_selectors() {
        let pod = json!({"metadata": {"name": "p", "namespace": "n"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Pending"}});
        let s = FieldSelector::parse("metadata.name=p,status.phase=Pending", StorageId::PODS)
            .expect("ok");
        assert!(s.matches(&pod));
        assert_eq!(s.pinned_name(), Some("p"));
        let s = FieldSelector::parse("spec.nodeName!=n1", StorageId::PODS).expect("ok");
        assert!(!s.matches(&pod));
        let s = FieldSelector::parse("spec.nodeName==", StorageId::PODS).expect("ok");
        assert!(!s.matches(&pod));
        assert_eq!(
            FieldSelector::parse("spec.foo=bar", StorageId::PODS)
                .err()
                .as_deref(),
            Some("field label not supported: spec.foo")
        );
        assert!(FieldSelector::parse("status.phase=x", StorageId::DEPLOYMENTS).is_err());
        let secret = json!({"type": "kubernetes.io/tls"});
        let s = FieldSelector::parse("type=kubernetes.io/tls", StorageId::SECRETS).expect("ok");
        assert!(s.matches(&secret));
        assert_eq!(
            FieldSelector::parse("type=x", StorageId::CONFIGMAPS)
                .err()
                .as_deref(),
            Some(
                "\"type\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )
        );
        let job = json!({"status": {}});
        let s = FieldSelector::parse("status.successful=0", StorageId::JOBS).expect("ok");
        assert!(s.matches(&job));
        let ev = json!({"involvedObject": {"name": "web", "kind": "Deployment"}, "source": {"component": "c"}});
        let s = FieldSelector::parse(
            "involvedObject.name=web,involvedObject.kind=Deployment,source=c",
            StorageId::EVENTS,
        )
        .expect("ok");
        assert!(s.matches(&ev));
        let s = FieldSelector::parse("regarding.name=web", StorageId::EVENTS).expect("ok");
        assert!(s.matches(&ev));
    }
}
