//! How each watch event changes the ownership graph and which work it creates (upstream
//! `graph_builder.go`: `processGraphChanges`, `addDependentToOwners`, `processTransitions`,
//! `referencesDiffs`, `partitionDependents`, `getAlternateOwnerIdentity`). Pure: the collector
//! applies the returned [`Effects`] to its queues, its absent-owner cache and its events.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::graph::{FOREGROUND, Graph, Node, ORPHAN, ObjectRef, OwnerRef};

/// What a watch event says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// Added.
    Add,
    /// Modified (or re-listed).
    Update,
    /// Deleted (or, for a virtual event, verified absent).
    Delete,
}

/// An object's state as an event carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Observed {
    /// apiVersion and kind of the watched resource, namespace, name and uid.
    pub identity: ObjectRef,
    /// Its owner references.
    pub owners: Vec<OwnerRef>,
    /// Has a deletionTimestamp.
    pub being_deleted: bool,
    /// Its finalizers.
    pub finalizers: Vec<String>,
}

impl Observed {
    /// The state of an object of `api_version`/`kind` with `meta`.
    pub(crate) fn from_meta(api_version: &str, kind: &str, meta: &ObjectMeta) -> Self {
        Observed {
            identity: ObjectRef {
                kind: kind.to_string(),
                api_version: api_version.to_string(),
                namespace: meta.namespace.clone().unwrap_or_default(),
                name: meta.name.clone().unwrap_or_default(),
                uid: meta.uid.clone().unwrap_or_default(),
            },
            owners: meta
                .owner_references
                .iter()
                .flatten()
                .map(OwnerRef::from)
                .collect(),
            being_deleted: meta.deletion_timestamp.is_some(),
            finalizers: meta.finalizers.clone().unwrap_or_default(),
        }
    }

    /// Only the coordinates (a virtual delete event's object).
    pub(crate) fn identity_only(identity: ObjectRef) -> Self {
        Observed {
            identity,
            owners: Vec::new(),
            being_deleted: false,
            finalizers: Vec::new(),
        }
    }

    fn deleting_with(&self, finalizer: &str) -> bool {
        self.being_deleted && self.finalizers.iter().any(|f| f == finalizer)
    }
}

/// One change for the graph (upstream `event`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GraphEvent {
    /// Produced by the collector itself after verifying an object absent.
    pub virtual_: bool,
    /// Add, update or delete.
    pub kind: EventKind,
    /// The object's new (or last) state.
    pub obj: Observed,
    /// The previous state, for an update.
    pub old: Option<Observed>,
}

/// The work an event creates.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Effects {
    /// Uids to add to `attemptToDelete`.
    pub attempt_to_delete: Vec<String>,
    /// Uids to add to `attemptToDelete` rate-limited.
    pub attempt_to_delete_later: Vec<String>,
    /// Uids to add to `attemptToOrphan`.
    pub attempt_to_orphan: Vec<String>,
    /// Owners now known to be absent.
    pub absent_owners: Vec<ObjectRef>,
    /// `OwnerRefInvalidNamespace` to report: the dependent and the owner it names.
    pub invalid_namespace: Vec<(ObjectRef, OwnerRef)>,
}

impl Graph {
    /// Apply one event (upstream `processGraphChanges`).
    pub(crate) fn process(&mut self, event: &GraphEvent) -> Effects {
        let mut fx = Effects::default();
        let obj = &event.obj;
        let uid = obj.identity.uid.clone();
        let found = self.nodes.contains_key(&uid);
        if found && !event.virtual_ && self.nodes.get(&uid).is_some_and(|n| n.virtual_) {
            self.observe_virtual(&uid, &obj.identity, &mut fx);
        }
        match (event.kind, found) {
            (EventKind::Add | EventKind::Update, false) => {
                let mut node = Node::observed(obj.identity.clone(), obj.owners.clone());
                node.deleting_dependents = obj.deleting_with(FOREGROUND);
                node.being_deleted = obj.being_deleted;
                self.nodes.insert(uid.clone(), node);
                self.add_dependent_to_owners(&uid, &obj.owners, &mut fx);
                self.process_transitions(event.old.as_ref(), obj, &uid, &mut fx);
            }
            (EventKind::Add | EventKind::Update, true) => {
                let existing = self.nodes.get(&uid).map(|n| n.owners.clone());
                let (added, removed, changed) =
                    references_diffs(&existing.unwrap_or_default(), &obj.owners);
                if !added.is_empty() || !removed.is_empty() || !changed.is_empty() {
                    self.add_unblocked_owners_to_delete_queue(&removed, &changed, &mut fx);
                    if let Some(n) = self.nodes.get_mut(&uid) {
                        n.owners = obj.owners.clone();
                    }
                    self.add_dependent_to_owners(&uid, &added, &mut fx);
                    self.remove_dependent_from_owners(&uid, &removed);
                }
                if obj.being_deleted
                    && let Some(n) = self.nodes.get_mut(&uid)
                {
                    n.being_deleted = true;
                }
                self.process_transitions(event.old.as_ref(), obj, &uid, &mut fx);
            }
            (EventKind::Delete, false) => {}
            (EventKind::Delete, true) => self.process_delete(event, &uid, &mut fx),
        }
        fx
    }

