//! Test fixtures shared by the unit tests: upstream's `newReplicaSet` /
//! `newPod` helpers, a fake ReplicaSet client and a controller harness over
//! plain stores with a `FakePodControl`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::jiff::Timestamp;
use kcm_controller::clock::FakeClock;
use kcm_controller::pod_control::FakePodControl;
use kcm_controller::pod_view::{PodConditionView, PodView};
use kcm_controller::testing::{MockApi, MockRequest, MockResponse};
use kcm_informer::{Lister, ObjectKey, Store};
use parking_lot::Mutex;

use crate::config::{ReplicaSetControllerConfig, ReplicaSetFeatures};
use crate::controller::{ReplicaSetController, ReplicaSetControllerParts};
use kcm_controller::label_index::POD_TEMPLATE_HASH_INDEX;
use kcm_controller::owner_index::{CONTROLLER_UID_INDEX, controller_uid_index_fn};

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
/// The API server as the ReplicaSet controller sees it (uncached GETs of the ReplicaSet and
/// PUTs of its `/status`), behind a real `kube::Client` ([`FakeRsApi::client`]).
#[derive(Default)]
pub(crate) struct FakeRsApi {
    /// What a GET returns (`None`: 404 NotFound).
    pub stored: Mutex<Option<ReplicaSet>>,
    /// Every ReplicaSet PUT to `/status`, in order.
    pub updates: Mutex<Vec<ReplicaSet>>,
    /// The names of every GET, in order.
    pub gets: Mutex<Vec<String>>,
    /// Makes every status PUT fail with a 500 and this message.
    pub update_error: Mutex<Option<String>>,
    /// Answers status PUTs without `terminatingReplicas`, like a server that does not store it.
    pub drops_terminating_replicas: Mutex<bool>,
}

impl std::fmt::Debug for FakeRsApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeRsApi").finish_non_exhaustive()
    }
}

impl FakeRsApi {
    /// A client whose requests this fake answers.
    pub(crate) fn client(self: &Arc<Self>) -> kube::Client {
        let this = Arc::clone(self);
        MockApi::new(move |req| this.answer(req)).client()
    }

    fn answer(&self, req: &MockRequest) -> MockResponse {
        let mut segments = req.path.rsplit('/');
        match (req.method.as_str(), segments.next()) {
            ("GET", Some(name)) => {
                self.gets.lock().push(name.to_string());
                match self.stored.lock().clone() {
                    Some(rs) => MockResponse::json(200, to_json(&rs)),
                    None => MockResponse::status(
                        404,
                        "NotFound",
                        &format!("replicasets.apps \"{name}\" not found"),
                        None,
                    ),
                }
            }
            ("PUT", Some("status")) => {
                let rs: ReplicaSet =
                    serde_json::from_value(req.body.clone()).expect("a ReplicaSet body");
                self.updates.lock().push(rs.clone());
                if let Some(e) = &*self.update_error.lock() {
                    return MockResponse::status(500, "InternalError", e, None);
                }
                let mut stored = rs;
                if *self.drops_terminating_replicas.lock()
                    && let Some(s) = stored.status.as_mut()
                {
                    s.terminating_replicas = None;
                }
                MockResponse::json(200, to_json(&stored))
            }
            _ => MockResponse::status(405, "MethodNotAllowed", &req.path, None),
        }
    }
}

fn to_json(rs: &ReplicaSet) -> serde_json::Value {
    let mut v = serde_json::to_value(rs).expect("serializable");
    v["apiVersion"] = "apps/v1".into();
    v["kind"] = "ReplicaSet".into();
    v
}

/// The key of [`new_replica_set`]'s ReplicaSet, `default/foobar`.
pub(crate) fn key() -> ObjectKey {
    ObjectKey::new("default", "foobar")
}

/// A controller over plain stores with fakes.
pub(crate) struct Harness {
    pub controller: ReplicaSetController,
    pub rs_store: Store<ReplicaSet>,
    pub pod_store: Store<PodView>,
    pub pods: Arc<FakePodControl>,
    pub api: Arc<FakeRsApi>,
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
        // The indexes the controller registers on the informers.
        let rs_store = Store::new();
        rs_store
            .add_indexer(CONTROLLER_UID_INDEX, controller_uid_index_fn())
            .expect("index");
        let pod_store = Store::new();
        pod_store
            .add_indexer(CONTROLLER_UID_INDEX, controller_uid_index_fn())
            .expect("index");
        pod_store
            .add_indexer(
                POD_TEMPLATE_HASH_INDEX.name,
                POD_TEMPLATE_HASH_INDEX.index_fn(),
            )
            .expect("index");
        let pods = Arc::new(FakePodControl::default());
        let api = Arc::new(FakeRsApi::default());
        let clock = FakeClock::new(t0());
        let parts = ReplicaSetControllerParts {
            rs_lister: Lister::new(rs_store.clone()),
            pod_lister: Lister::new(pod_store.clone()),
            client: api.client(),
            pod_control: pods.clone(),
            clock: Arc::new(clock.clone()),
            consistency,
        };
        Self {
            controller: ReplicaSetController::from_parts(parts, config),
            rs_store,
            pod_store,
            pods,
            api,
            clock,
        }
    }

    /// Puts `rs` in the cache and makes the fake API return it.
    pub(crate) fn add_rs(&self, rs: &ReplicaSet) {
        self.rs_store.add(Arc::new(rs.clone()));
        *self.api.stored.lock() = Some(rs.clone());
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
            keys.push(k.to_string());
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
