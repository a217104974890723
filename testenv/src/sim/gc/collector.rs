//! The state the collector's graph builder and workers share: the graph, the owners known to
//! be absent, the REST mapper, the two work queues and the way back to the graph builder.

use kcm_workqueue::RateLimitingQueue;
use parking_lot::Mutex;
use tokio::sync::mpsc;

use super::absent_owners::AbsentOwnerCache;
use super::graph::Graph;
use super::graph_builder::GraphEvent;
use super::rest_mapper::RestMapper;

/// State shared by the graph builder and the workers.
pub(crate) struct Collector {
    pub(crate) client: kube::Client,
    pub(crate) graph: Mutex<Graph>,
    pub(crate) absent: Mutex<AbsentOwnerCache>,
    pub(crate) mapper: RestMapper,
    pub(crate) attempt_to_delete: RateLimitingQueue<String>,
    pub(crate) attempt_to_orphan: RateLimitingQueue<String>,
    pub(crate) graph_changes: mpsc::UnboundedSender<GraphEvent>,
    /// Write `OwnerRefInvalidNamespace` events.
    pub(crate) events: bool,
}