    /// An observed object takes over its virtual node: dependents whose references do not match
    /// the observed coordinates are checked again (they may name a wrong kind or namespace).
    fn observe_virtual(&mut self, uid: &str, observed: &ObjectRef, fx: &mut Effects) {
        let Some(existing) = self.nodes.get(uid) else {
            return;
        };
        if existing.identity != *observed {
            let (_, invalid) = self.partition_dependents(uid, observed);
            for dep in invalid {
                if let Some(d) = self.nodes.get(&dep)
                    && !observed.namespace.is_empty()
                    && d.identity.namespace != observed.namespace
                {
                    push_invalid(fx, d, uid);
                }
                fx.attempt_to_delete.push(dep);
            }
        }
        if let Some(n) = self.nodes.get_mut(uid) {
            n.identity = observed.clone();
            n.virtual_ = false;
        }
    }

    fn process_delete(&mut self, event: &GraphEvent, uid: &str, fx: &mut Effects) {
        let Some(existing) = self.nodes.get(uid).cloned() else {
            return;
        };
        let deleted = &event.obj.identity;
        let mut remove = true;
        if event.virtual_ {
            if existing.virtual_ {
                // A virtual node whose dependents disagree about its coordinates: only those
                // naming the verified-absent coordinates are affected.
                let (matching, nonmatching) = self.partition_dependents(uid, deleted);
                if !nonmatching.is_empty() {
                    remove = false;
                    if !matching.is_empty() {
                        fx.absent_owners.push(deleted.clone());
                        fx.attempt_to_delete.extend(matching);
                    }
                    if existing.identity == *deleted {
                        let deps: Vec<&Node> = nonmatching
                            .iter()
                            .filter_map(|d| self.nodes.get(d))
                            .collect();
                        if let Some(replacement) = alternate_owner_identity(&deps, deleted)
                            && let Some(n) = self.nodes.get_mut(uid)
                        {
                            n.identity = replacement;
                            fx.attempt_to_delete_later.push(uid.to_string());
                        }
                    }
                }
            } else if existing.identity != *deleted {
                // The observed object exists; some dependents named other coordinates.
                remove = false;
                let (matching, _) = self.partition_dependents(uid, deleted);
                if !matching.is_empty() {
                    fx.absent_owners.push(deleted.clone());
                    fx.attempt_to_delete.extend(matching);
                }
            }
        }
        if !remove {
            return;
        }
        self.nodes.remove(uid);
        self.remove_dependent_from_owners(uid, &existing.owners);
        if !existing.dependents.is_empty() {
            fx.absent_owners.push(deleted.clone());
        }
        fx.attempt_to_delete
            .extend(existing.dependents.iter().cloned());
        for owner in &existing.owners {
            if self
                .nodes
                .get(&owner.uid)
                .is_some_and(|o| o.deleting_dependents)
            {
                fx.attempt_to_delete.push(owner.uid.clone());
            }
        }
    }

    /// Link `uid` to each of `owners`, creating virtual nodes for owners not seen yet (upstream
    /// `addDependentToOwners`).
    fn add_dependent_to_owners(&mut self, uid: &str, owners: &[OwnerRef], fx: &mut Effects) {
        let Some(namespace) = self.nodes.get(uid).map(|n| n.identity.namespace.clone()) else {
            return;
        };
        let mut potentially_invalid = false;
        for owner in owners {
            let known = self.nodes.contains_key(&owner.uid);
            if !known {
                let node = Node::virtual_owner(owner.coordinates(&namespace));
                self.nodes.insert(owner.uid.clone(), node);
            }
            let Some(owner_node) = self.nodes.get_mut(&owner.uid) else {
                continue;
            };
            owner_node.dependents.insert(uid.to_string());
            if !known {
                fx.attempt_to_delete.push(owner.uid.clone());
                continue;
            }
            if potentially_invalid {
                continue;
            }
            let owner_ns = owner_node.identity.namespace.clone();
            let observed = !owner_node.virtual_;
            if !owner_ns.is_empty() && owner_ns != namespace {
                if observed && let Some(dep) = self.nodes.get(uid) {
                    push_invalid(fx, dep, &owner.uid);
                }
                potentially_invalid = true;
            } else if !owner.matches(&owner_node.identity)
                || (owner_ns.is_empty() && owner_ns != namespace && !observed)
            {
                potentially_invalid = true;
            }
        }
        if potentially_invalid {
            fx.attempt_to_delete.push(uid.to_string());
        }
    }

    fn remove_dependent_from_owners(&mut self, uid: &str, owners: &[OwnerRef]) {
        for owner in owners {
            if let Some(o) = self.nodes.get_mut(&owner.uid) {
                o.dependents.remove(uid);
            }
        }
    }

