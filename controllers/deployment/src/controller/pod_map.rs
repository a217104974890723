//! `getPodMapForDeployment` (upstream `deployment_controller.go`): a Deployment's pods grouped
//! by their controlling ReplicaSet.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_controller::PodView;
use kcm_informer::{Lister, Selector};

use crate::util::fields::{name_of, uid_of};
use crate::util::replica_sets::get_controller_of;

use super::SyncError;

/// Pods of a Deployment grouped by the UID of their controlling ReplicaSet; every
/// ReplicaSet of the list has an entry (possibly empty). Terminating and finished pods are
/// kept (Recreate must see them).
pub type PodMap = HashMap<String, Vec<Arc<PodView>>>;

/// The Deployment's selector, or upstream's error for an invalid one.
pub(crate) fn deployment_selector(d: &Deployment) -> Result<Selector, SyncError> {
    let parsed = Selector::from_label_selector(&d.spec.selector).map_err(|e| e.to_string());
    parsed.map_err(|e| {
        SyncError::Other(format!(
            "deployment {}/{} has invalid label selector: {e}",
            d.metadata.namespace.as_deref().unwrap_or_default(),
            name_of(&d.metadata)
        ))
    })
}

/// `getPodMapForDeployment`: the pods of the Deployment's namespace matching its selector,
/// grouped by the UID of their controlling ReplicaSet (only ReplicaSets of `rs_list`).
pub fn pod_map_for_deployment(
    pod_lister: &Lister<PodView>,
    d: &Deployment,
    rs_list: &[&ReplicaSet],
) -> Result<PodMap, SyncError> {
    let selector = deployment_selector(d)?;
    let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
    let mut map: PodMap = rs_list
        .iter()
        .map(|rs| (uid_of(&rs.metadata).to_string(), Vec::new()))
        .collect();
    for pod in pod_lister.namespaced(namespace).list(&selector) {
        let Some(r) = get_controller_of(&pod.metadata) else {
            continue;
        };
        if let Some(pods) = map.get_mut(&r.uid) {
            pods.push(pod);
        }
    }
    Ok(map)
}
