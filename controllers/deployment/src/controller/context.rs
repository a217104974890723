//! The state every part of the controller shares (the fields of upstream's
//! `DeploymentController`), and its wiring to the informers.
//!
//! Every other file of `controller/` takes a `&Context`; this one imports none of them.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_controller::PodView;
use kcm_controller::clock::SharedClock;
use kcm_controller::consistency::{ConsistencyStore, GroupResource};
use kcm_controller::event_recorder::{EventRecorder, object_reference};
use kcm_controller::rs_control::{KubeReplicaSetControl, ReplicaSetControl};
use kcm_informer::{Lister, ObjectKey, SharedIndexInformer};
use kcm_workqueue::{RateLimitingQueue, default_controller_rate_limiter};

use crate::config::{DeploymentControllerConfig, QUEUE_NAME};
use crate::events::DeploymentEvent;
use crate::features::FeatureGates;

/// The resource of the controller's own writes it waits for its cache to see.
pub(crate) const DEPLOYMENTS: GroupResource = GroupResource {
    group: "apps",
    resource: "deployments",
};

/// Caches, queue, event recorder, ReplicaSet control, clock, feature gates, and the record of
/// the controller's own Deployment writes.
pub(crate) struct Context {
    /// Live reads and every write of [`writes`](super::writes).
    pub(crate) client: kube::Client,
    pub(crate) d_lister: Lister<Deployment>,
    pub(crate) rs_lister: Lister<ReplicaSet>,
    pub(crate) pod_lister: Lister<PodView>,
    pub(crate) queue: RateLimitingQueue<ObjectKey>,
    pub(crate) recorder: EventRecorder,
    /// Adopt/release patches of ReplicaSets.
    pub(crate) rs_control: Arc<dyn ReplicaSetControl>,
    pub(crate) clock: SharedClock,
    pub(crate) features: FeatureGates,
    /// The controller's own Deployment writes, so that no sync decides (and writes) from a
    /// Deployment cache that does not show the previous write yet ([`Context::wrote`]).
    pub(crate) own_writes: Arc<ConsistencyStore>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("queue", &self.queue)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The context over the three informers: their listers, the `deployment` queue (default
    /// controller rate limiter), ReplicaSet control over `client`, and the own-writes store
    /// reading the Deployment cache's resourceVersion.
    pub(crate) fn new(
        client: kube::Client,
        d_informer: &SharedIndexInformer<Deployment>,
        rs_informer: &SharedIndexInformer<ReplicaSet>,
        pod_informer: &SharedIndexInformer<PodView>,
        recorder: EventRecorder,
        config: &DeploymentControllerConfig,
    ) -> Self {
        let queue = RateLimitingQueue::builder()
            .name(QUEUE_NAME)
            .rate_limiter(default_controller_rate_limiter())
            .build();
        let cache = d_informer.clone();
        let own_writes = Arc::new(ConsistencyStore::new(vec![(
            DEPLOYMENTS,
            Arc::new(move || cache.store_resource_version()),
        )]));
        Self {
            client: client.clone(),
            d_lister: d_informer.lister(),
            rs_lister: rs_informer.lister(),
            pod_lister: pod_informer.lister(),
            queue,
            recorder,
            rs_control: Arc::new(KubeReplicaSetControl::new(client)),
            clock: config.clock.clone(),
            features: config.features,
            own_writes,
        }
    }

    /// Records a successful write of `written` (the object the API server returned), so that
    /// the next sync of it waits until the Deployment informer has seen it.
    pub(crate) fn wrote(&self, written: &Deployment) {
        let meta = &written.metadata;
        if let (Some(uid), Some(rv)) = (meta.uid.as_deref(), meta.resource_version.as_deref()) {
            self.own_writes.wrote_at(
                meta.namespace.as_deref().unwrap_or_default(),
                meta.name.as_deref().unwrap_or_default(),
                uid,
                DEPLOYMENTS,
                rv,
            );
        }
    }

    /// `enqueue`: the Deployment's key into the queue.
    pub(crate) fn enqueue(&self, d: &Deployment) {
        self.queue.add(ObjectKey::from_meta(&d.metadata));
    }

    /// `enqueueRateLimited`.
    pub(crate) fn enqueue_rate_limited(&self, d: &Deployment) {
        self.queue
            .add_rate_limited(ObjectKey::from_meta(&d.metadata));
    }

    /// `enqueueAfter`.
    pub(crate) fn enqueue_after(&self, d: &Deployment, after: Duration) {
        self.queue
            .add_after(ObjectKey::from_meta(&d.metadata), after);
    }

    /// Records `event` about `d`.
    pub(crate) fn emit(&self, d: &Deployment, event: &DeploymentEvent) {
        self.recorder.record(
            &object_reference(d),
            event.type_,
            event.reason,
            event.message.clone(),
        );
    }
}
