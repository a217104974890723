//! The `/scale` subresource (autoscaling/v1 Scale: `pkg/registry/apps/deployment/storage/storage.go`,
//! `ScaleREST`; server-side apply and managedFields as `ScaleREST` and apimachinery's
//! `scalehandler.go` carry them between the Scale and its parent) and `pods/binding`.

use http::Response;
use serde_json::{Value, json};

use super::handlers::update_in_txn;
use super::http::{Body, Ctx, parse_body, value_response};
use super::routes::Target;
use super::server::ApiServer;
use crate::registry::api_status::{ApiError, ApiResult, FieldError};
use crate::registry::apply::FieldManager;
use crate::registry::apply::meta_types::scale_schema;
use crate::registry::apply::scale::{SCALE_VERSION, replicas_path, to_parent, to_subresource};
use crate::registry::custom::scale as custom_scale;
use crate::registry::meta::{self, selector_string};
use crate::registry::patch;
use crate::registry::patch::options::WriteKind;
use crate::registry::view::view_value;
use crate::registry::{ResourceInfo, StorageId};
use crate::storage::{ObjRef, key_of};

/// The selector of a Scale's status: a label selector's text, or a ReplicationController's
/// plain map as `labels.SelectorFromSet` writes it.
fn scale_selector(sel: Option<&Value>) -> String {
    let plain = sel
        .and_then(Value::as_object)
        .filter(|m| !m.contains_key("matchLabels") && !m.contains_key("matchExpressions"));
    match plain {
        Some(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
            .collect::<Vec<_>>()
            .join(","),
        None => selector_string(sel),
    }
}

fn scale_doc(obj: &ObjRef) -> Value {
    let v = &obj.value();
    let replicas = meta::at(v, &["spec", "replicas"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    // autoscaling/v1 ScaleSpec.replicas is omitempty: 0 is written as nothing
    let spec = if replicas == 0 {
        json!({})
    } else {
        json!({"replicas": replicas})
    };
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta::name_of(v),
            "namespace": meta::namespace_of(v),
            "uid": meta::uid_of(v),
            "resourceVersion": obj.rv.to_string(),
            "creationTimestamp": meta::meta_str(v, "creationTimestamp"),
        },
        "spec": spec,
        "status": {
            "replicas": meta::at(v, &["status", "replicas"]).and_then(Value::as_i64).unwrap_or(0),
            "selector": scale_selector(meta::at(v, &["spec", "selector"])),
        },
    })
}

fn scale_invalid(name: &str, errs: &[FieldError]) -> ApiError {
    ApiError::invalid("Scale.autoscaling", "autoscaling", "Scale", name, errs)
}

/// The replicas a custom resource's Scale shows when its spec has none (upstream's marker).
const UNSET_REPLICAS: i64 = i32::MIN as i64;

/// The Scale of a stored object as the request's resource shows it.
fn scale_of(res: &ResourceInfo, obj: &ObjRef) -> ApiResult<Value> {
    match res.custom.and_then(|c| c.scale.as_ref()) {
        Some(paths) => custom_scale::scale_doc(&view_value(res, &obj.value()), obj.rv, paths),
        None => Ok(scale_doc(obj)),
    }
}

/// Whether two objects differ in nothing but their managedFields.
fn same_but_managers(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        v
    };
    strip(a) == strip(b)
}

