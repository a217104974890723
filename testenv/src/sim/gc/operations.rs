//! The collector's API calls, all through the metadata of objects (upstream `operations.go` and
//! `patch.go`): get, delete with preconditions, patches with a JSON merge patch fallback where
//! strategic merge patch is not supported (custom resources), and finalizer removal.

use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, Preconditions, PropagationPolicy};
use serde_json::{Value, json};

use super::super::discovery::Resource;
use super::collector::Collector;
use super::graph::{Node, ObjectRef, OwnerRef};
use super::rest_mapper::RestMappingError;

/// Why an attempt did not finish; the worker decides whether to retry.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GcError {
    /// A virtual delete event was produced; the graph builder takes it from there.
    #[error("enqueued virtual delete event")]
    VirtualDeleteEnqueued,
    /// A cluster-scoped object names a namespaced owner: never resolves.
    #[error("cluster-scoped objects cannot refer to namespaced owners")]
    NamespacedOwnerOfClusterScopedObject,
    /// The reference's kind is not served (yet).
    #[error(transparent)]
    RestMapping(#[from] RestMappingError),
    /// An API call failed.
    #[error(transparent)]
    Api(#[from] kube::Error),
}

pub(crate) fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

pub(crate) fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

fn is_unsupported_media_type(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 415)
}

fn namespace_of<'a>(r: &Resource, namespace: &'a str) -> Option<&'a str> {
    (r.namespaced && !namespace.is_empty()).then_some(namespace)
}

/// The resource of an object's coordinates.
pub(crate) async fn resource_of(gc: &Collector, item: &ObjectRef) -> Result<Resource, GcError> {
    Ok(gc.mapper.mapping(&item.api_version, &item.kind).await?)
}

/// The live metadata of `item`'s coordinates (`None`: not found).
pub(crate) async fn get_object(
    gc: &Collector,
    item: &ObjectRef,
) -> Result<Option<ObjectMeta>, GcError> {
    let r = resource_of(gc, item).await?;
    if r.namespaced && item.namespace.is_empty() {
        // Only a cluster-scoped dependent can give a namespaced owner no namespace.
        return Err(GcError::NamespacedOwnerOfClusterScopedObject);
    }
    get_metadata(gc, &r, &item.namespace, &item.name).await
}

/// The live metadata of `name` in `r` (`None`: not found).
pub(crate) async fn get_metadata(
    gc: &Collector,
    r: &Resource,
    namespace: &str,
    name: &str,
) -> Result<Option<ObjectMeta>, GcError> {
    let api = r.api(&gc.client, namespace_of(r, namespace));
    Ok(api.get_metadata_opt(name).await?.map(|m| m.metadata))
}

/// Delete `item` with its uid (and `resource_version` when given) as preconditions; a conflict
/// on the resourceVersion alone, with owner references unchanged, is retried without it
/// (upstream `deleteObject`).
pub(crate) async fn delete_object(
    gc: &Collector,
    item: &ObjectRef,
    resource_version: Option<&str>,
    owners_at_version: &[OwnerRef],
    policy: PropagationPolicy,
) -> Result<(), GcError> {
    let r = resource_of(gc, item).await?;
    let api = r.api(&gc.client, namespace_of(&r, &item.namespace));
    let dp = DeleteParams {
        propagation_policy: Some(policy.clone()),
        preconditions: Some(Preconditions {
            uid: Some(item.uid.clone()),
            resource_version: resource_version.map(str::to_string),
        }),
        ..DeleteParams::default()
    };
    match api.delete(&item.name, &dp).await {
        Ok(_) => Ok(()),
        Err(e) if is_conflict(&e) && resource_version.is_some() => {
            let live = match api.get_metadata_opt(&item.name).await {
                Ok(None) => return Err(GcError::Api(not_found(&r, &item.name))),
                Ok(Some(live)) => Some(live.metadata),
                Err(_) => None,
            };
            let unrelated_change = live.is_some_and(|l| {
                l.uid.as_deref() == Some(item.uid.as_str())
                    && l.resource_version.as_deref() != resource_version
                    && owners(&l) == owners_at_version
            });
            if unrelated_change {
                Box::pin(delete_object(gc, item, None, &[], policy)).await
            } else {
                Err(GcError::Api(e))
            }
        }
        Err(e) => Err(GcError::Api(e)),
    }
}

/// The owner references of live metadata.
pub(crate) fn owners(meta: &ObjectMeta) -> Vec<OwnerRef> {
    meta.owner_references
        .iter()
        .flatten()
        .map(OwnerRef::from)
        .collect()
}

fn not_found(r: &Resource, name: &str) -> kube::Error {
    kube::Error::Api(
        kube::core::Status::failure(
            &format!("{} \"{name}\" not found", r.group_resource()),
            "NotFound",
        )
        .with_code(404)
        .boxed(),
    )
}

