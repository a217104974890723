//! Server-side apply over HTTP: `PATCH` with `Content-Type: application/apply-patch+yaml`
//! on a resource or its `status` (upstream's `pkg/endpoints/handlers/patch.go`, apply
//! patcher). The body, YAML or JSON, is applied by the field manager
//! ([`registry::apply`](crate::registry::apply)) to the stored object, or to an empty one
//! when there is none (create on apply); the result then takes the same create or update
//! path as every other write, dry runs included.

use http::Response;
use serde_json::{Value, json};

use super::handlers::{
    check_patched, create_in_txn, decode_patched, prepare_create, update_in_txn, url_name, url_ns,
};
use super::http::{Body, Ctx, obj_response, with_warnings};
use super::routes::Target;
use super::server::ApiServer;
use crate::registry::api_status::{ApiError, ApiResult};
use crate::registry::apply::endpoint::Endpoint;
use crate::registry::meta;
use crate::registry::patch::options::WriteKind;
use crate::registry::view::view_value;
use crate::storage::{ObjRef, key_of};

/// Whether a PATCH is a server-side apply.
pub fn is_apply(ctx: &Ctx) -> bool {
    let base = ctx.content_type.split(';').next().unwrap_or("").trim();
    base.eq_ignore_ascii_case("application/apply-patch+yaml")
}

/// The applied configuration: a YAML (or JSON) object.
fn configuration(ctx: &Ctx) -> ApiResult<Value> {
    // upstream turns the YAML into JSON first (its errors: "error encoding patch"), then
    // decodes that into a map
    let v: Value = serde_yaml::from_slice(&ctx.body)
        .map_err(|e| ApiError::bad_request(format!("error encoding patch: yaml: {e}")))?;
    match v {
        Value::Object(_) => Ok(v),
        Value::Null => Ok(json!({})),
        other => Err(ApiError::bad_request(format!(
            "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                _ => "bool",
            }
        ))),
    }
}

/// `PATCH` with an apply configuration on an item or its `status`.
pub fn patch(srv: &ApiServer, t: &Target, ctx: &Ctx) -> ApiResult<Response<Body>> {
    ctx.check_write_options(WriteKind::Patch(true))?;
    let config = configuration(ctx)?;
    let manager = ctx.q("fieldManager");
    let force = ctx.q("force") == "true";
    let now = meta::now_rfc3339();
    let name = url_name(t).to_string();
    let key = key_of(url_ns(t), &name);
    let sub = t.sub.as_deref();
    let dry = ctx.dry_run();
    let endpoint = Endpoint::new(t.res, sub);
    let fm = endpoint.manager();
    let mut warnings = Vec::new();
    let (obj, code) = srv.store.write(|txn| -> ApiResult<(ObjRef, u16)> {
        let Some(old) = txn.get(t.res.storage, &key) else {
            if sub.is_some() {
                return Err(ApiError::not_found(t.res, &name));
            }
            let applied = fm
                .apply(&json!({}), &config, manager, force, &now)
                .map_err(|e| e.to_api_error())?;
            let uid = meta::uid_of(&applied);
            if !uid.is_empty() {
                return Err(ApiError::conflict_msg(
                    &t.res.qualified_resource(),
                    t.res.group,
                    t.res.plural,
                    &name,
                    &format!(
                        "uid mismatch: the provided object specified uid {uid}, and no existing object was found"
                    ),
                ));
            }
            let (mut obj, w) = decode_patched(t.res, applied, ctx)?;
            warnings = w;
            let body_name = meta::name_of(&obj).to_string();
            if body_name != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({body_name}) does not match the name on the URL ({name})"
                )));
            }
            prepare_create(t, &mut obj, None)?;
            return Ok((create_in_txn(txn, t, obj, dry)?, 201));
        };
        let live = view_value(t.res, &old.value());
        let applied = fm
            .apply(&live, &config, manager, force, &now)
            .map_err(|e| e.to_api_error())?;
        let (mut new, w) = decode_patched(t.res, applied, ctx)?;
        warnings = w;
        check_patched(t, &old, &mut new)?;
        Ok((update_in_txn(txn, t.res, sub, &old, new, dry)?, 200))
    })?;
    Ok(with_warnings(obj_response(t.res, code, &obj), &warnings))
}
