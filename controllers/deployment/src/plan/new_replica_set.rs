//! `getAllReplicaSetsAndSyncRevision` / `getNewReplicaSet`: finding or building the new
//! ReplicaSet, syncing revisions, and the decisions around its creation (AlreadyExists,
//! hash collisions, create errors).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;

use crate::error::DeploymentError;
use crate::events::{
    DeploymentEvent, EventType, REPLICA_SET_CREATE_ERROR, ScalingOperation,
    failed_rs_create_message, go_quote, scaling_event,
};
use crate::util::annotations::{
    MAX_REV_HISTORY_LENGTH_IN_CHARS, REVISION_ANNOTATION, max_revision, set_deployment_revision,
    set_new_replica_set_annotations,
};
use crate::util::conditions::{
    CONDITION_FALSE, CONDITION_TRUE, DEPLOYMENT_PROGRESSING, FAILED_RS_CREATE_REASON,
    FOUND_NEW_RS_REASON, NEW_REPLICA_SET_REASON, get_deployment_condition,
    new_deployment_condition, set_deployment_condition,
};
use crate::util::fields::{annotation, deployment_template, name_of, rs_template, uid_of};
use crate::util::hash::{DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, compute_hash};
use crate::util::predicates::has_progress_deadline;
use crate::util::replica_sets::{find_new_replica_set, is_controlled_by, old_replica_sets};
use crate::util::sizing::new_rs_new_replicas;
use crate::util::template_equality::equal_ignore_hash;

/// Longest valid object name (`validation.DNS1123SubdomainMaxLength`).
pub(crate) const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// The ReplicaSets of a Deployment split into old and new, with the revision a (re)activated
/// new ReplicaSet gets (`max(old revisions) + 1`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReplicaSetsOfDeployment<'a> {
    /// The ReplicaSet whose template matches the Deployment's (oldest match), if any.
    pub(crate) new_rs: Option<&'a ReplicaSet>,
    /// All other ReplicaSets, in creation order.
    pub(crate) old_rss: Vec<&'a ReplicaSet>,
    /// Decimal revision for the new ReplicaSet.
    pub(crate) new_revision: String,
}

/// The read-only half of `getAllReplicaSetsAndSyncRevision`: `rs_list` must be the
/// ReplicaSets the Deployment controls (after adoption).
pub(crate) fn classify_replica_sets<'a>(
    d: &Deployment,
    rs_list: &[&'a ReplicaSet],
) -> ReplicaSetsOfDeployment<'a> {
    let new_rs = find_new_replica_set(d, rs_list);
    let (_, old_rss) = old_replica_sets(new_rs, rs_list);
    let new_revision = max_revision(&old_rss).wrapping_add(1).to_string();
    ReplicaSetsOfDeployment {
        new_rs,
        old_rss,
        new_revision,
    }
}

/// What to do with an existing new ReplicaSet (first branch of `getNewReplicaSet`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ExistingNewReplicaSetAction {
    /// Its annotations or `minReadySeconds` were stale: Update the ReplicaSet with this object
    /// and use the result (the Deployment's revision is synced on a later pass).
    UpdateReplicaSet(ReplicaSet),
    /// The ReplicaSet is current but the Deployment's revision annotation and/or its
    /// `FoundNewReplicaSet` condition changed: UpdateStatus with this Deployment.
    UpdateDeploymentStatus(Deployment),
    /// Everything is in sync.
    Nothing,
}

fn min_ready_seconds(d: &Deployment) -> i32 {
    d.spec.min_ready_seconds.unwrap_or(0)
}

