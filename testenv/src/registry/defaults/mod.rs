//! Defaulting, applied on every write as upstream's decoders do: the object is walked with its
//! kind's schema ([`schema::visit_mut`]), and every value whose type has a defaulting function
//! upstream (`SetDefaults_<Type>` in `pkg/apis/<group>/<version>/defaults.go`, called for the
//! types `zz_generated.defaults.go` lists) gets that function, parents before their fields —
//! the order of the generated `SetObjectDefaults_<Kind>`. A `PodSpec` is defaulted wherever it
//! is (a Pod, a Deployment's template, a CronJob's job template), a `Container` in every list of
//! containers, and so on. The `+default` markers are applied while decoding
//! ([`decode`](super::decode)); quantities are written in canonical form, rounded up to milli
//! precision (`SetDefaults_ResourceList`).
//!
//! - `core`: core/v1 types (pods and their parts, services, volumes, claims, …).
//! - `workloads`: apps/v1, batch/v1 and autoscaling/v2.
//! - `others`: networking, RBAC, storage, scheduling, discovery, admission registration and
//!   flow control.

mod core;
mod others;
mod workloads;

use serde_json::{Map, Value, json};

use super::quantity;
use super::resources::{StorageId, for_storage};
use super::schema::{self, Path, Shape};

pub use self::core::pull_always;

/// A type's defaulting function: what upstream's `SetDefaults_<Type>` does to a value.
type Defaulter = fn(&mut Map<String, Value>);

/// The defaulting function of a definition, if upstream has one.
fn defaulter(definition: &str) -> Option<Defaulter> {
    let (group_version, ty) = definition.strip_prefix("io.k8s.api.")?.rsplit_once('.')?;
    match group_version {
        "core.v1" => self::core::defaulter(ty),
        "apps.v1" | "batch.v1" | "autoscaling.v2" => workloads::defaulter(group_version, ty),
        _ => others::defaulter(group_version, ty),
    }
}

/// Apply the defaults of the kind stored in bucket `id` to an object in its stored form.
pub fn apply(id: StorageId, obj: &mut Value) {
    if id == StorageId::CUSTOMRESOURCEDEFINITIONS {
        super::custom::crd_strategy::apply_defaults(obj);
        return;
    }
    if id.is_custom() || id == StorageId::NONE {
        return;
    }
    let res = for_storage(id);
    let Some(root) = schema::catalog().kind(res.group, res.version, res.kind) else {
        return;
    };
    schema::visit_mut(
        root,
        obj,
        &Path::root(),
        &mut |node, v, _| match node.shape() {
            Shape::Quantity => canonical_quantity(v),
            Shape::Struct => {
                if let (Some(f), Some(o)) =
                    (node.definition().and_then(defaulter), v.as_object_mut())
                {
                    f(o);
                }
            }
            _ => {}
        },
    );
}

fn canonical_quantity(v: &mut Value) {
    if let Some(c) = v.as_str().and_then(quantity::canonical) {
        *v = Value::String(c);
    }
}

/// The object under `k`, created empty when absent or not an object.
fn obj_entry<'a>(o: &'a mut Map<String, Value>, k: &str) -> &'a mut Map<String, Value> {
    let e = o.entry(k.to_string()).or_insert_with(|| json!({}));
    if !e.is_object() {
        *e = json!({});
    }
    match e {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

/// Set `k` when it is absent or null (a pointer field's default).
fn default(o: &mut Map<String, Value>, k: &str, v: Value) {
    if o.get(k).is_none_or(Value::is_null) {
        o.insert(k.to_string(), v);
    }
}

/// Set `k` when it is absent or empty (a string field's default: Go's `if x == ""`).
fn default_str(o: &mut Map<String, Value>, k: &str, v: &str) {
    if o.get(k).and_then(Value::as_str).is_none_or(str::is_empty) {
        o.insert(k.to_string(), Value::String(v.to_string()));
    }
}

/// Set `k` when it is absent or zero (an integer field's default: Go's `if x == 0`).
fn default_int(o: &mut Map<String, Value>, k: &str, v: i64) {
    if o.get(k).and_then(Value::as_i64).unwrap_or(0) == 0 {
        o.insert(k.to_string(), json!(v));
    }
}

/// A string field's value (`""` when absent).
fn str_of<'a>(o: &'a Map<String, Value>, k: &str) -> &'a str {
    o.get(k).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
