//! The collector's two kinds of work (upstream `garbagecollector.go`): `attemptToDelete` — delete
//! an object whose owners are all gone, finish a foreground deletion, verify a virtual owner —
//! and `attemptToOrphan` — remove an owner's references from its dependents, then its `orphan`
//! finalizer.

use kube::api::{ObjectMeta, PropagationPolicy};

use super::collector::Collector;
use super::graph::{FOREGROUND, Node, ORPHAN, ObjectRef, OwnerRef};
use super::graph_builder::{EventKind, GraphEvent, Observed};
use super::operations::{
    GcError, delete_object, delete_owner_refs, get_metadata, get_object, owners, remove_finalizer,
    unblock_owner_refs,
};

/// What the worker does with an item after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Done: forget its rate-limit history.
    Forget,
    /// Try again later, rate-limited.
    Requeue,
}

/// One `attemptToDelete` item (upstream `attemptToDeleteWorker`).
pub(crate) async fn attempt_to_delete_worker(gc: &Collector, uid: &str) -> Outcome {
    let Some(item) = gc.graph.lock().get(uid).cloned() else {
        // Removed from the graph meanwhile: its delete event did the rest.
        return Outcome::Forget;
    };
    match attempt_to_delete_item(gc, &item).await {
        Err(GcError::VirtualDeleteEnqueued | GcError::NamespacedOwnerOfClusterScopedObject) => {
            Outcome::Forget
        }
        Err(e) => {
            tracing::debug!(item = %item.identity, error = %e, "sim gc: error syncing item");
            Outcome::Requeue
        }
        // A virtual node is checked until a watch observes it or it is verified absent.
        Ok(()) if item.virtual_ => Outcome::Requeue,
        Ok(()) => Outcome::Forget,
    }
}

/// Tell the graph builder that `identity` was verified absent.
fn enqueue_virtual_delete(gc: &Collector, identity: &ObjectRef) -> GcError {
    let _ = gc.graph_changes.send(GraphEvent {
        virtual_: true,
        kind: EventKind::Delete,
        obj: Observed::identity_only(identity.clone()),
        old: None,
    });
    GcError::VirtualDeleteEnqueued
}

/// Upstream `attemptToDeleteItem`.
async fn attempt_to_delete_item(gc: &Collector, item: &Node) -> Result<(), GcError> {
    // Being deleted is a one-way trip; its dependents are handled when it is gone.
    if item.being_deleted && !item.deleting_dependents {
        return Ok(());
    }
    let latest = match get_object(gc, &item.identity).await? {
        Some(l) if l.uid.as_deref() == Some(item.uid()) => l,
        // Not found, or another object under that name.
        _ => return Err(enqueue_virtual_delete(gc, &item.identity)),
    };
    if item.deleting_dependents {
        return process_deleting_dependents(gc, item).await;
    }
    let references = owners(&latest);
    if references.is_empty() {
        return Ok(());
    }
    let (solid, dangling, waiting) = classify_references(gc, item, &references).await?;
    if !solid.is_empty() {
        if dangling.is_empty() && waiting.is_empty() {
            return Ok(());
        }
        // References to owners waiting for their dependents go too, or those owners would
        // wait forever.
        let uids: Vec<String> = dangling
            .iter()
            .chain(&waiting)
            .map(|r| r.uid.clone())
            .collect();
        tracing::debug!(item = %item.identity, ?uids, "sim gc: removing dangling references");
        return delete_owner_refs(gc, &item.identity, &uids).await;
    }
    let policy = if !waiting.is_empty() && !item.dependents.is_empty() {
        let cycle = gc
            .graph
            .lock()
            .dependents(item.uid())
            .iter()
            .any(|d| d.deleting_dependents);
        if cycle {
            // A dependent also deletes in the foreground: unblock our references first, so the
            // two cannot wait for each other.
            unblock_owner_refs(gc, item).await?;
        }
        PropagationPolicy::Foreground
    } else {
        policy_from_finalizers(&latest)
    };
    tracing::debug!(item = %item.identity, ?policy, "sim gc: deleting item");
    match delete_object(
        gc,
        &item.identity,
        latest.resource_version.as_deref(),
        &references,
        policy,
    )
    .await
    {
        Err(GcError::Api(e)) if super::operations::is_not_found(&e) => {
            Err(enqueue_virtual_delete(gc, &item.identity))
        }
        other => other,
    }
}

/// An existing `orphan` or `foregroundDeletion` finalizer is honoured; otherwise background.
fn policy_from_finalizers(latest: &ObjectMeta) -> PropagationPolicy {
    let has = |f: &str| latest.finalizers.iter().flatten().any(|x| x == f);
    if has(ORPHAN) {
        PropagationPolicy::Orphan
    } else if has(FOREGROUND) {
        PropagationPolicy::Foreground
    } else {
        PropagationPolicy::Background
    }
}

