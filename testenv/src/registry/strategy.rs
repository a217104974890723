//! Per-kind registry strategies: decoding, create/update preparation, status separation
//! and generation (each kind's `pkg/registry/<group>/<kind>/strategy.go`, `PrepareForCreate`,
//! `PrepareForUpdate`).

use k8s_openapi::api::{apps::v1 as apps, coordination::v1 as coord, core::v1 as core};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};

use super::api_status::{ApiError, ApiResult};
use super::custom::crd_strategy;
use super::meta::{self, at, meta_mut, semantic_eq};
use super::resources::{ResourceInfo, StorageId};
use super::{decode, kind_strategy, schema};

/// The built-in kinds with special code: decoded through their k8s-openapi type and prepared by
/// this file's own rules. Every other built-in kind is decoded with its schema and prepared by
/// [`kind_strategy`].
pub fn has_special_code(id: StorageId) -> bool {
    matches!(
        id,
        StorageId::NAMESPACES
            | StorageId::PODS
            | StorageId::EVENTS
            | StorageId::NODES
            | StorageId::DEPLOYMENTS
            | StorageId::REPLICASETS
            | StorageId::LEASES
            | StorageId::CUSTOMRESOURCEDEFINITIONS
    )
}

/// Whether the kind is prepared by [`kind_strategy`] (built-in, stored, no special code).
fn is_generic(id: StorageId) -> bool {
    !has_special_code(id) && !id.is_custom() && id != StorageId::NONE
}

/// What upstream's storage round trip does to an object of a kind without special code after
/// its strategy ran (encoded into etcd, decoded and defaulted when read): zero values written,
/// empty fields left out, defaults applied again (a Job's labels from its template's).
pub fn storage_round_trip(res: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    if !is_generic(res.storage) {
        return Ok(());
    }
    let storage_res = super::resources::for_storage(res.storage);
    let (v, _) = normalize_checked(storage_res, std::mem::take(obj))?;
    *obj = v;
    super::defaults::apply(res.storage, obj);
    Ok(())
}

/// Whether a PUT on a missing object creates it (never for custom resources).
pub fn allow_create_on_update(id: StorageId) -> bool {
    matches!(id, StorageId::EVENTS | StorageId::LEASES)
}

/// Whether a PUT without `metadata.resourceVersion` is accepted.
pub fn allow_unconditional_update(id: StorageId) -> bool {
    !(matches!(id, StorageId::LEASES | StorageId::CUSTOMRESOURCEDEFINITIONS) || id.is_custom())
}

fn roundtrip<T: DeserializeOwned + Serialize>(v: Value) -> Result<Value, serde_json::Error> {
    let t: T = serde_json::from_value(v)?;
    serde_json::to_value(t)
}

/// Decode a request body into the typed object and back: unknown fields are dropped,
/// wrongly typed fields are a 400, `apiVersion`/`kind` are filled in.
pub fn normalize(res: &ResourceInfo, v: Value) -> ApiResult<Value> {
    normalize_checked(res, v).map(|(v, _)| v)
}

