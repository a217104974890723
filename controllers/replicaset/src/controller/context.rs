//! The state every part of the controller shares (the fields of upstream's
//! `ReplicaSetController`), and the parts it is built from.
//!
//! Every other file of `controller/` takes a `&Context`; this one imports none of them.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_controller::UIDTrackingControllerExpectations;
use kcm_controller::clock::SharedClock;
use kcm_controller::consistency::{ConsistencyStore, GroupResource};
use kcm_controller::pod_control::PodControl;
use kcm_controller::pod_view::PodView;
use kcm_informer::{Lister, ObjectKey};
use kcm_workqueue::RateLimitingQueue;

use crate::config::{QUEUE_NAME, ReplicaSetControllerConfig, ReplicaSetFeatures};

/// The ReplicaSet cache (`apps/replicasets`).
pub(crate) const REPLICASETS: GroupResource = GroupResource {
    group: "apps",
    resource: "replicasets",
};

/// The pod cache (`pods`).
pub(crate) const PODS: GroupResource = GroupResource {
    group: "",
    resource: "pods",
};

/// The parts a [`ReplicaSetController`](crate::ReplicaSetController) is built from:
/// [`ReplicaSetController::new`](crate::ReplicaSetController::new) takes them from the
/// informers and the API client; the unit tests fill them with fakes (a
/// `kcm_controller::testing::MockApi` client, `FakePodControl`).
pub(crate) struct ReplicaSetControllerParts {
    /// Cache of ReplicaSets (an informer's lister).
    pub(crate) rs_lister: Lister<ReplicaSet>,
    /// Cache of pods.
    pub(crate) pod_lister: Lister<PodView>,
    /// Live ReplicaSet reads and status writes.
    pub(crate) client: kube::Client,
    /// Pod creates/deletes/patches (with events).
    pub(crate) pod_control: Arc<dyn PodControl>,
    /// Clock for availability and expectations.
    pub(crate) clock: SharedClock,
    /// Stale-controller consistency: the store the sync consults and records its status writes
    /// in (`None` turns the check off whatever the feature gate says). Pod writes are recorded
    /// by whoever owns `pod_control` (see
    /// `pod_write_recorder`).
    pub(crate) consistency: Option<Arc<ConsistencyStore>>,
}

impl fmt::Debug for ReplicaSetControllerParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicaSetControllerParts")
            .finish_non_exhaustive()
    }
}

/// Caches, API client, pod control, expectations, queue, settings, clock, and the writes each
/// ReplicaSet's next sync waits for.
pub(crate) struct Context {
    pub(crate) rs_lister: Lister<ReplicaSet>,
    pub(crate) pod_lister: Lister<PodView>,
    /// Live reads and the status writes of [`writes`](super::writes).
    pub(crate) client: kube::Client,
    pub(crate) pod_control: Arc<dyn PodControl>,
    pub(crate) expectations: UIDTrackingControllerExpectations,
    pub(crate) queue: RateLimitingQueue<ObjectKey>,
    pub(crate) burst_replicas: usize,
    pub(crate) features: ReplicaSetFeatures,
    pub(crate) clock: SharedClock,
    /// The writes each ReplicaSet's next sync waits for (`None`: gate off).
    pub(crate) consistency: Option<Arc<ConsistencyStore>>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("queue", &self.queue)
            .field("burst_replicas", &self.burst_replicas)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The context over `parts`, with the `replicaset` queue (default rate limiter). Must be
    /// called inside a tokio runtime (the queue's timer).
    pub(crate) fn new(
        parts: ReplicaSetControllerParts,
        config: &ReplicaSetControllerConfig,
    ) -> Self {
        Self {
            rs_lister: parts.rs_lister,
            pod_lister: parts.pod_lister,
            client: parts.client,
            pod_control: parts.pod_control,
            expectations: UIDTrackingControllerExpectations::with_clock(parts.clock.clone()),
            queue: RateLimitingQueue::builder().name(QUEUE_NAME).build(),
            burst_replicas: config.burst_replicas,
            features: config.features,
            clock: parts.clock,
            consistency: parts.consistency,
        }
    }

    /// `enqueueRS`: the ReplicaSet's key into the queue.
    pub(crate) fn enqueue(&self, rs: &ReplicaSet) {
        self.queue.add(ObjectKey::from_meta(&rs.metadata));
    }
}