/// Decision for an existing new ReplicaSet: copy annotations and raise its revision to
/// `new_revision`, align `minReadySeconds`; else mirror its revision onto the Deployment and,
/// with a progress deadline and no Progressing condition yet, add Progressing=True/
/// `FoundNewReplicaSet` (`Found new replica set "<name>"`).
pub(crate) fn plan_existing_new_replica_set(
    d: &Deployment,
    existing: &ReplicaSet,
    new_revision: &str,
    now: Timestamp,
) -> ExistingNewReplicaSetAction {
    let mut rs_copy = existing.clone();
    let annotations_updated = set_new_replica_set_annotations(
        d,
        &mut rs_copy,
        new_revision,
        true,
        MAX_REV_HISTORY_LENGTH_IN_CHARS,
    );
    let rs_min_ready = rs_copy.spec.min_ready_seconds.unwrap_or(0);
    if annotations_updated || rs_min_ready != min_ready_seconds(d) {
        rs_copy.spec.min_ready_seconds = d.spec.min_ready_seconds;
        return ExistingNewReplicaSetAction::UpdateReplicaSet(rs_copy);
    }
    let mut d_copy = d.clone();
    let rs_revision = annotation(&rs_copy.metadata, REVISION_ANNOTATION).unwrap_or("");
    let mut needs_update = set_deployment_revision(&mut d_copy, rs_revision);
    let status = d_copy.status.get_or_insert_with(Default::default);
    if has_progress_deadline(d)
        && get_deployment_condition(status, DEPLOYMENT_PROGRESSING).is_none()
    {
        let msg = format!(
            "Found new replica set {}",
            go_quote(name_of(&rs_copy.metadata))
        );
        set_deployment_condition(
            status,
            new_deployment_condition(
                DEPLOYMENT_PROGRESSING,
                CONDITION_TRUE,
                FOUND_NEW_RS_REASON,
                msg,
                now,
            ),
        );
        needs_update = true;
    }
    if needs_update {
        ExistingNewReplicaSetAction::UpdateDeploymentStatus(d_copy)
    } else {
        ExistingNewReplicaSetAction::Nothing
    }
}

/// `generateReplicaSetName`: `<deployment>-<hash>`, truncating the Deployment name so the
/// result fits 253 characters (a hash too long to leave room is kept whole, untruncated).
pub(crate) fn generate_replica_set_name(deployment_name: &str, hash: &str) -> String {
    let max_name_len = DNS1123_SUBDOMAIN_MAX_LENGTH as isize - 1 - hash.len() as isize;
    if max_name_len > 0 && deployment_name.len() > max_name_len as usize {
        // Names are ASCII (DNS subdomains); fall back to the whole name otherwise.
        let prefix = deployment_name
            .get(..max_name_len as usize)
            .unwrap_or(deployment_name);
        return format!("{prefix}-{hash}");
    }
    format!("{deployment_name}-{hash}")
}

/// `metav1.NewControllerRef(d, apps/v1 Deployment)`.
pub(crate) fn new_controller_ref(d: &Deployment) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: name_of(&d.metadata).to_string(),
        uid: uid_of(&d.metadata).to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Builds the ReplicaSet to create for `d` (the create branch of `getNewReplicaSet`).
///
/// Template = the Deployment's template plus `pod-template-hash: <hash>` (hash of the template
/// and `status.collisionCount`, see [`compute_hash`]); selector = the Deployment's plus the same
/// label; name [`generate_replica_set_name`]; labels = the template labels (the Deployment's
/// own labels are not copied); controller owner reference; `minReadySeconds` copied;
/// `spec.replicas` from [`new_rs_new_replicas`] over `old_rss` + this RS at 0; annotations per
/// [`set_new_replica_set_annotations`] with `exists = false`.
pub(crate) fn new_replica_set(
    d: &Deployment,
    old_rss: &[&ReplicaSet],
    new_revision: &str,
) -> Result<ReplicaSet, DeploymentError> {
    let mut template = deployment_template(d);
    let collision_count = d.status.as_ref().and_then(|s| s.collision_count);
    let hash = compute_hash(&template, collision_count);
    let labels: &mut BTreeMap<String, String> = template
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(BTreeMap::new);
    labels.insert(
        DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.to_string(),
        hash.clone(),
    );
    let labels = labels.clone();
    let mut selector = d.spec.selector.clone();
    selector
        .match_labels
        .get_or_insert_with(BTreeMap::new)
        .insert(
            DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.to_string(),
            hash.clone(),
        );
    let mut rs = ReplicaSet {
        metadata: ObjectMeta {
            name: Some(generate_replica_set_name(name_of(&d.metadata), &hash)),
            namespace: d.metadata.namespace.clone(),
            owner_references: Some(vec![new_controller_ref(d)]),
            labels: Some(labels),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(0),
            min_ready_seconds: d.spec.min_ready_seconds,
            selector,
            template: Some(template),
        },
        status: None,
    };
    let mut all: Vec<&ReplicaSet> = old_rss.to_vec();
    all.push(&rs);
    let replicas = new_rs_new_replicas(d, &all, &rs)?;
    rs.spec.replicas = Some(replicas);
    set_new_replica_set_annotations(
        d,
        &mut rs,
        new_revision,
        false,
        MAX_REV_HISTORY_LENGTH_IN_CHARS,
    );
    Ok(rs)
}