/// Paths of fields present (and not null) in `input` but dropped by decoding.
pub fn unknown_fields(input: &Value, output: &Value, path: &str, acc: &mut Vec<String>) {
    match (input, output) {
        (Value::Object(i), Value::Object(o)) => {
            for (k, v) in i {
                if v.is_null() {
                    continue;
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match o.get(k) {
                    None => acc.push(p),
                    Some(ov) => unknown_fields(v, ov, &p, acc),
                }
            }
        }
        (Value::Array(i), Value::Array(o)) => {
            for (n, (a, b)) in i.iter().zip(o).enumerate() {
                unknown_fields(a, b, &format!("{path}[{n}]"), acc);
            }
        }
        _ => {}
    }
}

/// [`normalize`], also returning the unknown fields that decoding dropped.
pub fn normalize_checked(res: &ResourceInfo, mut v: Value) -> ApiResult<(Value, Vec<String>)> {
    let Some(o) = v.as_object_mut() else {
        return Err(ApiError::bad_request(
            "the object provided is not a JSON object",
        ));
    };
    let want_av = if res.storage == StorageId::EVENTS {
        "v1".to_string()
    } else {
        res.api_version()
    };
    match o.get("apiVersion").and_then(Value::as_str) {
        None | Some("") => {
            o.insert("apiVersion".into(), Value::String(want_av.clone()));
        }
        Some(av) if av != want_av => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({want_av})"
            )));
        }
        Some(_) => {}
    }
    match o.get("kind").and_then(Value::as_str) {
        None | Some("") => {
            o.insert("kind".into(), Value::String(res.kind.to_string()));
        }
        Some(k) if k != res.kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                res.kind
            )));
        }
        Some(_) => {}
    }
    // managedFields stay: the field manager reads what the client sent (registry::apply)
    if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("selfLink");
    }
    let input = v.clone();
    // k8s-openapi defaults required fields; a missing selector must stay missing for validation
    let had_selector = at(&v, &["spec", "selector"]).is_some_and(|s| !s.is_null());
    let r = match res.storage {
        StorageId::NAMESPACES => roundtrip::<core::Namespace>(v),
        StorageId::PODS => roundtrip::<core::Pod>(v),
        StorageId::EVENTS => roundtrip::<core::Event>(v),
        StorageId::NODES => roundtrip::<core::Node>(v),
        StorageId::DEPLOYMENTS => roundtrip::<apps::Deployment>(v),
        StorageId::REPLICASETS => roundtrip::<apps::ReplicaSet>(v),
        StorageId::LEASES => roundtrip::<coord::Lease>(v),
        StorageId::CUSTOMRESOURCEDEFINITIONS => roundtrip::<apiext::CustomResourceDefinition>(v),
        // custom resources are decoded with their schema (custom::strategy::decode)
        id if id.is_custom() => Ok(v),
        // every other kind: with its schema from upstream's OpenAPI
        _ => return decode_with_schema(res, v),
    };
    let mut out =
        r.map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))?;
    if res.storage == StorageId::CUSTOMRESOURCEDEFINITIONS {
        crd_strategy::integral_bounds(&mut out);
    }
    if !had_selector
        && matches!(res.storage, StorageId::DEPLOYMENTS | StorageId::REPLICASETS)
        && let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut)
    {
        spec.remove("selector");
    }
    let mut unknown = Vec::new();
    unknown_fields(&input, &out, "", &mut unknown);
    Ok((out, unknown))
}

/// Decode a kind without special code with its schema (see [`decode`](super::decode)); a type
/// error is a 400 worded as kube-apiserver's create and update handlers word it.
fn decode_with_schema(res: &ResourceInfo, v: Value) -> ApiResult<(Value, Vec<String>)> {
    let Some(root) = schema::catalog().kind(res.group, res.version, res.kind) else {
        return Err(ApiError::internal(format!(
            "no schema for {} {}",
            res.api_version(),
            res.kind
        )));
    };
    let d = decode::decode(root, v).map_err(|e| {
        ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: {e}",
            kind = res.kind,
            version = res.version,
            e = e.0
        ))
    })?;
    Ok((d.value, d.unknown))
}