    /// A reference that stopped blocking lets a foreground owner finish (upstream
    /// `addUnblockedOwnersToDeleteQueue`).
    fn add_unblocked_owners_to_delete_queue(
        &self,
        removed: &[OwnerRef],
        changed: &[(OwnerRef, OwnerRef)],
        fx: &mut Effects,
    ) {
        for r in removed {
            if r.blocks() && self.nodes.contains_key(&r.uid) {
                fx.attempt_to_delete.push(r.uid.clone());
            }
        }
        for (old, new) in changed {
            if old.blocks() && !new.blocks() && self.nodes.contains_key(&new.uid) {
                fx.attempt_to_delete.push(new.uid.clone());
            }
        }
    }

    /// Deletion with `orphan` or `foregroundDeletion` starting (upstream `processTransitions`).
    fn process_transitions(
        &mut self,
        old: Option<&Observed>,
        new: &Observed,
        uid: &str,
        fx: &mut Effects,
    ) {
        let starts = |f: &str| new.deleting_with(f) && old.is_none_or(|o| !o.deleting_with(f));
        if starts(ORPHAN) {
            fx.attempt_to_orphan.push(uid.to_string());
            return;
        }
        if starts(FOREGROUND)
            && let Some(n) = self.nodes.get_mut(uid)
        {
            n.deleting_dependents = true;
            fx.attempt_to_delete.extend(n.dependents.iter().cloned());
            fx.attempt_to_delete.push(uid.to_string());
        }
    }

    /// The dependents of `uid` whose references match `owner` exactly, and those that name its
    /// uid with other coordinates or live in another namespace than a namespaced `owner`
    /// (upstream `partitionDependents`).
    fn partition_dependents(&self, uid: &str, owner: &ObjectRef) -> (Vec<String>, Vec<String>) {
        let (mut matching, mut nonmatching) = (Vec::new(), Vec::new());
        for dep in self.dependents(uid) {
            let mut found_match = false;
            let mut found_mismatch = false;
            if !owner.namespace.is_empty() && owner.namespace != dep.identity.namespace {
                found_mismatch = true;
            } else {
                for r in dep.owners.iter().filter(|r| r.uid == owner.uid) {
                    if r.matches(owner) {
                        found_match = true;
                    } else {
                        found_mismatch = true;
                    }
                }
            }
            if found_match {
                matching.push(dep.identity.uid.clone());
            }
            if found_mismatch {
                nonmatching.push(dep.identity.uid.clone());
            }
        }
        (matching, nonmatching)
    }
}

fn push_invalid(fx: &mut Effects, dependent: &Node, owner_uid: &str) {
    if let Some(r) = dependent.owners.iter().find(|r| r.uid == owner_uid) {
        fx.invalid_namespace
            .push((dependent.identity.clone(), r.clone()));
    }
}

/// Owner references added, removed, and changed (old, new), by uid (upstream
/// `referencesDiffs`).
pub(crate) fn references_diffs(
    old: &[OwnerRef],
    new: &[OwnerRef],
) -> (Vec<OwnerRef>, Vec<OwnerRef>, Vec<(OwnerRef, OwnerRef)>) {
    let mut added = Vec::new();
    let mut changed = Vec::new();
    for n in new {
        match old.iter().find(|o| o.uid == n.uid) {
            Some(o) if o != n => changed.push((o.clone(), n.clone())),
            Some(_) => {}
            None => added.push(n.clone()),
        }
    }
    let removed = old
        .iter()
        .filter(|o| !new.iter().any(|n| n.uid == o.uid))
        .cloned()
        .collect();
    (added, removed, changed)
}

/// Another identity to try for a virtual owner after `absent` was verified absent: the
/// coordinates some other dependent gives the same uid, the first one sorting after `absent`,
/// else the first one (upstream `getAlternateOwnerIdentity`).
pub(crate) fn alternate_owner_identity(deps: &[&Node], absent: &ObjectRef) -> Option<ObjectRef> {
    let absent_is_cluster_scoped = absent.namespace.is_empty();
    let mut seen = std::collections::BTreeSet::from([absent.clone()]);
    let mut first: Option<ObjectRef> = None;
    let mut first_following: Option<ObjectRef> = None;
    for dep in deps {
        for r in dep.owners.iter().filter(|r| r.uid == absent.uid) {
            if r.matches(absent)
                && (absent_is_cluster_scoped || absent.namespace == dep.identity.namespace)
            {
                continue;
            }
            let mut candidate = r.coordinates(&dep.identity.namespace);
            if absent_is_cluster_scoped
                && candidate.api_version == absent.api_version
                && candidate.kind == absent.kind
            {
                candidate.namespace.clear();
            }
            if !seen.insert(candidate.clone()) {
                continue;
            }
            if first.as_ref().is_none_or(|f| candidate < *f) {
                first = Some(candidate.clone());
            }
            if *absent < candidate && first_following.as_ref().is_none_or(|f| candidate < *f) {
                first_following = Some(candidate);
            }
        }
    }
    first_following.or(first)
}