/// Remove the references to `owner_uids` from `item` (upstream
/// `GenerateDeleteOwnerRefStrategicMergeBytes` with `deleteOwnerRefJSONMergePatch` as fallback).
pub(crate) async fn delete_owner_refs(
    gc: &Collector,
    item: &ObjectRef,
    owner_uids: &[String],
) -> Result<(), GcError> {
    let refs: Vec<Value> = owner_uids
        .iter()
        .map(|u| json!({"$patch": "delete", "uid": u}))
        .collect();
    let smp = json!({"metadata": {"ownerReferences": refs, "uid": item.uid}});
    patch(gc, item, smp, |live| {
        let kept: Vec<Value> = owners(live)
            .iter()
            .filter(|r| !owner_uids.contains(&r.uid))
            .map(|r| json!(r.to_api()))
            .collect();
        // No reference left: `null` removes the field (upstream marshals a nil slice).
        let kept = if kept.is_empty() {
            Value::Null
        } else {
            json!(kept)
        };
        json!({"metadata": {"resourceVersion": live.resource_version, "ownerReferences": kept}})
    })
    .await
}

/// Set `blockOwnerDeletion: false` on every blocking reference of `item` (upstream
/// `unblockOwnerReferencesStrategicMergePatch`, `unblockOwnerReferencesJSONMergePatch`).
pub(crate) async fn unblock_owner_refs(gc: &Collector, item: &Node) -> Result<(), GcError> {
    let unblock = |r: &OwnerRef| {
        let mut r = r.clone();
        r.block_owner_deletion = Some(false);
        json!(r.to_api())
    };
    let blocking: Vec<Value> = item
        .owners
        .iter()
        .filter(|r| r.blocks())
        .map(unblock)
        .collect();
    let smp = json!({"metadata": {"ownerReferences": blocking, "uid": item.identity.uid}});
    let all: Vec<Value> = item.owners.iter().map(unblock).collect();
    patch(gc, &item.identity, smp, |live| {
        json!({"metadata": {"resourceVersion": live.resource_version, "ownerReferences": all}})
    })
    .await
}

/// A strategic merge patch, or on 415 the JSON merge patch `merge` builds from the live
/// metadata (upstream `GarbageCollector.patch`).
async fn patch(
    gc: &Collector,
    item: &ObjectRef,
    smp: Value,
    merge: impl FnOnce(&ObjectMeta) -> Value,
) -> Result<(), GcError> {
    let r = resource_of(gc, item).await?;
    let api = r.api(&gc.client, namespace_of(&r, &item.namespace));
    let pp = PatchParams::default();
    match api
        .patch_metadata(&item.name, &pp, &Patch::Strategic(smp))
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if is_unsupported_media_type(&e) => {
            let Some(live) = get_metadata(gc, &r, &item.namespace, &item.name).await? else {
                return Err(GcError::Api(not_found(&r, &item.name)));
            };
            let body = merge(&live);
            api.patch_metadata(&item.name, &pp, &Patch::Merge(body))
                .await
                .map(|_| ())
                .map_err(GcError::Api)
        }
        Err(e) => Err(GcError::Api(e)),
    }
}

/// Upstream `retry.DefaultBackoff`: 5 attempts.
const CONFLICT_ATTEMPTS: usize = 5;

/// Remove `finalizer` from `owner`: GET, then a merge patch of `finalizers` with the
/// resourceVersion, retried on conflict (upstream `removeFinalizer`).
pub(crate) async fn remove_finalizer(
    gc: &Collector,
    owner: &ObjectRef,
    finalizer: &str,
) -> Result<(), GcError> {
    let r = resource_of(gc, owner).await?;
    let api = r.api(&gc.client, namespace_of(&r, &owner.namespace));
    for attempt in 1..=CONFLICT_ATTEMPTS {
        let Some(live) = get_metadata(gc, &r, &owner.namespace, &owner.name).await? else {
            return Ok(());
        };
        let finalizers = live.finalizers.unwrap_or_default();
        if !finalizers.iter().any(|f| f == finalizer) {
            return Ok(());
        }
        let rest: Vec<&String> = finalizers.iter().filter(|f| *f != finalizer).collect();
        let rest = if rest.is_empty() {
            Value::Null
        } else {
            json!(rest)
        };
        let body =
            json!({"metadata": {"resourceVersion": live.resource_version, "finalizers": rest}});
        match api
            .patch_metadata(&owner.name, &PatchParams::default(), &Patch::Merge(body))
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if is_not_found(&e) => return Ok(()),
            Err(e) if is_conflict(&e) && attempt < CONFLICT_ATTEMPTS => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            Err(e) => return Err(GcError::Api(e)),
        }
    }
    Ok(())
}
