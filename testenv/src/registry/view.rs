//! How a stored object looks through the resource a request names: the events.k8s.io/v1
//! view of a core Event, a built-in resource served in several versions in the requested one
//! ([`convert`]), a custom resource in the requested version (stored in the CRD's
//! storage version; conversion strategy None changes only `apiVersion`, and the converted
//! object is pruned with the requested version's schema).

use serde_json::Value;

use super::convert;
use super::custom::prune::{prune, prune_nulls};
use super::events_v1::to_v1;
use super::resources::ResourceInfo;

/// Whether objects read through `res` differ from their stored form.
pub fn needs_conversion(res: &ResourceInfo) -> bool {
    res.is_events_v1()
        || convert::converts(res)
        || res.custom.is_some_and(|c| c.storage_version != res.version)
}

/// A stored object value as seen through `res`.
pub fn view_value(res: &ResourceInfo, v: &Value) -> Value {
    if res.is_events_v1() {
        return to_v1(v);
    }
    if convert::converts(res) {
        return convert::from_storage(res, v);
    }
    let mut out = v.clone();
    if let Some(cv) = res.custom
        && let Some(o) = out.as_object_mut()
    {
        o.insert("apiVersion".into(), Value::String(res.api_version()));
        if cv.storage_version != res.version {
            prune(&mut out, cv.schema.as_ref());
            prune_nulls(&mut out, cv.schema.as_ref());
        }
    }
    out
}
