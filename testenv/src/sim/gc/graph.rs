//! The garbage collector's ownership graph (upstream `pkg/controller/garbagecollector/graph.go`):
//! one node per object uid the collector has observed, or heard of as an owner ("virtual"
//! nodes), with its owner references and the uids of its dependents.

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

/// `foregroundDeletion`: the owner waits for its blocking dependents.
pub(crate) const FOREGROUND: &str = "foregroundDeletion";
/// `orphan`: the owner's dependents lose their references before it goes.
pub(crate) const ORPHAN: &str = "orphan";

/// An object's coordinates (upstream `objectReference`). The field order is upstream's sort
/// order (`referenceLessThan`): kind, apiVersion, namespace, name, uid.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ObjectRef {
    /// Kind.
    pub kind: String,
    /// `group/version`.
    pub api_version: String,
    /// Namespace (`""`: cluster-scoped, or not known to be namespaced).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Uid.
    pub uid: String,
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}/{}, namespace: {}, name: {}, uid: {}]",
            self.api_version, self.kind, self.namespace, self.name, self.uid
        )
    }
}

/// An owner reference as the graph keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnerRef {
    /// The owner's `apiVersion`.
    pub api_version: String,
    /// The owner's kind.
    pub kind: String,
    /// The owner's name.
    pub name: String,
    /// The owner's uid.
    pub uid: String,
    /// `controller`.
    pub controller: Option<bool>,
    /// `blockOwnerDeletion`.
    pub block_owner_deletion: Option<bool>,
}

impl OwnerRef {
    /// Whether the reference blocks the owner's foreground deletion.
    pub(crate) fn blocks(&self) -> bool {
        self.block_owner_deletion == Some(true)
    }

    /// The owner's coordinates in `namespace` (upstream `ownerReferenceCoordinates`).
    pub(crate) fn coordinates(&self, namespace: &str) -> ObjectRef {
        ObjectRef {
            kind: self.kind.clone(),
            api_version: self.api_version.clone(),
            namespace: namespace.to_string(),
            name: self.name.clone(),
            uid: self.uid.clone(),
        }
    }

    /// Whether uid, name, kind and apiVersion are those of `r` (upstream
    /// `ownerReferenceMatchesCoordinates`).
    pub(crate) fn matches(&self, r: &ObjectRef) -> bool {
        self.uid == r.uid
            && self.name == r.name
            && self.kind == r.kind
            && self.api_version == r.api_version
    }

    /// The reference as the API writes it.
    pub(crate) fn to_api(&self) -> OwnerReference {
        OwnerReference {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
            controller: self.controller,
            block_owner_deletion: self.block_owner_deletion,
        }
    }
}

impl From<&OwnerReference> for OwnerRef {
    fn from(r: &OwnerReference) -> Self {
        OwnerRef {
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
            name: r.name.clone(),
            uid: r.uid.clone(),
            controller: r.controller,
            block_owner_deletion: r.block_owner_deletion,
        }
    }
}

/// One node of the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    /// The object's coordinates (for a virtual node: as its first dependent named it).
    pub identity: ObjectRef,
    /// Its owner references (none for a virtual node).
    pub owners: Vec<OwnerRef>,
    /// Uids of the nodes whose owner references name this one.
    pub dependents: BTreeSet<String>,
    /// Deleted in the foreground: waiting for its blocking dependents.
    pub deleting_dependents: bool,
    /// Has a deletionTimestamp.
    pub being_deleted: bool,
    /// Known only as an owner, not (yet) observed through a watch.
    pub virtual_: bool,
}

impl Node {
    /// A node for an observed object.
    pub(crate) fn observed(identity: ObjectRef, owners: Vec<OwnerRef>) -> Self {
        Node {
            identity,
            owners,
            dependents: BTreeSet::new(),
            deleting_dependents: false,
            being_deleted: false,
            virtual_: false,
        }
    }

    /// A virtual node for an owner that has not been observed.
    pub(crate) fn virtual_owner(identity: ObjectRef) -> Self {
        Node {
            virtual_: true,
            ..Node::observed(identity, Vec::new())
        }
    }

