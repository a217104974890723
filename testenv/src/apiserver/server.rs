//! [`ApiServer`]: the state every handler works on (storage, counters, the request hook, the
//! watch settings). Serving it over HTTP is [`dispatch`](super::dispatch)'s part.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::audit::AuditLog;
use super::hook::RequestHook;
use super::metrics::Metrics;
use crate::registry::ServedResources;
use crate::storage::Store;

/// The API server state shared by every connection.
#[derive(Debug)]
pub struct ApiServer {
    /// Object storage.
    pub store: Store,
    /// Request counters.
    pub metrics: Metrics,
    /// Optional fault-injection hook.
    pub hook: parking_lot::RwLock<Option<Arc<dyn RequestHook>>>,
    /// How often watchers get a bookmark.
    pub bookmark_interval: Duration,
    /// Listening address.
    pub addr: SocketAddr,
    /// Cancelled on shutdown; ends watches and the accept loop.
    pub shutdown: CancellationToken,
    /// Whether the built-in namespace cleanup runs after a namespace DELETE (a simulation
    /// with its own namespace controller turns this off).
    pub namespace_cleanup: AtomicBool,
    /// Extra delay before each watch event is sent, in milliseconds (fault injection).
    pub watch_delay_ms: AtomicU64,
    /// The resources served now: built-in and custom (from the stored CRDs).
    pub crds: ServedResources,
    /// Serializes the CRD controllers' passes.
    pub crd_controller: parking_lot::Mutex<()>,
    /// Uids of the deleted CRDs whose objects are being deleted.
    pub crd_finalizing: parking_lot::Mutex<HashSet<String>>,
    /// Where the answered writes are logged, if anywhere.
    pub audit: Option<AuditLog>,
    /// Whether every namespace gets its `default` ServiceAccount and `kube-root-ca.crt`
    /// ConfigMap from the server ([`cluster_objects`](super::cluster_objects)); off when a real
    /// kube-controller-manager makes them.
    pub namespace_defaults: AtomicBool,
    /// The key ServiceAccount tokens are signed with ([`tokens`](super::tokens)).
    pub token_key: [u8; 32],
}
