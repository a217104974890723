//! `getPodMapForDeployment` (upstream `deployment_controller.go`): a Deployment's pods grouped
//! by their controlling ReplicaSet.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_controller::PodView;
use kcm_controller::owner_index::{Owner, filter_by_owner};
use kcm_informer::{Lister, Selector};

use crate::util::fields::{name_of, uid_of};

use super::SyncError;

/// Pods of a Deployment grouped by the UID of their controlling ReplicaSet; every
/// ReplicaSet of the list has an entry (possibly empty). Terminating and finished pods are
/// kept (Recreate must see them).
pub(crate) type PodMap = HashMap<String, Vec<Arc<PodView>>>;

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

/// `getPodMapForDeployment`: for each ReplicaSet of `rs_list`, the pods it controls (through
/// the pod controller index, as upstream v1.37 does: labels are not looked at), keyed by its UID.
pub(crate) fn pod_map_for_deployment(
    pod_lister: &Lister<PodView>,
    rs_list: &[&ReplicaSet],
) -> PodMap {
    rs_list
        .iter()
        .map(|rs| {
            let owner = Owner {
                kind: "ReplicaSet",
                namespace: rs.metadata.namespace.as_deref().unwrap_or_default(),
                name: name_of(&rs.metadata),
                uid: uid_of(&rs.metadata),
            };
            (
                owner.uid.to_string(),
                filter_by_owner(pod_lister, owner, false),
            )
        })
        .collect()
}