    /// The object's uid.
    pub(crate) fn uid(&self) -> &str {
        &self.identity.uid
    }
}

/// Every node by uid (upstream `concurrentUIDToNode`; the collector keeps it behind one lock).
#[derive(Debug, Default, Clone)]
pub(crate) struct Graph {
    pub(crate) nodes: HashMap<String, Node>,
}

impl Graph {
    /// The node of `uid`.
    pub(crate) fn get(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    /// The dependents of `uid` that still exist in the graph.
    pub(crate) fn dependents(&self, uid: &str) -> Vec<&Node> {
        self.nodes
            .get(uid)
            .into_iter()
            .flat_map(|n| n.dependents.iter())
            .filter_map(|d| self.nodes.get(d))
            .collect()
    }

    /// Dependents whose reference to `uid` has `blockOwnerDeletion: true` (upstream
    /// `blockingDependents`).
    pub(crate) fn blocking_dependents(&self, uid: &str) -> Vec<&Node> {
        self.dependents(uid)
            .into_iter()
            .filter(|d| d.owners.iter().any(|r| r.uid == uid && r.blocks()))
            .collect()
    }

    /// Every broken link, for tests: a dependent listed by a node that does not name it as an
    /// owner, or an owner reference whose node does not list the dependent (upstream's tests'
    /// `verifyGraphInvariants`).
    #[cfg(test)]
    pub(crate) fn broken_links(&self) -> Vec<String> {
        let mut broken = Vec::new();
        for (uid, n) in &self.nodes {
            for d in &n.dependents {
                match self.nodes.get(d) {
                    Some(dep) if dep.owners.iter().any(|r| r.uid == *uid) => {}
                    Some(_) => broken.push(format!("{d} listed as a dependent of {uid}")),
                    None => broken.push(format!("{d} (dependent of {uid}) missing")),
                }
            }
            for r in &n.owners {
                if let Some(owner) = self.nodes.get(&r.uid)
                    && !owner.dependents.contains(uid)
                {
                    broken.push(format!("{} does not list its dependent {uid}", r.uid));
                }
            }
        }
        broken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(uid: &str, block: Option<bool>) -> OwnerRef {
        OwnerRef {
            api_version: "v1".into(),
            kind: "Parent".into(),
            name: uid.into(),
            uid: uid.into(),
            controller: None,
            block_owner_deletion: block,
        }
    }

    #[test]
    fn blocking_dependents_are_those_with_block_owner_deletion_true() {
        let mut g = Graph::default();
        let mut parent = Node::observed(owner("p", None).coordinates("ns"), Vec::new());
        for (uid, block) in [("a", Some(true)), ("b", Some(false)), ("c", None)] {
            parent.dependents.insert(uid.to_string());
            let child = Node::observed(
                ObjectRef {
                    uid: uid.into(),
                    ..ObjectRef::default()
                },
                vec![owner("p", block)],
            );
            g.nodes.insert(uid.into(), child);
        }
        parent.dependents.insert("gone".into());
        g.nodes.insert("p".into(), parent);
        let blocking: Vec<&str> = g.blocking_dependents("p").iter().map(|n| n.uid()).collect();
        assert_eq!(blocking, ["a"]);
        assert_eq!(
            g.dependents("p").len(),
            3,
            "a uid not in the graph is skipped"
        );
        assert_eq!(g.broken_links(), ["gone (dependent of p) missing"]);
    }

    #[test]
    fn coordinates_and_ordering() {
        let r = owner("u", Some(true));
        let c = r.coordinates("ns");
        assert!(r.matches(&c));
        assert!(!r.matches(&ObjectRef {
            name: "other".into(),
            ..c.clone()
        }));
        assert_eq!(c.to_string(), "[v1/Parent, namespace: ns, name: u, uid: u]");
        // kind sorts before apiVersion (upstream referenceLessThan)
        let a = ObjectRef {
            kind: "A".into(),
            api_version: "v2".into(),
            ..ObjectRef::default()
        };
        let b = ObjectRef {
            kind: "B".into(),
            api_version: "v1".into(),
            ..ObjectRef::default()
        };
        assert!(a < b);
        assert_eq!(OwnerRef::from(&r.to_api()), r);
    }
}