/// GET, PUT or PATCH on `/scale`.
pub fn scale(srv: &ApiServer, t: &Target, verb: &str, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let ns = t.namespace.as_deref().unwrap_or("");
    let name = t.name.as_deref().unwrap_or("").to_string();
    let key = key_of(ns, &name);
    let custom = t.res.custom.and_then(|c| c.scale.as_ref());
    if verb == "get" {
        let obj = srv
            .store
            .get(t.res.storage, &key)
            .ok_or_else(|| ApiError::not_found(t.res, &name))?;
        return Ok(value_response(200, &scale_of(t.res, &obj)?));
    }
    let kind = if verb == "patch" {
        Some(patch::PatchKind::from_content_type(&ctx.content_type)?)
    } else {
        None
    };
    let applying = kind == Some(patch::PatchKind::Apply);
    ctx.check_write_options(match kind {
        Some(k) => WriteKind::Patch(k == patch::PatchKind::Apply),
        None => WriteKind::Update,
    })?;
    if kind == Some(patch::PatchKind::Strategic) && custom.is_some() {
        return Err(patch::strategic_unsupported());
    }
    let body = parse_body(ctx)?;
    let dry = ctx.dry_run();
    let writer = ctx.writer();
    let scale_types = scale_schema();
    let fm = FieldManager {
        schema: &scale_types,
        api_version: SCALE_VERSION,
        kind: "Scale",
        subresource: "scale",
        reset: None,
        strict_versions: false,
    };
    let group_version = t.res.api_version();
    let replicas_at = replicas_path(custom.map_or(".spec.replicas", |p| &p.spec_replicas));
    let obj = srv.store.write(|txn| -> ApiResult<ObjRef> {
        let old = txn
            .get(t.res.storage, &key)
            .ok_or_else(|| ApiError::not_found(t.res, &name))?;
        let doc = match custom {
            Some(paths) => {
                let (mut doc, found) =
                    custom_scale::scale_for_update(&view_value(t.res, &old.value()), old.rv, paths);
                if !found {
                    doc["spec"]["replicas"] = json!(UNSET_REPLICAS);
                }
                doc
            }
            None => scale_doc(&old),
        };
        // the Scale's managers are the parent's owners of the replicas
        let parent_managers = meta::at(&old.value(), &["metadata", "managedFields"]).cloned();
        let mut doc = doc;
        if let Some(mf) = to_subresource(parent_managers.as_ref(), &group_version, &replicas_at) {
            doc["metadata"]["managedFields"] = mf;
        }
        let new_scale = match kind {
            Some(_) if applying => {
                let applied = fm
                    .apply(&doc, &body, &writer.manager, ctx.q("force") == "true", &writer.now)
                    .map_err(|e| e.to_api_error())?;
                if custom.is_some() && !same_but_managers(&doc, &applied) {
                    // kube-apiserver v1.37.2 converts the merged Scale with the custom
                    // resource's converter, which refuses it: every apply to a custom
                    // resource's scale that changes something fails so
                    return Err(ApiError::plain(format!(
                        "failed to convert new object ({}/{}; autoscaling/v1, Kind=Scale) to proper version: request to convert CR to an invalid group/version: autoscaling/v1",
                        meta::namespace_of(&body),
                        meta::name_of(&body)
                    )));
                }
                applied
            }
            Some(k) => {
                let patched = patch::apply(k, StorageId::DEPLOYMENTS, doc.clone(), &body)?;
                fm.update(&doc, patched, &writer.manager, &writer.now)
            }
            None => fm.update(&doc, body.clone(), &writer.manager, &writer.now),
        };
        let replicas = meta::at(&new_scale, &["spec", "replicas"])
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if let Some(paths) = custom
            && replicas == UNSET_REPLICAS
        {
            return Err(ApiError::bad_request(format!(
                "the spec replicas field {:?} cannot be empty",
                paths.spec_replicas
            )));
        }
        if replicas < 0 && custom.is_none() {
            return Err(scale_invalid(
                &name,
                &[FieldError::invalid(
                    "spec.replicas",
                    replicas.to_string(),
                    "must be greater than or equal to 0",
                )],
            ));
        }
        let uid = meta::uid_of(&new_scale);
        let old_v = old.value();
        let have = meta::uid_of(&old_v);
        if !uid.is_empty() && uid != have {
            return Err(ApiError::uid_precondition(t.res, ns, &name, uid, have));
        }
        let rv = meta::rv_of(&new_scale);
        if !rv.is_empty() && rv != old.rv.to_string() {
            return Err(ApiError::conflict(t.res, &name));
        }
        let mut parent = view_value(t.res, &old_v);
        let managers = to_parent(
            parent_managers.as_ref(),
            meta::at(&new_scale, &["metadata", "managedFields"]),
            &group_version,
            &replicas_at,
        );
        let m = meta::meta_mut(&mut parent);
        match managers {
            Some(mf) => m.insert("managedFields".into(), mf),
            None => m.remove("managedFields"),
        };
        match custom {
            Some(paths) => custom_scale::set_spec_replicas(&mut parent, paths, replicas),
            None => {
                if let Some(s) = parent.get_mut("spec").and_then(Value::as_object_mut) {
                    s.insert("replicas".into(), json!(replicas));
                }
            }
        }
        update_in_txn(txn, t.res, None, &old, parent, dry)
    })?;
    Ok(value_response(200, &scale_of(t.res, &obj)?))
}

/// POST `pods/{name}/binding`: assign the pod to a node.
pub fn binding(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let body = parse_body(ctx)?;
    let ns = t.namespace.as_deref().unwrap_or("");
    let name = t.name.as_deref().unwrap_or("").to_string();
    let node = meta::at(&body, &["target", "name"])
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if node.is_empty() {
        return Err(ApiError::invalid(
            "Binding",
            "",
            "Binding",
            &name,
            &[FieldError::required("target.name", "")],
        ));
    }
    let key = key_of(ns, &name);
    srv.store.write(|txn| -> ApiResult<()> {
        let old = txn
            .get(t.res.storage, &key)
            .ok_or_else(|| ApiError::not_found(t.res, &name))?;
        let old_v = old.value();
        let cur = meta::at(&old_v, &["spec", "nodeName"]).and_then(Value::as_str).unwrap_or("");
        if !cur.is_empty() {
            return Err(ApiError::conflict_msg(
                "pods/binding",
                "",
                "pods/binding",
                &name,
                &format!("pod {name} is already assigned to node \"{cur}\""),
            ));
        }
        if meta::at(&old_v, &["metadata", "deletionTimestamp"]).is_some() {
            return Err(ApiError::conflict_msg(
                "pods/binding",
                "",
                "pods/binding",
                &name,
                &format!("pod {name} is being deleted, cannot be assigned to a host"),
            ));
        }
        let mut v = old_v.clone();
        if let Some(s) = v.get_mut("spec").and_then(Value::as_object_mut) {
            s.insert("nodeName".into(), Value::String(node.clone()));
        }
        if let Some(st) = v.get_mut("status").and_then(Value::as_object_mut) {
            let conds = st.entry("conditions").or_insert_with(|| json!([]));
            if let Some(a) = conds.as_array_mut() {
                a.retain(|c| c.get("type").and_then(Value::as_str) != Some("PodScheduled"));
                a.push(json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": meta::now_rfc3339()}));
            }
        }
        txn.put(t.res.storage, &key, v);
        Ok(())
    })?;
    Ok(value_response(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    ))
}
