//! Sending a strategic-merge patch (the adopt and release bodies of
//! [`controller_ref_manager`](crate::controller_ref_manager)) byte for byte, for pod control and
//! ReplicaSet control alike.

use std::fmt;

use kube::api::{Api, Patch, PatchParams};
use serde::de::DeserializeOwned;

use crate::error::ControlError;

/// PATCHes `name` with `patch` as `application/strategic-merge-patch+json`, sending the JSON
/// text unchanged (no re-serialization: the bodies are byte-exact to upstream's); returns the
/// server's copy.
pub(crate) async fn strategic_merge_patch<K>(
    api: &Api<K>,
    name: &str,
    patch: &str,
) -> Result<K, ControlError>
where
    K: Clone + DeserializeOwned + fmt::Debug,
{
    let raw = serde_json::value::RawValue::from_string(patch.to_string())?;
    Ok(api
        .patch(name, &PatchParams::default(), &Patch::Strategic(raw))
        .await?)
}
