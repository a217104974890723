//! What the field manager of one endpoint needs from the registry: the kind's merge types,
//! the fields its strategy resets (upstream's `GetResetFields` in each
//! `pkg/registry/<group>/<kind>/strategy.go`, and apiextensions-apiserver's
//! `pkg/registry/customresource/{strategy,status_strategy}.go`), and the manager a request
//! names (`fieldManager`, else its User-Agent as `pkg/endpoints/handlers/create.go` reads it).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;
use serde_json::Value;

use super::crd_types::crd_schema;
use super::field_manager::FieldManager;
use super::managed_fields::{FIELD_MANAGER_MAX_LENGTH, is_print};
use super::openapi_types::OpenApiTypes;
use super::path::Path;
use super::schema::{TypeRef, TypedSchema};
use super::set::Set;
use crate::registry::custom::CustomVersion;
use crate::registry::resources::{ResourceInfo, StorageId, for_storage};
use crate::registry::schema::catalog;

/// Custom resource types by version definition (those live as long as the process).
static CRD_TYPES: LazyLock<Mutex<HashMap<usize, TypedSchema>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The built-in types: upstream's OpenAPI definitions from the schema catalog, each converted
/// the first time an object of it is merged.
static BUILTIN_TYPES: LazyLock<Arc<OpenApiTypes>> =
    LazyLock::new(|| Arc::new(OpenApiTypes::from_lookup(|name| catalog().raw(name))));

/// The merge types of a resource's objects, in `res`'s version. Custom resources take them
/// from their structural schema; built-in kinds from upstream's OpenAPI definition of the
/// kind (the schema catalog, found by `x-kubernetes-group-version-kind`), as kube-apiserver
/// builds its type converter from its OpenAPI models (k8s.io/apiserver's
/// `pkg/server/genericapiserver.go`, apimachinery's `pkg/util/managedfields/typeconverter.go`).
/// A kind without a definition is deduced (maps granular, lists atomic).
pub fn types_for(res: &ResourceInfo) -> TypedSchema {
    match res.custom {
        Some(cv) => {
            let key = cv as *const CustomVersion as usize;
            CRD_TYPES
                .lock()
                .entry(key)
                .or_insert_with(|| crd_schema(cv.schema.as_ref()))
                .clone()
        }
        None => match catalog().kind_definition(res.group, res.version, res.kind) {
            Some(name) => TypedSchema::new(BUILTIN_TYPES.clone(), TypeRef::named(name)),
            None => {
                tracing::warn!(
                    group = res.group,
                    version = res.version,
                    kind = res.kind,
                    "no OpenAPI definition for a built-in kind: its fields are deduced"
                );
                TypedSchema::deduced()
            }
        },
    }
}

/// The merge types of the form a resource's objects are stored in: a built-in kind served in
/// several versions is stored in one (HorizontalPodAutoscalers as autoscaling/v2,
/// events.k8s.io/v1 Events as core Events), and its updates are tracked in that form.
pub fn stored_types_for(res: &ResourceInfo) -> TypedSchema {
    if res.is_custom() || res.storage == StorageId::NONE {
        return types_for(res);
    }
    types_for(for_storage(res.storage))
}

fn set_of(paths: &[&[&str]]) -> Set {
    let ps: Vec<Path> = paths.iter().map(|p| Path::fields(p)).collect();
    Set::from_paths(&ps)
}

/// The fields the strategy of `res` (or of its subresource `sub`) resets on every write, so
/// that nobody owns them through that endpoint.
pub fn reset_fields(res: &ResourceInfo, sub: Option<&str>) -> Option<Set> {
    if let Some(cv) = res.custom {
        return match sub {
            None if cv.status => Some(set_of(&[&["status"]])),
            Some("status") => Some(set_of(&[&["metadata"], &["spec"]])),
            _ => None,
        };
    }
    let has_status = res.has_subresource("status");
    match (res.group, res.plural, sub) {
        ("apps", "deployments", Some("status")) => {
            Some(set_of(&[&["spec"], &["metadata", "labels"]]))
        }
        ("", "pods", Some("status")) => Some(set_of(&[
            &["spec"],
            &["metadata", "deletionTimestamp"],
            &["metadata", "ownerReferences"],
        ])),
        ("", "namespaces", Some("finalize")) => Some(set_of(&[&["status"]])),
        (_, _, None) if has_status => Some(set_of(&[&["status"]])),
        (_, _, Some("status")) => Some(set_of(&[&["spec"]])),
        (_, _, Some("scale")) => Some(set_of(&[&["status"]])),
        _ => None,
    }
}

/// The field manager of a resource or subresource, with its types and reset fields.
#[derive(Debug)]
pub struct Endpoint {
    schema: TypedSchema,
    reset: Option<Set>,
    api_version: String,
    kind: &'static str,
    subresource: String,
    custom: bool,
}

impl Endpoint {
    /// The endpoint of `res`, or of its subresource `sub`, for objects in `res`'s version.
    pub fn new(res: &ResourceInfo, sub: Option<&str>) -> Self {
        Endpoint::with_types(res, sub, types_for(res))
    }