/// Solid (the owner exists), dangling (it does not) and waiting (it is deleting in the
/// foreground) references (upstream `classifyReferences`).
async fn classify_references(
    gc: &Collector,
    item: &Node,
    references: &[OwnerRef],
) -> Result<(Vec<OwnerRef>, Vec<OwnerRef>, Vec<OwnerRef>), GcError> {
    let (mut solid, mut dangling, mut waiting) = (Vec::new(), Vec::new(), Vec::new());
    for r in references {
        match is_dangling(gc, r, item).await? {
            None => dangling.push(r.clone()),
            Some(owner) => {
                let fg = owner.finalizers.iter().flatten().any(|f| f == FOREGROUND);
                if owner.deletion_timestamp.is_some() && fg {
                    waiting.push(r.clone());
                } else {
                    solid.push(r.clone());
                }
            }
        }
    }
    Ok((solid, dangling, waiting))
}

/// The owner's live metadata, or `None` when the reference dangles: the owner is recorded
/// absent, not found, or another object has its name (upstream `isDangling`).
async fn is_dangling(
    gc: &Collector,
    reference: &OwnerRef,
    item: &Node,
) -> Result<Option<ObjectMeta>, GcError> {
    let mut key = reference.coordinates("");
    if gc.absent.lock().has(&key) {
        return Ok(None);
    }
    key.namespace.clone_from(&item.identity.namespace);
    if gc.absent.lock().has(&key) {
        return Ok(None);
    }
    let resource = gc
        .mapper
        .mapping(&reference.api_version, &reference.kind)
        .await?;
    if !resource.namespaced {
        key.namespace.clear();
    }
    if item.identity.namespace.is_empty() && resource.namespaced {
        tracing::debug!(item = %item.identity, owner = %key, "sim gc: cluster-scoped item refers to a namespaced owner");
        return Err(GcError::NamespacedOwnerOfClusterScopedObject);
    }
    match get_metadata(gc, &resource, &item.identity.namespace, &reference.name).await? {
        Some(owner) if owner.uid.as_deref() == Some(reference.uid.as_str()) => Ok(Some(owner)),
        _ => {
            gc.absent.lock().add(key);
            Ok(None)
        }
    }
}

/// A foreground owner: done when no blocking dependent is left, else its blocking dependents
/// are queued (upstream `processDeletingDependentsItem`).
async fn process_deleting_dependents(gc: &Collector, item: &Node) -> Result<(), GcError> {
    let blocking: Vec<(String, bool)> = gc
        .graph
        .lock()
        .blocking_dependents(item.uid())
        .iter()
        .map(|d| (d.identity.uid.clone(), d.deleting_dependents))
        .collect();
    if blocking.is_empty() {
        tracing::debug!(item = %item.identity, "sim gc: removing the foregroundDeletion finalizer");
        return remove_finalizer(gc, &item.identity, FOREGROUND).await;
    }
    for (uid, deleting_dependents) in blocking {
        if !deleting_dependents {
            gc.attempt_to_delete.add(uid);
        }
    }
    Ok(())
}

/// One `attemptToOrphan` item: every dependent loses its reference to the owner, then the
/// owner its `orphan` finalizer (upstream `attemptToOrphanWorker`).
pub(crate) async fn attempt_to_orphan_worker(gc: &Collector, uid: &str) -> Outcome {
    let (owner, dependents) = {
        let graph = gc.graph.lock();
        let Some(owner) = graph.get(uid).map(|n| n.identity.clone()) else {
            return Outcome::Forget;
        };
        let deps: Vec<ObjectRef> = graph
            .dependents(uid)
            .iter()
            .map(|d| d.identity.clone())
            .collect();
        (owner, deps)
    };
    let uids = [owner.uid.clone()];
    let results =
        futures::future::join_all(dependents.iter().map(|d| delete_owner_refs(gc, d, &uids))).await;
    let failed: Vec<String> = results
        .into_iter()
        .filter_map(Result::err)
        .filter(|e| !matches!(e, GcError::Api(e) if super::operations::is_not_found(e)))
        .map(|e| e.to_string())
        .collect();
    if !failed.is_empty() {
        tracing::debug!(owner = %owner, errors = ?failed, "sim gc: failed to orphan dependents");
        return Outcome::Requeue;
    }
    match remove_finalizer(gc, &owner, ORPHAN).await {
        Ok(()) => Outcome::Forget,
        Err(e) => {
            tracing::debug!(owner = %owner, error = %e, "sim gc: removing the orphan finalizer failed");
            Outcome::Requeue
        }
    }
}