/// Pod QoS class from container requests and limits.
pub fn qos_class(pod: &Value) -> &'static str {
    let mut any = false;
    let mut guaranteed = true;
    let lists = ["containers", "initContainers"];
    for l in lists {
        for c in at(pod, &["spec", l])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let req = at(c, &["resources", "requests"]);
            let lim = at(c, &["resources", "limits"]);
            for r in ["cpu", "memory"] {
                let q = req.and_then(|m| m.get(r));
                let lq = lim.and_then(|m| m.get(r));
                if q.is_some() || lq.is_some() {
                    any = true;
                }
                match (q, lq) {
                    (_, None) => guaranteed = false,
                    (Some(a), Some(b)) if a != b => guaranteed = false,
                    _ => {}
                }
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn set(obj: &mut Value, key: &str, v: Value) {
    if let Some(o) = obj.as_object_mut() {
        o.insert(key.to_string(), v);
    }
}

fn take(obj: &Value, key: &str) -> Option<Value> {
    obj.get(key).cloned()
}

fn put_opt(obj: &mut Value, key: &str, v: Option<Value>) {
    if let Some(o) = obj.as_object_mut() {
        match v {
            Some(v) => {
                o.insert(key.to_string(), v);
            }
            None => {
                o.remove(key);
            }
        }
    }
}

fn drop_lease_gated(obj: &mut Value) {
    if let Some(s) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        s.remove("strategy");
        s.remove("preferredHolder");
    }
}

/// Strategy `PrepareForCreate`: status reset and kind-specific metadata.
pub fn prepare_for_create(id: StorageId, obj: &mut Value) {
    match id {
        StorageId::DEPLOYMENTS | StorageId::REPLICASETS => {
            set(obj, "status", json!({}));
            meta_mut(obj).insert("generation".into(), json!(1));
        }
        StorageId::PODS => {
            let q = qos_class(obj);
            set(obj, "status", json!({"phase": "Pending", "qosClass": q}));
            meta_mut(obj).insert("generation".into(), json!(1));
        }
        StorageId::NAMESPACES => {
            set(obj, "status", json!({"phase": "Active"}));
            let mut fins: Vec<Value> = at(obj, &["spec", "finalizers"])
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if !fins.iter().any(|f| f == "kubernetes") {
                fins.push(json!("kubernetes"));
            }
            set(obj, "spec", json!({"finalizers": fins}));
            meta_mut(obj).remove("generation");
        }
        StorageId::LEASES => {
            drop_lease_gated(obj);
            meta_mut(obj).remove("generation");
        }
        StorageId::EVENTS | StorageId::NODES => {
            meta_mut(obj).remove("generation");
        }
        StorageId::CUSTOMRESOURCEDEFINITIONS => crd_strategy::prepare_for_create(obj),
        id if is_generic(id) => kind_strategy::prepare_for_create(id, obj),
        // custom resources: custom::strategy::prepare_for_create
        _ => {}
    }
    if id == StorageId::NAMESPACES {
        let name = meta::name_of(obj).to_string();
        let m = meta_mut(obj);
        let labels = m
            .entry("labels")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }
}

/// Copy the fields a client may not change on update (`BeforeUpdate`).
pub fn keep_system_fields(old: &Value, new: &mut Value) {
    let om = old.get("metadata").cloned().unwrap_or(json!({}));
    let m = meta_mut(new);
    for k in [
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match om.get(k) {
            Some(v) => {
                m.insert(k.into(), v.clone());
            }
            None => {
                m.remove(k);
            }
        }
    }
    if m.get("uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
        && let Some(u) = om.get("uid")
    {
        m.insert("uid".into(), u.clone());
    }
}

fn bump_generation(obj: &mut Value) {
    let g = meta::generation(obj);
    meta_mut(obj).insert("generation".into(), json!(g + 1));
}

/// Strategy `PrepareForUpdate` for the main resource or a subresource (`status`, `finalize`).
pub fn prepare_for_update(id: StorageId, sub: Option<&str>, old: &Value, new: &mut Value) {
    keep_system_fields(old, new);
    if is_generic(id) {
        kind_strategy::prepare_for_update(id, sub, old, new);
        return;
    }
    match sub {
        None => {
            match id {
                StorageId::DEPLOYMENTS
                | StorageId::REPLICASETS
                | StorageId::PODS
                | StorageId::NODES => {
                    put_opt(new, "status", take(old, "status"));
                }
                StorageId::NAMESPACES => {
                    put_opt(new, "status", take(old, "status"));
                    let fins = at(old, &["spec", "finalizers"]).cloned();
                    let spec = new
                        .as_object_mut()
                        .map(|o| o.entry("spec").or_insert_with(|| json!({})));
                    if let Some(Value::Object(s)) = spec {
                        match fins {
                            Some(f) => {
                                s.insert("finalizers".into(), f);
                            }
                            None => {
                                s.remove("finalizers");
                            }
                        }
                    }
                }
                StorageId::LEASES => drop_lease_gated(new),
                StorageId::CUSTOMRESOURCEDEFINITIONS => {
                    crd_strategy::prepare_for_update(old, new, false)
                }
                _ => {}
            }
            let spec_changed = !semantic_eq(old.get("spec"), new.get("spec"));
            let bump = match id {
                StorageId::DEPLOYMENTS => {
                    spec_changed
                        || !semantic_eq(
                            at(old, &["metadata", "annotations"]),
                            at(new, &["metadata", "annotations"]),
                        )
                }
                StorageId::REPLICASETS | StorageId::PODS => spec_changed,
                _ => false,
            };
            if bump && meta::generation(old) > 0 {
                bump_generation(new);
            }
        }
        Some("status") => {
            put_opt(new, "spec", take(old, "spec"));
            match id {
                StorageId::CUSTOMRESOURCEDEFINITIONS => {
                    crd_strategy::prepare_for_update(old, new, true)
                }
                StorageId::DEPLOYMENTS => {
                    let labels = at(old, &["metadata", "labels"]).cloned();
                    let m = meta_mut(new);
                    match labels {
                        Some(l) => {
                            m.insert("labels".into(), l);
                        }
                        None => {
                            m.remove("labels");
                        }
                    }
                }
                StorageId::PODS => {
                    let owners = at(old, &["metadata", "ownerReferences"]).cloned();
                    let m = meta_mut(new);
                    match owners {
                        Some(l) => {
                            m.insert("ownerReferences".into(), l);
                        }
                        None => {
                            m.remove("ownerReferences");
                        }
                    }
                    let old_qos = at(old, &["status", "qosClass"]).cloned();
                    let old_og = at(old, &["status", "observedGeneration"]).cloned();
                    if let Some(st) = new.get_mut("status").and_then(Value::as_object_mut) {
                        if st
                            .get("qosClass")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .is_empty()
                            && let Some(q) = old_qos
                        {
                            st.insert("qosClass".into(), q);
                        }
                        if st
                            .get("observedGeneration")
                            .and_then(Value::as_i64)
                            .unwrap_or(0)
                            == 0
                            && let Some(g) = old_og
                        {
                            st.insert("observedGeneration".into(), g);
                        }
                    }
                }
                _ => {}
            }
        }
        Some("finalize") => {
            let fins = at(new, &["spec", "finalizers"]).cloned();
            let mut merged = old.clone();
            if let Some(Value::Object(s)) = merged.get_mut("spec") {
                match fins {
                    Some(f) => {
                        s.insert("finalizers".into(), f);
                    }
                    None => {
                        s.remove("finalizers");
                    }
                }
            }
            *new = merged;
        }
        // pods/ephemeralcontainers: only the ephemeral containers change (and the generation)
        Some("ephemeralcontainers") => {
            let ephemeral = at(new, &["spec", "ephemeralContainers"]).cloned();
            let mut merged = old.clone();
            if let Some(Value::Object(s)) = merged.get_mut("spec") {
                match ephemeral {
                    Some(e) => {
                        s.insert("ephemeralContainers".into(), e);
                    }
                    None => {
                        s.remove("ephemeralContainers");
                    }
                }
            }
            merged["metadata"] = new.get("metadata").cloned().unwrap_or(json!({}));
            let changed = !semantic_eq(old.get("spec"), merged.get("spec"));
            *new = merged;
            if changed && meta::generation(old) > 0 {
                bump_generation(new);
            }
        }
        Some(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_reported() {
        let res = crate::registry::find("apps", "v1", "deployments").expect("d");
        let body = json!({"metadata": {"name": "x", "bogus": 1}, "spec": {"foo": "bar", "selector": {"matchLabels": {"a": "b"}}, "template": {"spec": {"containers": [{"name": "c", "image": "i", "nope": true}]}}}});
        let (_, unknown) = normalize_checked(res, body).expect("decodes");
        assert_eq!(
            unknown,
            vec![
                "metadata.bogus",
                "spec.foo",
                "spec.template.spec.containers[0].nope"
            ]
        );
        let ok = json!({"metadata": {"name": "x", "labels": {}}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"spec": {"containers": []}}}});
        assert!(normalize_checked(res, ok).expect("decodes").1.is_empty());
    }

    #[test]
    fn qos_classes() {
        assert_eq!(
            qos_class(&json!({"spec": {"containers": [{"name": "a"}]}})),
            "BestEffort"
        );
        let g = json!({"spec": {"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}}]}});
        assert_eq!(qos_class(&g), "Guaranteed");
        let b = json!({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}});
        assert_eq!(qos_class(&b), "Burstable");
    }

    #[test]
    fn deployment_generation_rules() {
        let old = json!({"metadata": {"generation": 1, "annotations": {"a": "1"}}, "spec": {"replicas": 1}, "status": {"replicas": 1}});
        let mut new = json!({"metadata": {"annotations": {"a": "2"}}, "spec": {"replicas": 1}, "status": {"replicas": 5}});
        prepare_for_update(StorageId::DEPLOYMENTS, None, &old, &mut new);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(new["status"]["replicas"], 1);
        // ReplicaSet: annotations do not count
        let mut new = json!({"metadata": {"annotations": {"a": "2"}}, "spec": {"replicas": 1}});
        prepare_for_update(StorageId::REPLICASETS, None, &old, &mut new);
        assert_eq!(new["metadata"]["generation"], 1);
        // status path: spec and labels (deployment) reset, generation kept
        let old =
            json!({"metadata": {"generation": 2, "labels": {"x": "1"}}, "spec": {"replicas": 1}});
        let mut new = json!({"metadata": {"labels": {"x": "2"}, "annotations": {"r": "1"}}, "spec": {"replicas": 9}, "status": {"observedGeneration": 2}});
        prepare_for_update(StorageId::DEPLOYMENTS, Some("status"), &old, &mut new);
        assert_eq!(new["spec"]["replicas"], 1);
        assert_eq!(new["metadata"]["labels"]["x"], "1");
        assert_eq!(new["metadata"]["annotations"]["r"], "1");
        assert_eq!(new["metadata"]["generation"], 2);
    }
}
