//! Test fixtures shared by the unit tests: upstream's `newReplicaSet` /
//! `newPod` helpers, a fake ReplicaSet client and a controller harness over
//! plain stores with a `FakePodControl`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::jiff::Timestamp;
use kcm_controller::ControlError;
use kcm_controller::clock::FakeClock;
use kcm_controller::pod::{PodConditionView, PodView};
use kcm_controller::pod_control::FakePodControl;
use kcm_informer::{Lister, Store};
use parking_lot::Mutex;

use crate::client::ReplicaSetClient;
use crate::config::{ReplicaSetControllerConfig, ReplicaSetFeatures};
use crate::pod_index::{POD_CONTROLLER_UID_INDEX, pod_controller_uid_index_fn};
use crate::replica_set::{ReplicaSetController, ReplicaSetControllerParts};

static UIDS: AtomicU64 = AtomicU64::new(1);

/// A fresh unique UID.
pub(crate) fn fresh_uid() -> String {
    format!("uid-{}", UIDS.fetch_add(1, Ordering::Relaxed))
}

pub(crate) fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The test epoch used as "now" by the harness clock.
pub(crate) fn t0() -> Timestamp {
    Timestamp::from_second(1_700_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Upstream `newReplicaSet`: `default/foobar`, fresh UID, controlled by UID
/// "123", RV "18", template labels `{name: foo, type: production}`.
pub(crate) fn new_replica_set(replicas: i32, selector: &[(&str, &str)]) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some("foobar".into()),
            namespace: Some("default".into()),
            uid: Some(fresh_uid()),
            resource_version: Some("18".into()),
            owner_references: Some(vec![OwnerReference {
                uid: "123".into(),
                controller: Some(true),
                ..Default::default()
            }]),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels(selector)),
                ..Default::default()
            },
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(&[("name", "foo"), ("type", "production")])),
                    ..Default::default()
                }),
                spec: None,
            }),
            min_ready_seconds: None,
        },
        status: None,
    }
}

/// Upstream `newPod`: labels = the RS selector's matchLabels; `owned` adds a
/// controller reference to `rs`; `Running` pods get Ready=True at `ready_at`.
pub(crate) fn new_pod(
    name: &str,
    rs: &ReplicaSet,
    phase: &str,
    ready_at: Option<Timestamp>,
    owned: bool,
) -> PodView {
    let mut pod = PodView::default();
    pod.metadata.name = Some(name.into());
    pod.metadata.namespace = rs.metadata.namespace.clone();
    pod.metadata.uid = Some(fresh_uid());
    pod.metadata.resource_version = Some("1".into());
    pod.metadata.labels = rs.spec.selector.match_labels.clone();
    pod.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: rs.metadata.name.clone().unwrap_or_default(),
        uid: if owned {
            rs.metadata.uid.clone().unwrap_or_default()
        } else {
            "other".into()
        },
        controller: owned.then_some(true),
        ..Default::default()
    }]);
    pod.status.phase = Some(phase.into());
    if phase == "Running" {
        pod.status.conditions = vec![PodConditionView {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: ready_at.map(Time),
        }];
    }
    pod
}

/// A fake [`ReplicaSetClient`]: GET answers the stored copy (or NotFound), status
/// PUTs are recorded and answer the object (or `update_error`), without
/// `status.terminatingReplicas` when `drops_terminating_replicas` (a server with the gate off).
#[derive(Default)]
pub(crate) struct FakeRsClient {
    pub stored: Mutex<Option<ReplicaSet>>,
    pub updates: Mutex<Vec<ReplicaSet>>,
    pub gets: Mutex<Vec<String>>,
    pub update_error: Mutex<Option<String>>,
    pub drops_terminating_replicas: Mutex<bool>,
}

impl std::fmt::Debug for FakeRsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeRsClient").finish_non_exhaustive()
    }
}

impl ReplicaSetClient for FakeRsClient {
    fn get<'a>(
        &'a self,
        _namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<ReplicaSet, ControlError>> {
        Box::pin(async move {
            self.gets.lock().push(name.to_string());
            self.stored
                .lock()
                .clone()
                .ok_or_else(|| ControlError::not_found("replicasets.apps", name))
        })
    }

