//! Which namespaces a controller may sync now: the active shard of a sharded controller manager
//! (`docs/sharding.md`). A worker takes a key of a namespace outside the gate and drops it
//! without syncing ([`WorkerPool::gate`](crate::worker::WorkerPool::gate)); the namespace's
//! objects are delivered again when it becomes the controller's own.

use std::fmt;
use std::sync::Arc;

/// A predicate over namespace names, shared and cheap to clone. Two gates are equal when they
/// are the same predicate.
///
/// ```
/// use kcm_controller::NamespaceGate;
///
/// let gate = NamespaceGate::new(|ns| ns.starts_with("team-a"));
/// assert!(gate.allows("team-a-prod"));
/// assert!(!gate.allows("team-b"));
/// assert_eq!(gate, gate.clone());
/// ```
#[derive(Clone)]
pub struct NamespaceGate(Arc<dyn Fn(&str) -> bool + Send + Sync>);

impl NamespaceGate {
    /// A gate allowing the namespaces `allows` accepts.
    pub fn new(allows: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        NamespaceGate(Arc::new(allows))
    }

    /// Whether keys of `namespace` may be synced now.
    pub fn allows(&self, namespace: &str) -> bool {
        (self.0)(namespace)
    }
}

impl fmt::Debug for NamespaceGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NamespaceGate")
    }
}

impl PartialEq for NamespaceGate {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for NamespaceGate {}
