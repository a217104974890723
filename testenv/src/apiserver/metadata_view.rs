//! Metadata-only views: an answer as `meta.k8s.io` `PartialObjectMetadata` or
//! `PartialObjectMetadataList` when the `Accept` header asks for it (client-go's metadata
//! client, kube-rs' `Api::get_metadata`, `list_metadata`, `watch_metadata`, `patch_metadata`).
//!
//! Behaviour of `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go`
//! (`doTransformObject`, `asPartialObjectMetadata`, `asPartialObjectMetadataList`: the object's
//! whole `ObjectMeta`, list metadata kept, a Status passed through, a 406 for an object asked as
//! a list or a list asked as an object) and `meta.AsPartialObjectMetadata` of
//! `staging/src/k8s.io/apimachinery/pkg/api/meta/meta.go`.

use serde_json::{Map, Value, json};

use crate::registry::ResourceInfo;
use crate::registry::api_status::ApiError;

/// The `ObjectMeta` fields a metadata view carries (every one there is).
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

fn object_meta(v: &Value) -> Value {
    let mut m = Map::new();
    if let Some(src) = v.get("metadata").and_then(Value::as_object) {
        for k in OBJECT_META {
            if let Some(x) = src.get(*k) {
                m.insert((*k).to_string(), x.clone());
            }
        }
    }
    Value::Object(m)
}

/// An object as a `PartialObjectMetadata` of `group_version` (`meta.k8s.io/v1`).
pub fn partial(v: &Value, group_version: &str) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": group_version, "metadata": object_meta(v)})
}

/// A list as a `PartialObjectMetadataList`: each item a `PartialObjectMetadata` (`items` is
/// null when there are none), the list's `resourceVersion`, `continue` (when not empty) and
/// `remainingItemCount` kept.
pub fn partial_list(list: &Value, group_version: &str) -> Value {
    let items: Vec<Value> = list
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|i| partial(i, group_version))
        .collect();
    let mut meta = Map::new();
    if let Some(src) = list.get("metadata").and_then(Value::as_object) {
        for k in ["resourceVersion", "continue", "remainingItemCount"] {
            match src.get(k) {
                Some(Value::String(s)) if s.is_empty() => {}
                Some(x) => {
                    meta.insert(k.to_string(), x.clone());
                }
                None => {}
            }
        }
    }
    // an empty list's items are null: upstream appends to a nil slice
    let items = if items.is_empty() {
        Value::Null
    } else {
        Value::Array(items)
    };
    json!({"kind": "PartialObjectMetadataList", "apiVersion": group_version, "metadata": meta, "items": items})
}

/// Whether an answer is a metav1 `Status` (passed through any conversion).
pub fn is_status(v: &Value) -> bool {
    v["kind"] == "Status" && v["apiVersion"] == "v1"
}

/// Whether an answer is a list.
pub fn is_list(v: &Value) -> bool {
    v.get("items").is_some_and(Value::is_array)
}

/// The Go type kube-apiserver names in its 406 texts: the internal type of a built-in kind
/// (`*core.Pod`, `*apps.DeploymentList`, a `scale` subresource's `*autoscaling.Scale`) or the
/// unstructured type of a custom resource.
pub fn go_type(res: &ResourceInfo, sub: Option<&str>, list: bool) -> String {
    if sub == Some("scale") {
        return "*autoscaling.Scale".to_string();
    }
    if res.is_custom() {
        return if list {
            "*unstructured.UnstructuredList"
        } else {
            "*unstructured.Unstructured"
        }
        .to_string();
    }
    let package = match res.group {
        // events.k8s.io serves the core Event type
        "" | "events.k8s.io" => "core",
        "internal.apiserver.k8s.io" => "apiserverinternal",
        g => g.split('.').next().unwrap_or(g),
    };
    let suffix = if list { "List" } else { "" };
    format!("*{package}.{}{suffix}", res.kind)
}

fn not_acceptable(message: String) -> ApiError {
    ApiError::new(406, "NotAcceptable", message)
}

