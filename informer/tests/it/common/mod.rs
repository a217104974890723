//! Helpers shared by the informer integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kcm_informer::{
    BackoffConfig, CancellationToken, DeletedObject, InformerObject, ResourceEventHandler,
    SharedIndexInformer,
};
use kcm_testenv::TestCluster;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use parking_lot::Mutex;

pub const NS: &str = "default";

/// A test cluster of the API server alone.
pub async fn cluster() -> TestCluster {
    TestCluster::builder()
        .start()
        .await
        .expect("test cluster starts")
}

/// Runs `informer` on a task of its own until `cancel`.
pub fn spawn_run<K: InformerObject>(informer: &SharedIndexInformer<K>, cancel: &CancellationToken) {
    let informer = informer.clone();
    let cancel = cancel.clone();
    tokio::spawn(async move { informer.run(cancel).await });
}

/// Runs `informer` until the returned token is cancelled, once its cache synced within
/// `timeout`.
pub async fn run_synced<K: InformerObject>(
    informer: &SharedIndexInformer<K>,
    timeout: Duration,
) -> CancellationToken {
    let cancel = CancellationToken::new();
    spawn_run(informer, &cancel);
    assert!(informer.wait_for_cache_sync(Some(timeout), &cancel).await);
    cancel
}

pub fn cm(name: &str, value: &str) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(value.to_string()),
            ..LeaseSpec::default()
        }),
    }
}

pub async fn create_many(api: &Api<Lease>, prefix: &str, n: usize) {
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            let name = format!("{prefix}-{i:05}");
            async move { api.create(&PostParams::default(), &cm(&name, "0")).await }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await
        .expect("create");
}

pub fn fast_backoff() -> BackoffConfig {
    BackoffConfig {
        initial: Duration::from_millis(20),
        cap: Duration::from_millis(100),
        ..BackoffConfig::default()
    }
}

pub fn key(o: &Lease) -> String {
    format!(
        "{}/{}",
        o.metadata.namespace.as_deref().unwrap_or_default(),
        o.metadata.name.as_deref().unwrap_or_default()
    )
}

pub fn rv(o: &Lease) -> String {
    o.metadata.resource_version.clone().unwrap_or_default()
}

/// key → resourceVersion on the server.
pub async fn server_state(api: &Api<Lease>) -> BTreeMap<String, String> {
    api.list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|o| (key(o), rv(o)))
        .collect()
}

/// key → resourceVersion in an informer's cache.
pub fn cache_state(store: &kcm_informer::Store<Lease>) -> BTreeMap<String, String> {
    store.list().iter().map(|o| (key(o), rv(o))).collect()
}

/// One notification as seen by a handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    Add {
        key: String,
        rv: String,
        initial: bool,
    },
    Update {
        key: String,
        old_rv: String,
        new_rv: String,
    },
    Delete {
        key: String,
        rv: String,
        tombstone: bool,
    },
}

/// Records every notification and maintains the handler's view (key → RV).
#[derive(Clone, Default)]
pub struct Recorder {
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub view: Arc<Mutex<BTreeMap<String, String>>>,
}

impl Recorder {
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().clone()
    }
    pub fn view(&self) -> BTreeMap<String, String> {
        self.view.lock().clone()
    }
}

impl ResourceEventHandler<Lease> for Recorder {
    fn on_add(&self, obj: &Arc<Lease>, initial: bool) {
        self.view.lock().insert(key(obj), rv(obj));
        self.seen.lock().push(Seen::Add {
            key: key(obj),
            rv: rv(obj),
            initial,
        });
    }
    fn on_update(&self, old: &Arc<Lease>, new: &Arc<Lease>) {
        self.view.lock().insert(key(new), rv(new));
        self.seen.lock().push(Seen::Update {
            key: key(new),
            old_rv: rv(old),
            new_rv: rv(new),
        });
    }
    fn on_delete(&self, obj: DeletedObject<Lease>) {
        let k = match &obj {
            DeletedObject::Object(o) => key(o),
            DeletedObject::Unknown(t) => t.key.to_string(),
        };
        self.view.lock().remove(&k);
        self.seen.lock().push(Seen::Delete {
            key: k,
            rv: rv(obj.object()),
            tombstone: obj.is_tombstone(),
        });
    }
}

/// Polls `cond` every 10 ms; panics after 30 s (a deadlock guard, not a timing assertion).
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
