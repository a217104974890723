//! managedFields through the `scale` subresource (apimachinery's
//! `util/managedfields/scalehandler.go`): the Scale shows as its managers those of the parent
//! who own the replicas field (owning `.spec.replicas`, version `autoscaling/v1`), and what
//! a write through `scale` did to the Scale's managers is carried back to the parent's.

use serde_json::Value;

use super::managed_fields::{self, Managed, VersionedSet};
use super::path::Path;
use super::set::Set;

/// The Scale's API version.
pub const SCALE_VERSION: &str = "autoscaling/v1";

fn replicas_in_scale() -> Path {
    Path::fields(&["spec", "replicas"])
}

/// The parent's replicas field, given as `.spec.replicas` (a CRD's `specReplicasPath`).
pub fn replicas_path(json_path: &str) -> Path {
    let parts: Vec<&str> = json_path
        .trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
        .collect();
    Path::fields(&parts)
}

/// Whether a parent manager's version maps to the replicas path (every version of the
/// resource's group does: they share one schema here).
fn mapped(api_version: &str, group_version: &str) -> bool {
    let group = |av: &str| av.split_once('/').map(|(g, _)| g.to_string());
    group(api_version) == group(group_version)
}

/// The Scale's `managedFields` from the parent's.
pub fn to_subresource(
    parent: Option<&Value>,
    group_version: &str,
    replicas: &Path,
) -> Option<Value> {
    let managed = managed_fields::decode(parent).ok()?;
    let mut out = Managed::default();
    for (id, vs) in &managed.fields {
        if mapped(&vs.api_version, group_version) && vs.set.has(&replicas.0) {
            out.fields.insert(
                id.clone(),
                VersionedSet {
                    set: Set::from_paths(&[replicas_in_scale()]),
                    api_version: SCALE_VERSION.into(),
                    applied: vs.applied,
                },
            );
            out.times
                .insert(id.clone(), managed.times.get(id).cloned().flatten());
        }
    }
    managed_fields::encode(&out)
}

/// The parent's `managedFields` after a write through `scale` left the Scale with `scale`'s.
pub fn to_parent(
    parent: Option<&Value>,
    scale: Option<&Value>,
    group_version: &str,
    replicas: &Path,
) -> Option<Value> {
    let parent = managed_fields::decode(parent).unwrap_or_default();
    let mut scale = managed_fields::decode(scale).unwrap_or_default();
    // upstream takes every time from the parent's entries, so a manager new through the
    // scale has none
    let parent_times = parent.times.clone();
    let mut out = Managed::default();
    for (id, vs) in parent.fields {
        let time = parent.times.get(&id).cloned().flatten();
        if !mapped(&vs.api_version, group_version) || !vs.set.has(&replicas.0) {
            out.fields.insert(id.clone(), vs);
            out.times.insert(id, time);
            continue;
        }
        if scale.fields.remove(&id).is_some() {
            out.fields.insert(id.clone(), vs);
            out.times.insert(id, time);
        } else {
            // it lost the replicas through the scale
            let rest = vs
                .set
                .difference(&Set::from_paths(std::slice::from_ref(replicas)));
            if !rest.is_empty() {
                out.fields
                    .insert(id.clone(), VersionedSet { set: rest, ..vs });
                out.times.insert(id, time);
            }
        }
    }
    for (id, vs) in scale.fields {
        if !vs.set.has(&replicas_in_scale().0) {
            continue;
        }
        out.fields.insert(
            id.clone(),
            VersionedSet {
                set: Set::from_paths(std::slice::from_ref(replicas)),
                api_version: group_version.to_string(),
                applied: vs.applied,
            },
        );
        out.times
            .insert(id.clone(), parent_times.get(&id).cloned().flatten());
    }
    managed_fields::encode(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replicas_owners_cross_the_scale() {
        let parent = json!([
            {"manager": "a", "operation": "Apply", "apiVersion": "apps/v1", "time": "2024-01-01T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}, "f:paused": {}}}},
            {"manager": "b", "operation": "Update", "apiVersion": "apps/v1", "time": "2024-01-01T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:minReadySeconds": {}}}},
        ]);
        let path = replicas_path(".spec.replicas");
        let scale = to_subresource(Some(&parent), "apps/v1", &path).expect("a owns replicas");
        assert_eq!(
            scale,
            json!([{"manager": "a", "operation": "Apply", "apiVersion": "autoscaling/v1",
                    "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}}}}])
        );
        // a scaler took the replicas through the scale: a keeps paused, the scaler owns
        // the parent's replicas in the parent's version
        let after = json!([
            {"manager": "hpa", "operation": "Update", "apiVersion": "autoscaling/v1", "time": "2024-01-01T00:01:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"},
        ]);
        let back = to_parent(Some(&parent), Some(&after), "apps/v1", &path).expect("entries");
        let got: Vec<(Value, Value, Value)> = back
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["manager"].clone(),
                    e["apiVersion"].clone(),
                    e["fieldsV1"].clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    json!("a"),
                    json!("apps/v1"),
                    json!({"f:spec": {"f:paused": {}}})
                ),
                // no time sorts first among the Update entries
                (
                    json!("hpa"),
                    json!("apps/v1"),
                    json!({"f:spec": {"f:replicas": {}}})
                ),
                (
                    json!("b"),
                    json!("apps/v1"),
                    json!({"f:spec": {"f:minReadySeconds": {}}})
                ),
            ]
        );
        assert_eq!(back[1]["subresource"], "scale");
        assert!(
            back[1].get("time").is_none(),
            "upstream gives it the parent's (none)"
        );
    }
}
