//! The garbage collector's ownership graph (upstream `GraphBuilder`): every observed object with its
//! owner references, the reverse index owner → dependents, and which work each change triggers.

use std::collections::{BTreeSet, HashMap};

use kube::api::DynamicObject;

/// `metadata.finalizers` entry for foreground deletion.
pub(crate) const FOREGROUND: &str = "foregroundDeletion";
/// `metadata.finalizers` entry for orphaning deletion.
pub(crate) const ORPHAN: &str = "orphan";

/// One owner reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub block_owner_deletion: bool,
}

/// One observed object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GraphNode {
    /// Index in `kinds::KINDS`.
    pub kind: usize,
    pub namespace: Option<String>,
    pub name: String,
    pub uid: String,
    pub owners: Vec<OwnerRef>,
    pub deleting: bool,
    pub finalizers: Vec<String>,
}

impl GraphNode {
    /// Build from an object of kind `kind`; None without a uid.
    pub(crate) fn from_object(kind: usize, obj: &DynamicObject) -> Option<Self> {
        let m = &obj.metadata;
        Some(GraphNode {
            kind,
            namespace: m.namespace.clone().filter(|n| !n.is_empty()),
            name: m.name.clone().unwrap_or_default(),
            uid: m.uid.clone()?,
            owners: m
                .owner_references
                .iter()
                .flatten()
                .map(|r| OwnerRef {
                    api_version: r.api_version.clone(),
                    kind: r.kind.clone(),
                    name: r.name.clone(),
                    uid: r.uid.clone(),
                    block_owner_deletion: r.block_owner_deletion.unwrap_or(false),
                })
                .collect(),
            deleting: m.deletion_timestamp.is_some(),
            finalizers: m.finalizers.clone().unwrap_or_default(),
        })
    }

    fn has_finalizer(&self, f: &str) -> bool {
        self.finalizers.iter().any(|x| x == f)
    }

    /// Being deleted in the foreground: waits for its blocking dependents.
    pub(crate) fn deleting_dependents(&self) -> bool {
        self.deleting && self.has_finalizer(FOREGROUND)
    }

    /// Being deleted with the orphan policy.
    pub(crate) fn orphaning(&self) -> bool {
        self.deleting && self.has_finalizer(ORPHAN)
    }
}

/// Work for the GC workers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Work {
    /// Check whether the object must be deleted (dangling owners, foreground owner) or, when it is
    /// deleting its dependents, whether it can go.
    AttemptToDelete(String),
    /// Remove the object's references from its dependents, then its `orphan` finalizer.
    Orphan(String),
}

/// The ownership graph.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    nodes: HashMap<String, GraphNode>,
    dependents: HashMap<String, BTreeSet<String>>,
}

impl Graph {
    pub(crate) fn get(&self, uid: &str) -> Option<&GraphNode> {
        self.nodes.get(uid)
    }

    /// Observed dependents of `uid`.
    pub(crate) fn dependents(&self, uid: &str) -> Vec<&GraphNode> {
        self.dependents
            .get(uid)
            .into_iter()
            .flatten()
            .filter_map(|d| self.nodes.get(d))
            .collect()
    }

    /// Dependents whose reference to `uid` has `blockOwnerDeletion: true`.
    pub(crate) fn blocking_dependents(&self, uid: &str) -> Vec<&GraphNode> {
        self.dependents(uid)
            .into_iter()
            .filter(|d| {
                d.owners
                    .iter()
                    .any(|r| r.uid == uid && r.block_owner_deletion)
            })
            .collect()
    }

    fn unlink(&mut self, node: &GraphNode) {
        for r in &node.owners {
            if let Some(set) = self.dependents.get_mut(&r.uid) {
                set.remove(&node.uid);
                if set.is_empty() {
                    self.dependents.remove(&r.uid);
                }
            }
        }
    }

    /// Record an added or updated object; returns the work it triggers.
    pub(crate) fn upsert(&mut self, node: GraphNode) -> Vec<Work> {
        let uid = node.uid.clone();
        let old = self.nodes.insert(uid.clone(), node.clone());
        if let Some(o) = &old {
            self.unlink(o);
        }
        for r in &node.owners {
            self.dependents
                .entry(r.uid.clone())
                .or_default()
                .insert(uid.clone());
        }
        let mut work = Vec::new();
        if node.owners.iter().any(|r| !self.nodes.contains_key(&r.uid)) {
            work.push(Work::AttemptToDelete(uid.clone()));
        }
        if node.orphaning() {
            work.push(Work::Orphan(uid.clone()));
        }
        if node.deleting_dependents() {
            work.push(Work::AttemptToDelete(uid.clone()));
            if !old.as_ref().is_some_and(GraphNode::deleting_dependents) {
                for d in self.dependents(&uid) {
                    work.push(Work::AttemptToDelete(d.uid.clone()));
                }
            }
        }
        // A reference removed or unblocked may let a foreground owner finish.
        if let Some(o) = &old {
            for r in &o.owners {
                let still_blocks = node
                    .owners
                    .iter()
                    .any(|n| n.uid == r.uid && n.block_owner_deletion);
                if r.block_owner_deletion
                    && !still_blocks
                    && self
                        .nodes
                        .get(&r.uid)
                        .is_some_and(GraphNode::deleting_dependents)
                {
                    work.push(Work::AttemptToDelete(r.uid.clone()));
                }
            }
        }
        work
    }

