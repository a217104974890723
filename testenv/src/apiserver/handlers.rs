//! Item and collection handlers: get, create, update (main resource and `status` /
//! `finalize`), patch, and the shared update path every write goes through. Creates, updates
//! and patches are tracked in `metadata.managedFields` (server-side apply is `apply.rs`).

use std::sync::Arc;

use http::Response;
use serde_json::{Value, json};

use super::http::{Body, Ctx, obj_response, parse_body, with_warnings};
use super::routes::Target;
use super::server::ApiServer;
use super::{cluster_objects, services, table};
use crate::registry::api_status::{ApiError, ApiResult, FieldError, go_quote};
use crate::registry::apply::endpoint::{Writer, track};
use crate::registry::apply::managed_fields;
use crate::registry::events_v1;
use crate::registry::meta::{self, meta_mut};
use crate::registry::patch::options::WriteKind;
use crate::registry::view::view_value;
use crate::registry::{
    self, ResourceInfo, StorageId, convert, custom, defaults, patch, strategy, validation,
};
use crate::storage::{Obj, ObjRef, Txn, key_of};

/// Decode a body into the stored (core) form of the resource.
pub fn decode_for_storage(res: &ResourceInfo, v: Value) -> ApiResult<Value> {
    decode_checked(res, v, &Ctx::default()).map(|(v, _)| v)
}

/// Decode a body and apply `fieldValidation` to unknown fields: `Strict` answers 400,
/// `Ignore` drops them silently, anything else (the default, `Warn`) returns warnings.
pub fn decode_checked(res: &ResourceInfo, v: Value, ctx: &Ctx) -> ApiResult<(Value, Vec<String>)> {
    decode_with(res, v, ctx, false)
}

/// `decode_checked` for a patched object: with `fieldValidation=Strict` unknown fields are a
/// 422 on the field `patch` whose value is the patched object, as upstream's patch handler.
pub(super) fn decode_patched(
    res: &ResourceInfo,
    v: Value,
    ctx: &Ctx,
) -> ApiResult<(Value, Vec<String>)> {
    decode_with(res, v, ctx, true)
}

fn decode_with(
    res: &ResourceInfo,
    v: Value,
    ctx: &Ctx,
    patched: bool,
) -> ApiResult<(Value, Vec<String>)> {
    let storage_res = registry::for_storage(res.storage);
    let patched_json = if patched && ctx.q("fieldValidation") == "Strict" {
        serde_json::to_string(&v).unwrap_or_default()
    } else {
        String::new()
    };
    // the kind and version the body claims (the URL's when it names none), for the 400 text
    let body_kind = v["kind"].as_str().unwrap_or(res.kind).to_string();
    let body_version = v["apiVersion"]
        .as_str()
        .map(|av| av.rsplit('/').next().unwrap_or(av))
        .unwrap_or(res.version)
        .to_string();
    let v = if res.is_events_v1() {
        events_v1::to_core(v)
    } else {
        v
    };
    let (out, unknown) = match res.custom {
        Some(cv) => {
            let raw = if patched {
                crate::registry::go_json::to_vec(&v).unwrap_or_default()
            } else {
                ctx.body.to_vec()
            };
            custom::strategy::decode(res, cv, v, &raw)?
        }
        None if convert::converts(res) => {
            let (out, unknown) = strategy::normalize_checked(res, v)?;
            (convert::to_storage(res, out), unknown)
        }
        None => strategy::normalize_checked(storage_res, v)?,
    };
    if unknown.is_empty() {
        return Ok((out, Vec::new()));
    }
    let msgs: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    match ctx.q("fieldValidation") {
        "Strict" if patched => Err(ApiError::invalid(
            "",
            "",
            "",
            "",
            &[FieldError::invalid(
                "patch",
                go_quote(&patched_json),
                format!("strict decoding error: {}", msgs.join(", ")),
            )],
        )),
        // as upstream's create and update handlers word a failed decode
        "Strict" => Err(ApiError::bad_request(format!(
            "{body_kind} in version {body_version:?} cannot be handled as a {}: strict decoding error: {}",
            res.kind,
            msgs.join(", ")
        ))),
        "Ignore" => Ok((out, Vec::new())),
        _ => Ok((out, msgs)),
    }
}