    fn update_status<'a>(
        &'a self,
        rs: &'a ReplicaSet,
    ) -> BoxFuture<'a, Result<ReplicaSet, ControlError>> {
        Box::pin(async move {
            self.updates.lock().push(rs.clone());
            if let Some(e) = &*self.update_error.lock() {
                return Err(ControlError::api(500, "InternalError", e.clone()));
            }
            let mut stored = rs.clone();
            if *self.drops_terminating_replicas.lock()
                && let Some(s) = stored.status.as_mut()
            {
                s.terminating_replicas = None;
            }
            Ok(stored)
        })
    }
}

/// A controller over plain stores with fakes.
pub(crate) struct Harness {
    pub controller: ReplicaSetController,
    pub rs_store: Store<ReplicaSet>,
    pub pod_store: Store<PodView>,
    pub pods: Arc<FakePodControl>,
    pub client: Arc<FakeRsClient>,
    pub clock: FakeClock,
}

impl Harness {
    pub(crate) fn new(burst: usize) -> Self {
        Self::with_consistency(burst, None)
    }

    /// A harness whose syncs consult (and record their status writes in) `consistency`.
    pub(crate) fn with_consistency(
        burst: usize,
        consistency: Option<Arc<kcm_controller::consistency::ConsistencyStore>>,
    ) -> Self {
        Self::with_config(
            consistency,
            ReplicaSetControllerConfig {
                burst_replicas: burst,
                ..Default::default()
            },
        )
    }

    /// A harness with the given feature switches (burst 500, no consistency store).
    pub(crate) fn with_features(features: ReplicaSetFeatures) -> Self {
        Self::with_config(
            None,
            ReplicaSetControllerConfig {
                features,
                ..Default::default()
            },
        )
    }

    fn with_config(
        consistency: Option<Arc<kcm_controller::consistency::ConsistencyStore>>,
        config: ReplicaSetControllerConfig,
    ) -> Self {
        let rs_store = Store::new();
        let pod_store = Store::new();
        pod_store
            .add_indexer(POD_CONTROLLER_UID_INDEX, pod_controller_uid_index_fn())
            .expect("index");
        let pods = Arc::new(FakePodControl::default());
        let client = Arc::new(FakeRsClient::default());
        let clock = FakeClock::new(t0());
        let parts = ReplicaSetControllerParts {
            rs_lister: Lister::new(rs_store.clone()),
            pod_lister: Lister::new(pod_store.clone()),
            rs_client: client.clone(),
            pod_control: pods.clone(),
            clock: Arc::new(clock.clone()),
            consistency,
        };
        Self {
            controller: ReplicaSetController::from_parts(parts, config),
            rs_store,
            pod_store,
            pods,
            client,
            clock,
        }
    }

    /// Puts `rs` in the cache and makes the fake API return it.
    pub(crate) fn add_rs(&self, rs: &ReplicaSet) {
        self.rs_store.add(Arc::new(rs.clone()));
        *self.client.stored.lock() = Some(rs.clone());
    }

    pub(crate) fn add_pod(&self, pod: PodView) -> Arc<PodView> {
        let pod = Arc::new(pod);
        self.pod_store.add(pod.clone());
        pod
    }

    /// (creates, deletes, patches) recorded by the fake pod control.
    pub(crate) fn cdp(&self) -> (usize, usize, usize) {
        let s = self.pods.state();
        (s.templates.len(), s.delete_pod_names.len(), s.patches.len())
    }

    /// Drains the queue without blocking, returning the keys in order.
    pub(crate) fn drain_queue(&self) -> Vec<String> {
        let q = self.controller.queue();
        let mut keys = Vec::new();
        while let Some(k) = q.try_get() {
            q.done(&k);
            keys.push(k);
        }
        keys
    }
}

/// `n` pods `<prefix>0…` controlled by `rs`, labelled with its selector.
pub(crate) fn pod_list(n: usize, phase: &str, rs: &ReplicaSet, prefix: &str) -> Vec<PodView> {
    (0..n)
        .map(|i| new_pod(&format!("{prefix}{i}"), rs, phase, None, true))
        .collect()
}
