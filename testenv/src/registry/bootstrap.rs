//! The objects a fresh kube-apiserver makes for itself (generated into `bootstrap_objects.rs`
//! from a live one): the local APIServices, the bootstrap RBAC policy and the
//! priority-and-fairness configuration, each with the bucket it is stored in.

use serde_json::Value;

use super::bootstrap_objects::BOOTSTRAP_OBJECTS;
use super::resources::{RESOURCES, StorageId};

/// Every bootstrap object with its bucket, in the generated order (read each time it is asked
/// for: a server asks once, at start).
pub fn objects() -> Vec<(StorageId, Value)> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(BOOTSTRAP_OBJECTS) else {
        tracing::error!("the generated bootstrap objects are not a JSON array");
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|o| {
            let api_version = o.get("apiVersion")?.as_str()?;
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            let kind = o.get("kind")?.as_str()?;
            let res = RESOURCES
                .iter()
                .find(|r| r.group == group && r.version == version && r.kind == kind)?;
            Some((res.storage, o))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_object_has_a_bucket() {
        let all = objects();
        assert!(all.len() > 150, "{} objects", all.len());
        let count = |id: StorageId| all.iter().filter(|(i, _)| *i == id).count();
        assert_eq!(count(StorageId::APISERVICES), 22);
        assert!(count(StorageId::CLUSTERROLES) > 50);
        let admin = all
            .iter()
            .find(|(i, o)| {
                *i == StorageId::CLUSTERROLES && o["metadata"]["name"] == "cluster-admin"
            })
            .expect("cluster-admin");
        assert_eq!(admin.1["rules"][0]["verbs"], serde_json::json!(["*"]));
    }
}