pub(super) fn url_ns(t: &Target) -> &str {
    if t.res.namespaced {
        t.namespace.as_deref().unwrap_or("")
    } else {
        ""
    }
}

pub(super) fn url_name(t: &Target) -> &str {
    t.name.as_deref().unwrap_or("")
}

/// Fill the namespace from the URL; 400 when the body names another one.
pub(super) fn set_namespace(t: &Target, obj: &mut Value) -> ApiResult<()> {
    let ns = url_ns(t).to_string();
    let m = meta_mut(obj);
    if !t.res.namespaced {
        m.remove("namespace");
        return Ok(());
    }
    let body_ns = m
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if body_ns.is_empty() {
        m.insert("namespace".into(), Value::String(ns));
    } else if body_ns != ns {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

/// GET on an item (or its `status`).
pub fn get(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let key = key_of(url_ns(t), url_name(t));
    let obj = srv
        .store
        .get(t.res.storage, &key)
        .ok_or_else(|| ApiError::not_found(t.res, url_name(t)))?;
    if ctx.wants_table() {
        return Ok(table::single(t.res, &view_value(t.res, &obj.value()), ctx));
    }
    Ok(obj_response(t.res, 200, &obj))
}

/// NamespaceLifecycle admission for creates.
fn admit_namespace(txn: &Txn<'_>, res: &ResourceInfo, ns: &str, name: &str) -> ApiResult<()> {
    if !res.namespaced {
        return Ok(());
    }
    match txn.get(StorageId::NAMESPACES, ns) {
        None => Err(ApiError::namespace_not_found(ns)),
        Some(n) if meta::at(&n.value(), &["metadata", "deletionTimestamp"]).is_some() => {
            Err(ApiError::namespace_terminating(res, name, ns))
        }
        Some(_) => Ok(()),
    }
}

/// Prepare a decoded body for create: system metadata, defaults, managedFields (when a
/// `writer` is given; an apply tracked them already), strategy, validation.
pub(super) fn prepare_create(
    t: &Target,
    obj: &mut Value,
    writer: Option<&Writer>,
) -> ApiResult<()> {
    set_namespace(t, obj)?;
    let id = t.res.storage;
    let m = meta_mut(obj);
    m.insert("uid".into(), Value::String(meta::new_uid()));
    m.insert(
        "creationTimestamp".into(),
        Value::String(meta::now_rfc3339()),
    );
    for k in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "resourceVersion",
        "generation",
    ] {
        m.remove(k);
    }
    let name = m
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let gen_name = m
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if name.is_empty() {
        if gen_name.is_empty() {
            return Err(ApiError::invalid_object(
                t.res,
                "",
                &[FieldError::required(
                    "metadata.name",
                    "name or generateName is required",
                )],
            ));
        }
        m.insert("name".into(), Value::String(meta::generate_name(&gen_name)));
    }
    if let Some(cv) = t.res.custom {
        if cv.terminating {
            return Err(custom::strategy::terminating_create(
                t.res,
                meta::name_of(obj),
            ));
        }
        // decoding defaulted it already
        track_create(t, obj, writer)?;
        custom::strategy::prepare_for_create(cv, obj);
        let errs = custom::strategy::validate_object(t.res, cv, obj, None, None);
        if !errs.is_empty() {
            return Err(custom::strategy::invalid(t.res, obj, &errs));
        }
        custom::strategy::to_storage_version(t.res, cv, obj);
        return Ok(());
    }
    // defaulting happens at decode time upstream, before the strategy (QoS sees defaults)
    defaults::apply(id, obj);
    track_create(t, obj, writer)?;
    strategy::prepare_for_create(id, obj);
    strategy::storage_round_trip(t.res, obj)?;
    let errs = validation::validate(id, obj, None, None);
    if !errs.is_empty() {
        return Err(ApiError::invalid_object(t.res, meta::name_of(obj), &errs));
    }
    Ok(())
}

/// Set managedFields for a create: defaulted, before the strategy, as upstream's create
/// handler runs the field manager on the decoded object.
fn track_create(t: &Target, obj: &mut Value, writer: Option<&Writer>) -> ApiResult<()> {
    if let Some(w) = writer {
        let new = std::mem::take(obj);
        *obj = track(t.res, t.sub.as_deref(), &json!({}), new, w);
        check_managers(t.res, obj)?;
    }
    Ok(())
}

/// 422 when the managedFields a client sent (and the field manager kept) are not valid
/// object metadata.
fn check_managers(res: &ResourceInfo, obj: &Value) -> ApiResult<()> {
    let errs = managed_fields::validate(meta::at(obj, &["metadata", "managedFields"]));
    if errs.is_empty() {
        return Ok(());
    }
    Err(match res.custom {
        Some(_) => custom::strategy::invalid(res, obj, &errs),
        None => ApiError::invalid_object(res, meta::name_of(obj), &errs),
    })
}

/// Store a prepared object under the write lock (admission, name clashes, generateName retries).
pub(super) fn create_in_txn(
    txn: &mut Txn<'_>,
    t: &Target,
    mut obj: Value,
    dry: bool,
) -> ApiResult<ObjRef> {
    let id = t.res.storage;
    let ns = meta::namespace_of(&obj).to_string();
    let gen_name = meta::meta_str(&obj, "generateName").to_string();
    let explicit = t.name.is_some() || gen_name.is_empty();
    admit_namespace(txn, t.res, &ns, meta::name_of(&obj))?;
    if id == StorageId::SERVICES {
        services::allocate(txn, t.res, &mut obj)?;
    }
    let mut tries = 0;
    loop {
        let name = meta::name_of(&obj).to_string();
        let key = key_of(&ns, &name);
        match txn.get(id, &key) {
            None => {
                if dry {
                    return Ok(Arc::new(Obj::at(id, obj, txn.rv())));
                }
                return Ok(txn.put(id, &key, obj));
            }
            Some(existing) => {
                let existing_v = existing.value();
                let deleting = meta::at(&existing_v, &["metadata", "deletionTimestamp"]).is_some();
                if explicit || !meta::meta_str(&existing_v, "name").starts_with(&gen_name) {
                    return Err(ApiError::already_exists(t.res, &name, deleting));
                }
                tries += 1;
                if tries >= 8 {
                    let mut e = ApiError::already_exists(t.res, &name, deleting);
                    e.message = format!(
                        "{}, the server was not able to generate a unique name for the object",
                        e.message
                    );
                    if let Some(d) = e.details.as_mut() {
                        d["retryAfterSeconds"] = json!(1);
                    }
                    return Err(e);
                }
                meta_mut(&mut obj)
                    .insert("name".into(), Value::String(meta::generate_name(&gen_name)));
            }
        }
    }
}

/// POST on a collection.
pub fn create(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    ctx.check_write_options(WriteKind::Create)?;
    let (mut obj, warnings) = decode_checked(t.res, parse_body(ctx)?, ctx)?;
    prepare_create(t, &mut obj, Some(&ctx.writer()))?;
    let dry = ctx.dry_run();
    let stored = srv.store.write(|txn| create_in_txn(txn, t, obj, dry))?;
    if t.res.storage == StorageId::NAMESPACES && !dry {
        let ns = stored.field("metadata.name").unwrap_or("").to_string();
        cluster_objects::namespace_defaults(srv, &ns);
    }
    Ok(with_warnings(obj_response(t.res, 201, &stored), &warnings))
}

/// The update path shared by PUT, PATCH, `/status`, `/scale` and `/finalize`: strategy,
/// defaults, validation, no-op detection, finalizer-driven deletion. `managedFields` are
/// left as `new` has them (see [`update_in_txn_as`]).
pub fn update_in_txn(
    txn: &mut Txn<'_>,
    res: &ResourceInfo,
    sub: Option<&str>,
    old: &ObjRef,
    new: Value,
    dry: bool,
) -> ApiResult<ObjRef> {
    update_in_txn_as(txn, res, sub, old, new, dry, None)
}

/// [`update_in_txn`], with the write tracked in `metadata.managedFields` as `writer`'s
/// (after defaulting, before the strategy, as upstream's update handler runs the field
/// manager).
pub fn update_in_txn_as(
    txn: &mut Txn<'_>,
    res: &ResourceInfo,
    sub: Option<&str>,
    old: &ObjRef,
    mut new: Value,
    dry: bool,
    writer: Option<&Writer>,
) -> ApiResult<ObjRef> {
    let id = res.storage;
    let old_v = old.value();
    let name = meta::name_of(&old_v).to_string();
    if let Some(cv) = res.custom {
        // the strategy sees both in the request's version; storage gets the storage version
        let old_view = view_value(res, &old_v);
        if let Some(w) = writer {
            new = track(res, sub, &old_view, new, w);
            check_managers(res, &new)?;
        }
        custom::strategy::prepare_for_update(cv, sub, &old_view, &mut new);
        let errs = custom::strategy::validate_object(res, cv, &new, Some(&old_view), sub);
        if !errs.is_empty() {
            return Err(custom::strategy::invalid(res, &new, &errs));
        }
        custom::strategy::to_storage_version(res, cv, &mut new);
    } else {
        defaults::apply(id, &mut new);
        if let Some(w) = writer {
            // a built-in body is decoded to its stored form (events.k8s.io/v1 to core)
            new = track(res, sub, &old_v, new, w);
            check_managers(res, &new)?;
        }
        strategy::prepare_for_update(id, sub, &old_v, &mut new);
        if id == StorageId::SERVICES && sub.is_none() {
            services::keep_allocated(res, &old_v, &mut new)?;
            services::allocate(txn, res, &mut new)?;
        }
        strategy::storage_round_trip(res, &mut new)?;
        let errs = validation::validate(id, &new, Some(&old_v), sub);
        if !errs.is_empty() {
            return Err(ApiError::invalid_object(res, &name, &errs));
        }
    }
    meta_mut(&mut new).insert("resourceVersion".into(), Value::String(old.rv.to_string()));
    if new == old_v {
        return Ok(old.clone());
    }
    if dry {
        return Ok(Arc::new(Obj::at(id, new, old.rv)));
    }
    let key = key_of(meta::namespace_of(&old_v), &name);
    let deleting = meta::at(&new, &["metadata", "deletionTimestamp"]).is_some();
    let grace = meta::at(&new, &["metadata", "deletionGracePeriodSeconds"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if deleting && grace == 0 && meta::finalizers(&new).is_empty() && id != StorageId::NAMESPACES {
        // the last finalizer gone: the object is deleted as stored, the update itself is not
        // written (upstream's deleteWithoutFinalizers): watchers see one DELETED with the
        // stored state, the client gets its updated object at the revision it updated
        txn.remove(id, &key)
            .ok_or_else(|| ApiError::internal("object vanished during update"))?;
        return Ok(Arc::new(Obj::at(id, new, old.rv)));
    }
    Ok(txn.put(id, &key, new))
}

/// Check `metadata.resourceVersion` and `metadata.uid` of a new body against the stored object.
pub fn check_preconditions(
    res: &ResourceInfo,
    old: &ObjRef,
    new: &Value,
    require_rv: bool,
) -> ApiResult<()> {
    let old_v = old.value();
    let name = meta::name_of(&old_v);
    let rv = meta::rv_of(new);
    if rv.is_empty() {
        if require_rv {
            let e = ApiError::invalid(
                &res.qualified_resource(),
                res.group,
                res.plural,
                name,
                &[FieldError::invalid(
                    "metadata.resourceVersion",
                    "0",
                    "must be specified for an update",
                )],
            );
            return Err(e);
        }
    } else if rv != old.rv.to_string() {
        return Err(ApiError::conflict(res, name));
    }
    let uid = meta::uid_of(new);
    let have = meta::uid_of(&old_v);
    if !uid.is_empty() && uid != have {
        let ns = meta::at(&old_v, &["metadata", "namespace"])
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(ApiError::uid_precondition(res, ns, name, uid, have));
    }
    Ok(())
}

/// PUT on an item, `status` or `finalize`.
pub fn update(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    ctx.check_write_options(WriteKind::Update)?;
    let writer = ctx.writer();
    let (mut new, warnings) = decode_checked(t.res, parse_body(ctx)?, ctx)?;
    let name = url_name(t).to_string();
    let body_name = meta::name_of(&new).to_string();
    if body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    set_namespace(t, &mut new)?;
    let key = key_of(url_ns(t), &name);
    let sub = t.sub.as_deref();
    let dry = ctx.dry_run();
    let (obj, code) = srv.store.write(|txn| -> ApiResult<(ObjRef, u16)> {
        let Some(old) = txn.get(t.res.storage, &key) else {
            if sub.is_none() && strategy::allow_create_on_update(t.res.storage) {
                let mut obj = new;
                prepare_create(t, &mut obj, Some(&writer))?;
                return Ok((create_in_txn(txn, t, obj, dry)?, 201));
            }
            return Err(ApiError::not_found(t.res, &name));
        };
        check_preconditions(
            t.res,
            &old,
            &new,
            !strategy::allow_unconditional_update(t.res.storage),
        )?;
        let updated = update_in_txn_as(txn, t.res, sub, &old, new, dry, Some(&writer))?;
        Ok((updated, 200))
    })?;
    Ok(with_warnings(obj_response(t.res, code, &obj), &warnings))
}

/// PATCH on an item or its `status`.
pub fn patch(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    let kind = patch::PatchKind::from_content_type(&ctx.content_type)?;
    ctx.check_write_options(WriteKind::Patch(kind == patch::PatchKind::Apply))?;
    let writer = ctx.writer();
    if kind == patch::PatchKind::Strategic && t.res.is_custom() {
        return Err(patch::strategic_unsupported());
    }
    let body = parse_body(ctx)?;
    let name = url_name(t).to_string();
    let key = key_of(url_ns(t), &name);
    let sub = t.sub.as_deref();
    let dry = ctx.dry_run();
    let mut warnings = Vec::new();
    let obj = srv.store.write(|txn| -> ApiResult<ObjRef> {
        let old = txn
            .get(t.res.storage, &key)
            .ok_or_else(|| ApiError::not_found(t.res, &name))?;
        let doc = view_value(t.res, &old.value());
        let patched = patch::apply(kind, t.res.storage, doc, &body)?;
        let (mut new, w) = decode_patched(t.res, patched, ctx)?;
        warnings = w;
        check_patched(t, &old, &mut new)?;
        update_in_txn_as(txn, t.res, sub, &old, new, dry, Some(&writer))
    })?;
    Ok(with_warnings(obj_response(t.res, 200, &obj), &warnings))
}

/// A patched (or applied) object must keep its name, namespace and uid, and meet its
/// `resourceVersion` precondition.
pub(super) fn check_patched(t: &Target, old: &ObjRef, new: &mut Value) -> ApiResult<()> {
    let name = url_name(t);
    let body_name = meta::name_of(new).to_string();
    if body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    set_namespace(t, new)?;
    // a patch carries no UID precondition (a PUT does): another uid in the patched object
    // fails validation, as metadata.uid is immutable
    let uid = meta::uid_of(new).to_string();
    if !uid.is_empty() && uid != meta::uid_of(&old.value()) {
        return Err(ApiError::invalid_object(
            t.res,
            name,
            &[FieldError::invalid(
                "metadata.uid",
                go_quote(&uid),
                "field is immutable",
            )],
        ));
    }
    check_preconditions(t.res, old, new, false)
}

/// Create an object directly (bootstrap and simulations): same defaults, validation and
/// admission as a POST.
pub fn create_value(
    srv: &ApiServer,
    res: &'static ResourceInfo,
    namespace: Option<&str>,
    body: Value,
) -> ApiResult<ObjRef> {
    let t = Target {
        res,
        namespace: namespace.map(str::to_string),
        name: None,
        sub: None,
    };
    let mut obj = decode_for_storage(res, body)?;
    let writer = Writer {
        manager: "kube-apiserver".into(),
        now: meta::now_rfc3339(),
    };
    prepare_create(&t, &mut obj, Some(&writer))?;
    srv.store.write(|txn| create_in_txn(txn, &t, obj, false))
}