/// Convert an answer to `as` (`PartialObjectMetadata` or `PartialObjectMetadataList`) of
/// `group_version`. A Status passes unchanged.
pub fn convert(
    res: &ResourceInfo,
    sub: Option<&str>,
    v: &Value,
    kind: &str,
    group_version: &str,
) -> Result<Value, ApiError> {
    if is_status(v) {
        return Ok(v.clone());
    }
    let list = is_list(v);
    match (kind, list) {
        ("PartialObjectMetadata", false) => Ok(partial(v, group_version)),
        ("PartialObjectMetadata", true) => Err(not_acceptable(format!(
            "you requested PartialObjectMetadata, but the requested object is a list ({})",
            go_type(res, sub, true)
        ))),
        ("PartialObjectMetadataList", true) => Ok(partial_list(v, group_version)),
        // an unstructured object passes upstream's list check (it has list accessors) and
        // fails listing its items: a 500 without a reason
        (_, false) if res.is_custom() && sub.is_none() => {
            Err(ApiError::new(500, "", "content is not a list"))
        }
        _ => Err(not_acceptable(format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
            go_type(res, sub, false)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    fn pod() -> Value {
        json!({"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": "p", "namespace": "n", "uid": "u", "resourceVersion": "7",
                            "labels": {"a": "b"}, "finalizers": ["f"]},
               "spec": {"containers": []}, "status": {"phase": "Pending"}})
    }

    #[test]
    fn object_keeps_all_metadata_and_nothing_else() {
        let p = partial(&pod(), "meta.k8s.io/v1");
        assert_eq!(
            p,
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                   "metadata": {"name": "p", "namespace": "n", "uid": "u", "resourceVersion": "7",
                                "labels": {"a": "b"}, "finalizers": ["f"]}})
        );
    }

    #[test]
    fn list_keeps_list_meta() {
        let l = json!({"kind": "WidgetList", "apiVersion": "x/v1",
                       "metadata": {"resourceVersion": "9", "continue": ""}, "items": [pod()]});
        let p = partial_list(&l, "meta.k8s.io/v1beta1");
        assert_eq!(p["metadata"], json!({"resourceVersion": "9"}));
        assert_eq!(p["items"][0]["kind"], "PartialObjectMetadata");
        assert_eq!(p["items"][0]["apiVersion"], "meta.k8s.io/v1beta1");
        let empty = partial_list(
            &json!({"metadata": {"resourceVersion": "3", "continue": "abc", "remainingItemCount": 4}, "items": []}),
            "meta.k8s.io/v1",
        );
        assert_eq!(
            (&empty["metadata"], &empty["items"]),
            (
                &json!({"resourceVersion": "3", "continue": "abc", "remainingItemCount": 4}),
                &Value::Null
            )
        );
    }

    #[test]
    fn wrong_shapes_are_406() {
        let pods = registry::find("", "v1", "pods").expect("pods");
        let deploy = registry::find("apps", "v1", "deployments").expect("deployments");
        let e = convert(
            pods,
            None,
            &json!({"items": []}),
            "PartialObjectMetadata",
            "meta.k8s.io/v1",
        )
        .expect_err("list as object");
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                406,
                "you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)"
            )
        );
        let e = convert(
            deploy,
            None,
            &pod(),
            "PartialObjectMetadataList",
            "meta.k8s.io/v1",
        )
        .expect_err("object as list");
        assert_eq!(
            e.message,
            "you requested PartialObjectMetadataList, but the requested object is not a list (*apps.Deployment)"
        );
        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Success"});
        assert_eq!(
            convert(
                pods,
                None,
                &status,
                "PartialObjectMetadata",
                "meta.k8s.io/v1"
            )
            .ok(),
            Some(status)
        );
        let lease = registry::find("coordination.k8s.io", "v1", "leases").expect("leases");
        assert_eq!(go_type(lease, None, true), "*coordination.LeaseList");
        assert_eq!(go_type(deploy, Some("scale"), false), "*autoscaling.Scale");
        let ev = registry::find("events.k8s.io", "v1", "events").expect("events");
        assert_eq!(go_type(ev, None, false), "*core.Event");
    }
}
