//! Deletion (`staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go`, `Delete`,
//! `DeleteCollection`; `pkg/registry/core/pod/strategy.go`, `CheckGracefulDelete`): DeleteOptions, preconditions, graceful pod deletion,
//! finalizers, and the namespace lifecycle (Terminating, then content removal).

use std::sync::Arc;
use std::time::Duration;

use http::Response;
use serde_json::{Value, json};

use super::http::{Body, Ctx, obj_response, value_response};
use super::list::Filter;
use super::routes::Target;
use super::server::ApiServer;
use crate::registry::api_status::{ApiError, ApiResult, FieldError, omit_empty};
use crate::registry::custom::crd_strategy::CLEANUP_FINALIZER;
use crate::registry::custom::naming::set_condition;
use crate::registry::meta::{self, meta_mut};
use crate::registry::view::view_value;
use crate::registry::{self, ResourceInfo, StorageId};
use crate::storage::{ObjRef, Txn, key_of};

/// Parsed DeleteOptions (body and query).
#[derive(Debug, Default, Clone)]
pub struct DeleteOptions {
    /// `gracePeriodSeconds`
    pub grace: Option<i64>,
    /// `propagationPolicy`
    pub policy: Option<String>,
    /// `orphanDependents`
    pub orphan: Option<bool>,
    /// `preconditions.uid`
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`
    pub rv: Option<String>,
    /// `dryRun: [All]`
    pub dry: bool,
}

impl DeleteOptions {
    /// Parse from the body (JSON DeleteOptions) and query parameters.
    pub fn parse(ctx: &Ctx) -> ApiResult<DeleteOptions> {
        let mut o = DeleteOptions::default();
        if !ctx.body.is_empty() {
            let v: Value = serde_json::from_slice(&ctx.body)
                .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
            o.grace = v.get("gracePeriodSeconds").and_then(Value::as_i64);
            o.policy = v
                .get("propagationPolicy")
                .and_then(Value::as_str)
                .map(str::to_string);
            o.orphan = v.get("orphanDependents").and_then(Value::as_bool);
            o.uid = meta::at(&v, &["preconditions", "uid"])
                .and_then(Value::as_str)
                .map(str::to_string);
            o.rv = meta::at(&v, &["preconditions", "resourceVersion"])
                .and_then(Value::as_str)
                .map(str::to_string);
            o.dry = v
                .get("dryRun")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|x| x == "All"));
        }
        if let Ok(g) = ctx.q("gracePeriodSeconds").parse::<i64>() {
            o.grace = Some(g);
        }
        if !ctx.q("propagationPolicy").is_empty() {
            o.policy = Some(ctx.q("propagationPolicy").to_string());
        }
        if let Ok(b) = ctx.q("orphanDependents").parse::<bool>() {
            o.orphan = Some(b);
        }
        o.dry |= ctx.dry_run();
        let mut errs = Vec::new();
        if o.orphan.is_some() && o.policy.is_some() {
            errs.push(FieldError::invalid(
                "propagationPolicy",
                format!("\"{}\"", o.policy.clone().unwrap_or_default()),
                "orphanDependents and deletionPropagation cannot be both set",
            ));
        }
        if let Some(p) = &o.policy
            && !matches!(p.as_str(), "Orphan" | "Background" | "Foreground")
        {
            errs.push(FieldError::not_supported(
                "propagationPolicy",
                format!("\"{p}\""),
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid(
                "DeleteOptions.meta.k8s.io",
                "meta.k8s.io",
                "DeleteOptions",
                "",
                &errs,
            ));
        }
        if let Some(g) = o.grace
            && g < 0
        {
            o.grace = Some(1);
        }
        Ok(o)
    }
}

fn precondition_conflict(res: &ResourceInfo, name: &str, tail: String) -> ApiError {
    ApiError::conflict_msg(&res.qualified_kind(), res.group, res.kind, name, &tail)
}

fn set_deleting(obj: &mut Value, ts: String, grace: i64, first: bool) {
    let generation = meta::generation(obj);
    let m = meta_mut(obj);
    m.insert("deletionTimestamp".into(), Value::String(ts));
    m.insert("deletionGracePeriodSeconds".into(), json!(grace));
    if first && generation > 0 {
        m.insert("generation".into(), json!(generation + 1));
    }
}

/// A shorter grace period for a pod already being deleted: its deletionTimestamp moves by the
/// difference, never before now (then a non-zero grace becomes 1 s), as upstream's BeforeDelete.
fn shortened_deletion(obj: &Value, cur: i64, g: i64) -> (String, i64) {
    let now = jiff::Timestamp::now();
    let at = meta::at(obj, &["metadata", "deletionTimestamp"])
        .and_then(Value::as_str)
        .and_then(meta::parse_time)
        .and_then(|t| t.checked_add(jiff::SignedDuration::from_secs(g - cur)).ok())
        .unwrap_or(now);
    let (at, g) = if at < now {
        (now, if g == 0 { 0 } else { 1 })
    } else {
        (at, g)
    };
    (at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(), g)
}

/// A CRD's first delete (upstream's CRD registry): a deletion timestamp, the cleanup finalizer
/// and `Terminating` True `InstanceDeletionPending`.
fn mark_crd_deleted(mut crd: Value) -> Value {
    let now = meta::now_rfc3339();
    let mut fins = meta::finalizers(&crd);
    if !fins.iter().any(|f| f == CLEANUP_FINALIZER) {
        fins.push(CLEANUP_FINALIZER.to_string());
    }
    meta::set_finalizers(&mut crd, &fins);
    meta_mut(&mut crd).insert("deletionTimestamp".into(), Value::String(now.clone()));
    set_condition(
        &mut crd,
        "Terminating",
        "True",
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        &now,
    );
    crd
}

/// The outcome of a delete inside the store.
#[derive(Debug)]
pub enum Deleted {
    /// Still present (graceful, finalizers, terminating namespace): answer the object.
    Pending(ObjRef),
    /// Removed: the last state.
    Gone(ObjRef),
}

/// Delete one object under the write lock (`store.go`, `Delete`: preconditions, graceful
/// deletion, finalizers).
pub fn delete_in_txn(
    txn: &mut Txn<'_>,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    o: &DeleteOptions,
) -> ApiResult<Deleted> {
    let id = res.storage;
    let old = txn
        .get(id, key)
        .ok_or_else(|| ApiError::not_found(res, name))?;
    let old_v = old.value();
    let uid = meta::uid_of(&old_v).to_string();
    if let Some(u) = &o.uid
        && *u != uid
    {
        return Err(precondition_conflict(
            res,
            name,
            format!(
                "the UID in the precondition ({u}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            ),
        ));
    }
    if let Some(rv) = &o.rv
        && *rv != old.rv.to_string()
    {
        return Err(precondition_conflict(
            res,
            name,
            format!(
                "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                old.rv
            ),
        ));
    }
    let mut obj = old_v.clone();
    let already = meta::at(&obj, &["metadata", "deletionTimestamp"]).is_some();
    if id == StorageId::CUSTOMRESOURCEDEFINITIONS && !already {
        // the first delete of a CRD marks it; the server deletes its objects, then the CRD
        return Ok(Deleted::Pending(if o.dry {
            old
        } else {
            txn.put(id, key, mark_crd_deleted(obj))
        }));
    }
    if id == StorageId::NAMESPACES {
        if already {
            // finalized (no spec or metadata finalizers left): the namespace goes now
            let spec_fins = meta::at(&obj, &["spec", "finalizers"])
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if spec_fins || !meta::finalizers(&obj).is_empty() || o.dry {
                return Ok(Deleted::Pending(old));
            }
            return txn
                .remove(id, key)
                .map(Deleted::Gone)
                .ok_or_else(|| ApiError::internal("object vanished during delete"));
        }
        set_deleting(&mut obj, meta::now_rfc3339(), 0, true);
        obj["status"] = json!({"phase": "Terminating"});
        if o.dry {
            return Ok(Deleted::Pending(old));
        }
        return Ok(Deleted::Pending(txn.put(id, key, obj)));
    }
    let mut grace_now = 0;
    // Pods delete gracefully (upstream's graceful strategy): even a deletion with grace 0 is
    // first written (deletionTimestamp, deletionGracePeriodSeconds 0: a MODIFIED event) and
    // then removed (DELETED), as kube-apiserver's two-phase delete does.
    let mut write_first = false;
    if id == StorageId::PODS {
        let phase = meta::at(&obj, &["status", "phase"])
            .and_then(Value::as_str)
            .unwrap_or("");
        let node = meta::at(&obj, &["spec", "nodeName"])
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut grace = o.grace.unwrap_or_else(|| {
            meta::at(&obj, &["spec", "terminationGracePeriodSeconds"])
                .and_then(Value::as_i64)
                .unwrap_or(30)
        });
        if node.is_empty() || phase == "Succeeded" || phase == "Failed" {
            grace = 0;
        }
        if already {
            let cur = meta::at(&obj, &["metadata", "deletionGracePeriodSeconds"])
                .and_then(Value::as_i64)
                .unwrap_or(0);
            // with no grace left the delete is not graceful (finalizers decide below)
            if cur > 0 {
                let Some(g) = o.grace.filter(|g| *g < cur) else {
                    // only a shorter grace period changes a pending graceful deletion
                    return Ok(Deleted::Pending(old));
                };
                let (ts, g) = shortened_deletion(&obj, cur, g);
                set_deleting(&mut obj, ts, g, false);
                if g > 0 {
                    if o.dry {
                        return Ok(Deleted::Pending(old));
                    }
                    return Ok(Deleted::Pending(txn.put(id, key, obj)));
                }
                write_first = true;
            } else if !meta::finalizers(&obj).is_empty() {
                return Ok(Deleted::Pending(old));
            }
        } else {
            set_deleting(&mut obj, meta::rfc3339_in(grace), grace, true);
            grace_now = grace;
            write_first = grace == 0;
        }
    }
    // garbage-collector finalizers from the propagation policy (not for events)
    if id != StorageId::EVENTS {
        let mut fins = meta::finalizers(&obj);
        let policy = match (&o.policy, o.orphan) {
            (Some(p), _) => Some(p.as_str()),
            (None, Some(true)) => Some("Orphan"),
            (None, Some(false)) => Some("Background"),
            (None, None) => None,
        };
        match policy {
            Some("Orphan") => {
                fins.retain(|f| f != "foregroundDeletion");
                if !fins.iter().any(|f| f == "orphan") {
                    fins.push("orphan".into());
                }
            }
            Some("Foreground") => {
                fins.retain(|f| f != "orphan");
                if !fins.iter().any(|f| f == "foregroundDeletion") {
                    fins.push("foregroundDeletion".into());
                }
            }
            Some(_) => fins.retain(|f| f != "orphan" && f != "foregroundDeletion"),
            None => {}
        }
        meta::set_finalizers(&mut obj, &fins);
    }
    let pending = grace_now > 0 || !meta::finalizers(&obj).is_empty();
    if pending {
        if meta::at(&obj, &["metadata", "deletionTimestamp"]).is_none() {
            set_deleting(&mut obj, meta::now_rfc3339(), 0, true);
        }
        if o.dry {
            return Ok(Deleted::Pending(old));
        }
        let mut cmp = obj.clone();
        meta_mut(&mut cmp).insert("resourceVersion".into(), Value::String(old.rv.to_string()));
        if cmp == old_v {
            return Ok(Deleted::Pending(old));
        }
        return Ok(Deleted::Pending(txn.put(id, key, obj)));
    }
    if o.dry {
        return Ok(Deleted::Gone(old));
    }
    if write_first {
        txn.put(id, key, obj);
    }
    txn.remove(id, key)
        .map(Deleted::Gone)
        .ok_or_else(|| ApiError::internal("object vanished during delete"))
}

fn success_status(res: &ResourceInfo, obj: &ObjRef) -> Value {
    let v = obj.value();
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": omit_empty(json!({"name": meta::name_of(&v), "group": res.group, "kind": res.plural, "uid": meta::uid_of(&v)})),
    })
}

/// DELETE on an item.
pub fn delete(srv: &Arc<ApiServer>, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let o = DeleteOptions::parse(ctx)?;
    let ns = if t.res.namespaced {
        t.namespace.as_deref().unwrap_or("")
    } else {
        ""
    };
    let name = t.name.as_deref().unwrap_or("");
    let key = key_of(ns, name);
    let r = srv
        .store
        .write(|txn| delete_in_txn(txn, t.res, &key, name, &o))?;
    match r {
        Deleted::Pending(obj) => {
            if t.res.storage == StorageId::NAMESPACES
                && !o.dry
                && srv
                    .namespace_cleanup
                    .load(std::sync::atomic::Ordering::Relaxed)
            {
                spawn_namespace_cleanup(srv.clone(), name.to_string());
            }
            Ok(obj_response(t.res, 200, &obj))
        }
        Deleted::Gone(obj) if t.res.storage == StorageId::PODS => {
            Ok(obj_response(t.res, 200, &obj))
        }
        Deleted::Gone(obj) => Ok(value_response(200, &success_status(t.res, &obj))),
    }
}

/// DELETE on a collection: deletes every matching object one by one.
pub fn delete_collection(srv: &Arc<ApiServer>, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let o = DeleteOptions::parse(ctx)?;
    let f = Filter::from_ctx(t, ctx)?;
    let prefix = match (&t.namespace, t.res.namespaced) {
        (Some(ns), true) => format!("{ns}/"),
        _ => String::new(),
    };
    let (items, _) = srv
        .store
        .snapshot(t.res.storage, &prefix, &|o| f.matches_obj(o));
    let mut deleted = Vec::new();
    for it in items {
        let v = it.value();
        let name = meta::name_of(&v).to_string();
        let key = key_of(meta::namespace_of(&v), &name);
        match srv
            .store
            .write(|txn| delete_in_txn(txn, t.res, &key, &name, &o))
        {
            Ok(Deleted::Pending(obj) | Deleted::Gone(obj)) => {
                deleted.push(view_value(t.res, &obj.value()))
            }
            Err(_) => {}
        }
    }
    // the answer is the list of what was deleted, as upstream's DeleteCollection returns it
    let kind = match t.res.custom {
        Some(cv) => cv.list_kind.clone(),
        None => format!("{}List", t.res.kind),
    };
    let mut meta = json!({"resourceVersion": srv.store.rv().to_string()});
    if t.res.is_custom() {
        meta["continue"] = json!("");
    }
    Ok(value_response(
        200,
        &json!({"kind": kind, "apiVersion": t.res.api_version(), "metadata": meta, "items": deleted}),
    ))
}

/// Namespace controller emulation: remove everything in a Terminating namespace, then
/// the namespace itself. Content is removed at once (pods without grace).
fn spawn_namespace_cleanup(srv: Arc<ApiServer>, ns: String) {
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let prefix = format!("{ns}/");
        let custom = srv
            .crds
            .custom_buckets()
            .into_iter()
            .filter(|(_, namespaced)| *namespaced)
            .map(|(id, _)| id);
        for id in registry::namespaced_buckets().chain(custom) {
            let (items, _) = srv.store.snapshot(id, &prefix, &|_| true);
            for it in items {
                let key = key_of(&ns, it.field("metadata.name").unwrap_or(""));
                srv.store.write(|txn| {
                    txn.remove(id, &key);
                });
            }
        }
        srv.store.write(|txn| {
            let Some(n) = txn.get(StorageId::NAMESPACES, &ns) else {
                return;
            };
            let mut v = n.value();
            if let Some(s) = v.get_mut("spec").and_then(Value::as_object_mut) {
                s.insert("finalizers".into(), json!([]));
            }
            if meta::finalizers(&v).is_empty() {
                txn.put(StorageId::NAMESPACES, &ns, v);
                txn.remove(StorageId::NAMESPACES, &ns);
            }
        });
    });
}