/// How to treat an AlreadyExists error when creating the new ReplicaSet.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AlreadyExistsResolution {
    /// The existing object is controlled by this Deployment and has its template: use it as
    /// the new ReplicaSet (no event, no `NewReplicaSetCreated` condition).
    Ours,
    /// A different object owns the name: UpdateStatus with this Deployment (its
    /// `collisionCount` bumped, errors ignored) and return the AlreadyExists error so the next
    /// sync hashes with the new count.
    HashCollision(Box<Deployment>),
}

/// Decision for AlreadyExists; `existing` is the object with that name from the cache.
pub(crate) fn on_new_replica_set_already_exists(
    d: &Deployment,
    existing: &ReplicaSet,
) -> AlreadyExistsResolution {
    if is_controlled_by(existing, d)
        && equal_ignore_hash(&deployment_template(d), &rs_template(existing))
    {
        return AlreadyExistsResolution::Ours;
    }
    let mut d_copy = d.clone();
    let status = d_copy.status.get_or_insert_with(Default::default);
    let count = status.collision_count.unwrap_or(0).wrapping_add(1);
    status.collision_count = Some(count);
    tracing::debug!(
        deployment = name_of(&d.metadata),
        collision_count = count,
        "Found a hash collision for deployment - bumping collisionCount to resolve it"
    );
    AlreadyExistsResolution::HashCollision(Box::new(d_copy))
}

/// What follows a create failure other than AlreadyExists and NamespaceTerminating (for the
/// latter the caller returns the error and does nothing else).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CreateFailure {
    /// With a progress deadline: the Deployment with Progressing=False/`ReplicaSetCreateError`
    /// to UpdateStatus (errors ignored).
    pub(crate) status_update: Option<Deployment>,
    /// Warning event `ReplicaSetCreateError`.
    pub(crate) event: DeploymentEvent,
}

/// Decision for a failed create of ReplicaSet `rs_name` with error text `err`.
pub(crate) fn on_new_replica_set_create_failed(
    d: &Deployment,
    rs_name: &str,
    err: &str,
    now: Timestamp,
) -> CreateFailure {
    let msg = failed_rs_create_message(rs_name, err);
    let status_update = has_progress_deadline(d).then(|| {
        let mut d_copy = d.clone();
        set_deployment_condition(
            d_copy.status.get_or_insert_with(Default::default),
            new_deployment_condition(
                DEPLOYMENT_PROGRESSING,
                CONDITION_FALSE,
                FAILED_RS_CREATE_REASON,
                msg.clone(),
                now,
            ),
        );
        d_copy
    });
    CreateFailure {
        status_update,
        event: DeploymentEvent {
            type_: EventType::Warning,
            reason: REPLICA_SET_CREATE_ERROR,
            message: msg,
        },
    }
}

/// What follows a successful create (or an AlreadyExists resolved as [`AlreadyExistsResolution::Ours`],
/// `really_created == false`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AfterCreate {
    /// `Scaled up replica set <name> from 0 to <n>` when really created with `n > 0`.
    pub(crate) event: Option<DeploymentEvent>,
    /// The Deployment to UpdateStatus when its revision annotation changed or (really created,
    /// with a progress deadline) Progressing=True/`NewReplicaSetCreated` was set.
    pub(crate) status_update: Option<Deployment>,
}

/// Decision after the new ReplicaSet `created` exists.
pub(crate) fn after_new_replica_set_created(
    d: &Deployment,
    created: &ReplicaSet,
    new_revision: &str,
    really_created: bool,
    now: Timestamp,
) -> AfterCreate {
    let replicas = created.spec.replicas.unwrap_or(0);
    let event = (really_created && replicas > 0).then(|| {
        scaling_event(
            ScalingOperation::Up,
            name_of(&created.metadata),
            0,
            replicas,
        )
    });
    let mut d_copy = d.clone();
    let mut needs_update = set_deployment_revision(&mut d_copy, new_revision);
    if really_created && has_progress_deadline(d) {
        let msg = format!(
            "Created new replica set {}",
            go_quote(name_of(&created.metadata))
        );
        set_deployment_condition(
            d_copy.status.get_or_insert_with(Default::default),
            new_deployment_condition(
                DEPLOYMENT_PROGRESSING,
                CONDITION_TRUE,
                NEW_REPLICA_SET_REASON,
                msg,
                now,
            ),
        );
        needs_update = true;
    }
    AfterCreate {
        event,
        status_update: needs_update.then_some(d_copy),
    }
}

#[cfg(test)]
#[path = "new_replica_set_tests.rs"]
mod tests;