    /// Objects with an owner the graph has not observed and `custom` accepts (owners of kinds
    /// the collector does not watch, whose deletion it cannot see).
    pub(crate) fn with_unobserved_owners(&self, custom: impl Fn(&OwnerRef) -> bool) -> Vec<String> {
        self.nodes
            .values()
            .filter(|n| {
                n.owners
                    .iter()
                    .any(|r| !self.nodes.contains_key(&r.uid) && custom(r))
            })
            .map(|n| n.uid.clone())
            .collect()
    }

    /// Record a deleted object; returns the work it triggers.
    pub(crate) fn remove(&mut self, uid: &str) -> Vec<Work> {
        let Some(node) = self.nodes.remove(uid) else {
            return Vec::new();
        };
        self.unlink(&node);
        let mut work = Vec::new();
        for r in &node.owners {
            if self
                .nodes
                .get(&r.uid)
                .is_some_and(GraphNode::deleting_dependents)
            {
                work.push(Work::AttemptToDelete(r.uid.clone()));
            }
        }
        for d in self.dependents(uid) {
            work.push(Work::AttemptToDelete(d.uid.clone()));
        }
        work
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(uid: &str, owners: &[(&str, bool)], deleting: bool, fins: &[&str]) -> GraphNode {
        GraphNode {
            kind: 0,
            namespace: Some("ns".into()),
            name: uid.into(),
            uid: uid.into(),
            owners: owners
                .iter()
                .map(|(u, b)| OwnerRef {
                    api_version: "apps/v1".into(),
                    kind: "ReplicaSet".into(),
                    name: u.to_string(),
                    uid: u.to_string(),
                    block_owner_deletion: *b,
                })
                .collect(),
            deleting,
            finalizers: fins.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn del(u: &str) -> Work {
        Work::AttemptToDelete(u.into())
    }

    #[test]
    fn transitions() {
        let mut g = Graph::default();
        // A dependent seen before its owner is checked for dangling references.
        assert_eq!(
            g.upsert(node("pod", &[("rs", true)], false, &[])),
            vec![del("pod")]
        );
        assert_eq!(g.upsert(node("rs", &[], false, &[])), vec![]);
        assert_eq!(g.dependents("rs").len(), 1);
        assert_eq!(g.blocking_dependents("rs").len(), 1);
        // Foreground deletion of the owner: the owner and each dependent are processed.
        assert_eq!(
            g.upsert(node("rs", &[], true, &[FOREGROUND])),
            vec![del("rs"), del("pod")]
        );
        // A repeat of the same state does not re-enqueue dependents.
        assert_eq!(
            g.upsert(node("rs", &[], true, &[FOREGROUND])),
            vec![del("rs")]
        );
        // The dependent going away re-checks the owner.
        assert_eq!(g.remove("pod"), vec![del("rs")]);
        assert!(g.blocking_dependents("rs").is_empty());
        // Orphan deletion.
        let mut g = Graph::default();
        g.upsert(node("rs", &[], false, &[]));
        g.upsert(node("pod", &[("rs", false)], false, &[]));
        assert_eq!(
            g.upsert(node("rs", &[], true, &[ORPHAN])),
            vec![Work::Orphan("rs".into())]
        );
        // Owner deleted: its dependents are checked.
        assert_eq!(g.remove("rs"), vec![del("pod")]);
        assert!(g.remove("unknown").is_empty());
    }

    #[test]
    fn unblocking_reference_rechecks_foreground_owner() {
        let mut g = Graph::default();
        g.upsert(node("rs", &[], true, &[FOREGROUND]));
        g.upsert(node("pod", &[("rs", true)], false, &[]));
        assert_eq!(g.upsert(node("pod", &[], false, &[])), vec![del("rs")]);
        assert!(g.dependents("rs").is_empty());
    }

    #[test]
    fn unobserved_owners_are_listed_for_recheck() {
        let mut g = Graph::default();
        g.upsert(node("rs", &[], false, &[]));
        g.upsert(node("pod-of-rs", &[("rs", false)], false, &[]));
        g.upsert(node("pod-of-gone", &[("gone", false)], false, &[]));
        let mut custom = node("dep-of-foo", &[], false, &[]);
        custom.owners.push(OwnerRef {
            api_version: "samplecontroller.k8s.io/v1alpha1".into(),
            kind: "Foo".into(),
            name: "foo".into(),
            uid: "foo-uid".into(),
            block_owner_deletion: true,
        });
        g.upsert(custom);
        let mut all = g.with_unobserved_owners(|_| true);
        all.sort();
        assert_eq!(all, ["dep-of-foo", "pod-of-gone"]);
        let foos = g.with_unobserved_owners(|r| r.kind == "Foo");
        assert_eq!(foos, ["dep-of-foo"]);
    }
}
