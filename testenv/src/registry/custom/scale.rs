//! The `scale` subresource of a custom resource (upstream `registry/customresource/etcd.go`
//! `ScaleREST`): an autoscaling/v1 Scale read from the paths the CRD names, and replicas
//! written back to the spec path.

use serde_json::{Value, json};

use super::definition::ScalePaths;
use super::strategy::lookup;
use crate::registry::api_status::{ApiError, ApiResult};
use crate::registry::meta;

/// The Scale of a custom resource (`obj` as stored, `rv` its revision). A missing spec
/// replicas field is a 500, as upstream answers a GET.
pub fn scale_doc(obj: &Value, rv: u64, paths: &ScalePaths) -> ApiResult<Value> {
    let Some(spec) = lookup(obj, &paths.spec_replicas) else {
        let mut e = ApiError::internal(format!(
            "Internal error occurred: the spec replicas field {:?} does not exist",
            paths.spec_replicas
        ));
        e.details = Some(
            json!({"causes": [{"message": format!("the spec replicas field {:?} does not exist", paths.spec_replicas)}]}),
        );
        return Err(e);
    };
    Ok(doc(obj, rv, paths, spec.as_i64().unwrap_or(0)))
}

/// The Scale with the given spec replicas.
fn doc(obj: &Value, rv: u64, paths: &ScalePaths, spec_replicas: i64) -> Value {
    let status = lookup(obj, &paths.status_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = paths
        .label_selector
        .as_deref()
        .and_then(|p| lookup(obj, p))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut status_doc = json!({"replicas": status});
    if !selector.is_empty() {
        status_doc["selector"] = json!(selector);
    }
    let mut metadata = json!({
        "name": meta::name_of(obj),
        "uid": meta::uid_of(obj),
        "resourceVersion": rv.to_string(),
        "creationTimestamp": meta::meta_str(obj, "creationTimestamp"),
    });
    // a cluster-scoped object's Scale has no namespace, and zero replicas are left out
    // (autoscaling/v1 omits empty fields)
    if !meta::namespace_of(obj).is_empty() {
        metadata["namespace"] = json!(meta::namespace_of(obj));
    }
    let spec = if spec_replicas == 0 {
        json!({})
    } else {
        json!({"replicas": spec_replicas})
    };
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": spec,
        "status": status_doc,
    })
}

/// The Scale a patch applies to: its spec replicas marked unset when the object has none.
pub fn scale_for_update(obj: &Value, rv: u64, paths: &ScalePaths) -> (Value, bool) {
    match lookup(obj, &paths.spec_replicas) {
        Some(v) => (doc(obj, rv, paths, v.as_i64().unwrap_or(0)), true),
        None => (doc(obj, rv, paths, 0), false),
    }
}

/// Write `replicas` to the spec replicas path, creating the objects on the way.
pub fn set_spec_replicas(obj: &mut Value, paths: &ScalePaths, replicas: i64) {
    let parts: Vec<&str> = paths
        .spec_replicas
        .trim_start_matches('.')
        .split('.')
        .collect();
    let mut cur = obj;
    for (i, p) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let Some(m) = cur.as_object_mut() else {
            return;
        };
        if i + 1 == parts.len() {
            m.insert((*p).to_string(), json!(replicas));
            return;
        }
        cur = m.entry((*p).to_string()).or_insert_with(|| json!({}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ScalePaths {
        ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        }
    }

    #[test]
    fn scale_from_paths() {
        let o = json!({"metadata": {"name": "a", "namespace": "n", "uid": "u", "creationTimestamp": "t"},
                       "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=a"}});
        let s = scale_doc(&o, 7, &paths()).expect("scale");
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(s["status"], json!({"replicas": 2, "selector": "app=a"}));
        assert_eq!(s["metadata"]["resourceVersion"], "7");
        let missing = json!({"metadata": {"name": "a"}, "spec": {}});
        let e = scale_doc(&missing, 1, &paths()).expect_err("no replicas");
        assert_eq!(e.code, 500);
        let mut o2 = json!({"metadata": {"name": "a"}});
        set_spec_replicas(&mut o2, &paths(), 5);
        assert_eq!(o2["spec"]["replicas"], 5);
    }
}
