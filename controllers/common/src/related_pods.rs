//! The pods of the ReplicaSets that share a ReplicaSet's controller (upstream
//! `getReplicaSetsWithSameController` + `getIndirectlyRelatedPods`), which scale-down ranks
//! against (pods on a node crowded by the same Deployment go first).
//!
//! Upstream finds the siblings through the ReplicaSet informer's controller-UID index and lists,
//! per sibling, the pods of its namespace that its selector matches. Here the siblings come from
//! the same index ([`owner_index::controlled_by`]) and each sibling's pods from the pod index by
//! `pod-template-hash` ([`POD_TEMPLATE_HASH_INDEX`]), which every selector of a Deployment's
//! ReplicaSet pins; a selector that does not falls back to the namespace list. Either way the
//! pods are those the selector matches, whoever controls them, as upstream's.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_store::{Lister, ObjectKey, Selector};

use crate::label_index::POD_TEMPLATE_HASH_INDEX;
use crate::owner_index;
use crate::pod_util::controller_ref;
use crate::pod_view::PodView;
use crate::ranking;

/// The ReplicaSets whose controller is `rs`'s (including `rs`), in every namespace; empty when
/// `rs` has no controller.
pub fn replica_sets_with_same_controller(
    rs_lister: &Lister<ReplicaSet>,
    rs: &ReplicaSet,
) -> Vec<Arc<ReplicaSet>> {
    let Some(ctrl) = controller_ref(&rs.metadata) else {
        tracing::debug!(replicaset = %ObjectKey::from_meta(&rs.metadata), "ReplicaSet has no controller");
        return Vec::new();
    };
    owner_index::controlled_by(rs_lister, &ctrl.uid)
}

/// The pods that the selector of any ReplicaSet with `rs`'s controller matches, in that
/// ReplicaSet's namespace, once each (by UID); a sibling with an invalid selector matches none.
pub fn indirectly_related_pods(
    rs_lister: &Lister<ReplicaSet>,
    pod_lister: &Lister<PodView>,
    rs: &ReplicaSet,
) -> Vec<Arc<PodView>> {
    let siblings = replica_sets_with_same_controller(rs_lister, rs);
    ranking::get_indirectly_related_pods(&siblings, |sibling: &Arc<ReplicaSet>| {
        let selector = Selector::from_label_selector(&sibling.spec.selector).ok()?;
        let namespace = sibling.metadata.namespace.as_deref().unwrap_or_default();
        Some(POD_TEMPLATE_HASH_INDEX.list(pod_lister, namespace, &selector))
    })
}