    /// The endpoint of `res` (or `sub`) for objects of the types `schema`.
    fn with_types(res: &ResourceInfo, sub: Option<&str>, schema: TypedSchema) -> Self {
        Endpoint {
            schema,
            reset: reset_fields(res, sub),
            api_version: res.api_version(),
            kind: res.kind,
            subresource: sub.unwrap_or("").to_string(),
            custom: res.is_custom(),
        }
    }

    /// Its field manager.
    pub fn manager(&self) -> FieldManager<'_> {
        FieldManager {
            schema: &self.schema,
            api_version: &self.api_version,
            kind: self.kind,
            subresource: &self.subresource,
            reset: self.reset.as_ref(),
            strict_versions: self.custom,
        }
    }
}

/// Who writes, and when: what a create, update or non-apply patch is tracked with.
#[derive(Debug, Clone)]
pub struct Writer {
    /// The manager name (`fieldManager`, else from the User-Agent).
    pub manager: String,
    /// The request's time, RFC 3339.
    pub now: String,
}

/// `new` (a create when `live` is `{}`, else an update of `live`, both in one form: the
/// request's version for custom resources, the stored form for built-in kinds) with
/// `metadata.managedFields` as kube-apiserver tracks the write.
pub fn track(res: &ResourceInfo, sub: Option<&str>, live: &Value, new: Value, w: &Writer) -> Value {
    Endpoint::with_types(res, sub, stored_types_for(res))
        .manager()
        .update(live, new, &w.manager, &w.now)
}

/// The manager of a write: `fieldManager` when given, else the User-Agent up to its first
/// `/`, printable characters only, at most 128 bytes.
pub fn manager_or_user_agent(field_manager: &str, user_agent: &str) -> String {
    if !field_manager.is_empty() {
        return field_manager.to_string();
    }
    let mut out = String::new();
    for c in user_agent.split('/').next().unwrap_or("").chars() {
        if !is_print(c) {
            continue;
        }
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn managers_from_user_agents() {
        assert_eq!(manager_or_user_agent("mine", "kubectl/v1.37.2"), "mine");
        assert_eq!(
            manager_or_user_agent("", "kubectl/v1.37.2 (linux/amd64) kubernetes/abc"),
            "kubectl"
        );
        assert_eq!(manager_or_user_agent("", "kcm\u{1}x/1"), "kcmx");
        assert_eq!(manager_or_user_agent("", ""), "");
        assert_eq!(manager_or_user_agent("", &"a".repeat(200)).len(), 128);
    }

    #[test]
    fn every_stored_builtin_kind_has_openapi_types() {
        let missing: Vec<String> = crate::registry::resources::RESOURCES
            .iter()
            .filter(|r| r.storage != StorageId::NONE)
            .filter(|r| {
                catalog()
                    .kind_definition(r.group, r.version, r.kind)
                    .is_none()
            })
            .map(|r| r.qualified_kind())
            .collect();
        assert!(missing.is_empty(), "deduced: {missing:?}");
    }

    #[test]
    fn builtin_kinds_take_their_openapi_types() {
        let svc = crate::registry::find("", "v1", "services").expect("served");
        let obj = serde_json::json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "s", "labels": {"a": "b"}},
            "spec": {"selector": {"app": "w"}, "ports": [{"port": 80}]}});
        let set = super::super::typed::to_set(&types_for(svc), &obj).expect("valid");
        let texts: Vec<String> = set.paths().iter().map(Path::to_string).collect();
        for want in [
            // a map list keyed by port and protocol, the protocol defaulted
            ".spec.ports[port=80,protocol=\"TCP\"].port",
            // an atomic map
            ".spec.selector",
            ".metadata.labels.a",
        ] {
            assert!(texts.iter().any(|t| t == want), "{want} not in {texts:?}");
        }
        // a named field holding a map is not a member of its own
        assert!(!texts.iter().any(|t| t == ".metadata.labels"), "{texts:?}");
        assert!(
            !texts.iter().any(|t| t == ".spec.selector.app"),
            "{texts:?}"
        );
        // the stored form's types: autoscaling/v1 HorizontalPodAutoscalers are stored as v2
        let hpa =
            crate::registry::find("autoscaling", "v1", "horizontalpodautoscalers").expect("served");
        let v2 = serde_json::json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"}, "spec": {"maxReplicas": 2, "metrics": [{"type": "Resource"}]}});
        let validate = super::super::typed::validate;
        assert!(validate(&stored_types_for(hpa), &v2, false).is_ok());
        assert!(
            validate(&types_for(hpa), &v2, false).is_err(),
            "v1 has no metrics"
        );
    }

    #[test]
    fn reset_fields_per_endpoint() {
        let deploy = crate::registry::find("apps", "v1", "deployments").expect("served");
        let texts = |s: Option<Set>| -> Vec<String> {
            s.map(|s| s.paths().iter().map(Path::to_string).collect())
                .unwrap_or_default()
        };
        assert_eq!(texts(reset_fields(deploy, None)), vec![".status"]);
        assert_eq!(
            texts(reset_fields(deploy, Some("status"))),
            vec![".spec", ".metadata.labels"]
        );
        let lease = crate::registry::find("coordination.k8s.io", "v1", "leases").expect("served");
        assert!(reset_fields(lease, None).is_none());
    }
}
