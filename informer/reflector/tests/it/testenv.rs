//! The reflector against kcm-testenv over real HTTP: paged initial sync, ordered updates and
//! deletes, relist tombstones after a watch outage, 410 after compaction, streaming list and its
//! fallback.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::{Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};

use kcm_reflector::{
    ApiListerWatcher, CancellationToken, CountingMetrics, DeletedObject, Delta, Reflector,
    ReflectorConfig, list_pages,
};
use kcm_testenv::{ApiError, HookDecision, RequestHook, RequestInfo};
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};

use crate::common::{cluster, fast_backoff};

const NS: &str = "default";

fn cm(name: &str, value: &str) -> Lease {
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

async fn create_many(api: &Api<Lease>, n: usize) {
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &cm(&format!("cm-{i:05}"), "0"))
                    .await
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await
        .expect("create");
}

/// key → resourceVersion of what the server holds now.
async fn server_state(api: &Api<Lease>) -> BTreeMap<String, String> {
    api.list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .map(|o| {
            (
                format!("{NS}/{}", o.metadata.name.unwrap_or_default()),
                o.metadata.resource_version.unwrap_or_default(),
            )
        })
        .collect()
}

/// Applies deltas to a key → resourceVersion map (what a cache fed by the stream would hold).
fn apply(state: &mut BTreeMap<String, String>, d: &Delta<Lease>) {
    let key = |o: &Lease| format!("{NS}/{}", o.metadata.name.clone().unwrap_or_default());
    let rv = |o: &Lease| o.metadata.resource_version.clone().unwrap_or_default();
    match d {
        Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o) | Delta::Sync(o) => {
            state.insert(key(o), rv(o));
        }
        Delta::Deleted(DeletedObject::Object(o)) => {
            state.remove(&key(o));
        }
        Delta::Deleted(DeletedObject::Unknown(t)) => {
            state.remove(&t.key.to_string());
        }
        Delta::ListComplete { .. } => {}
    }
}

async fn next_delta(s: &mut (impl Stream<Item = Delta<Lease>> + Unpin)) -> Delta<Lease> {
    tokio::time::timeout(Duration::from_secs(30), s.next())
        .await
        .expect("a delta within 30 s (deadlock guard)")
        .expect("stream open")
}

/// Reads deltas up to and including the next `ListComplete`.
async fn until_list_complete(
    s: &mut (impl Stream<Item = Delta<Lease>> + Unpin),
) -> Vec<Delta<Lease>> {
    let mut out = Vec::new();
    loop {
        let d = next_delta(s).await;
        let done = matches!(d, Delta::ListComplete { .. });
        out.push(d);
        if done {
            return out;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initial_sync_of_thousands_of_objects_is_paged() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    create_many(&api, 2_500).await;

    let lw = ApiListerWatcher::<Lease>::new(cluster.client(), Some(NS));
    let paged = list_pages(&lw, "", 500).await.expect("paged list");
    assert!(
        paged.paginated,
        "a consistent list with limit=500 over 2500 objects must be paginated"
    );
    assert_eq!(paged.items.len(), 2_500);

    let cancel = CancellationToken::new();
    let reflector = Reflector::<Lease>::new(cluster.client(), Some(NS), ReflectorConfig::default());
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
    let first = until_list_complete(&mut deltas).await;
    let mut state = BTreeMap::new();
    for d in &first {
        assert!(
            matches!(d, Delta::Replaced(_) | Delta::ListComplete { .. }),
            "{d:?}"
        );
        apply(&mut state, d);
    }
    assert_eq!(state, server_state(&api).await);
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_and_deletes_are_observed_in_order_with_the_final_state() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    let cancel = CancellationToken::new();
    let reflector = Reflector::<Lease>::new(cluster.client(), Some(NS), ReflectorConfig::default());
    let last_rv = reflector.last_sync_resource_version();
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
    until_list_complete(&mut deltas).await;

    let created = api
        .create(&PostParams::default(), &cm("x", "1"))
        .await
        .expect("create");
    let mut changed = created.clone();
    changed.spec = Some(LeaseSpec {
        holder_identity: Some("2".to_string()),
        ..LeaseSpec::default()
    });
    let updated = api
        .replace("x", &PostParams::default(), &changed)
        .await
        .expect("update");
    api.delete("x", &DeleteParams::default())
        .await
        .expect("delete");

    let rv = |o: &Lease| o.metadata.resource_version.clone().unwrap_or_default();
    match next_delta(&mut deltas).await {
        Delta::Added(o) => assert_eq!(rv(&o), rv(&created)),
        other => panic!("expected Added, got {other:?}"),
    }
    match next_delta(&mut deltas).await {
        Delta::Updated(o) => {
            assert_eq!(rv(&o), rv(&updated));
            assert_eq!(
                o.spec.as_ref().and_then(|s| s.holder_identity.as_deref()),
                Some("2")
            );
        }
        other => panic!("expected Updated, got {other:?}"),
    }
    match next_delta(&mut deltas).await {
        Delta::Deleted(DeletedObject::Object(o)) => {
            assert_eq!(o.metadata.name.as_deref(), Some("x"));
            assert_eq!(
                o.spec.as_ref().and_then(|s| s.holder_identity.as_deref()),
                Some("2")
            );
        }
        other => panic!("expected Deleted, got {other:?}"),
    }
    assert!(!last_rv.get().is_empty());
    cancel.cancel();
}

/// Fails list and watch of configmaps while `on`.
#[derive(Debug, Default)]
struct Outage {
    on: AtomicBool,
    verbs: Vec<&'static str>,
    /// Requests refused so far.
    refused: std::sync::atomic::AtomicUsize,
}

impl Outage {
    fn new(verbs: &[&'static str]) -> Arc<Self> {
        Arc::new(Self {
            on: AtomicBool::new(false),
            verbs: verbs.to_vec(),
            refused: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Waits until a request was refused: the reflector's previous watch has ended for sure.
    async fn wait_for_a_refusal(&self) {
        for _ in 0..500 {
            if self.refused.load(Ordering::SeqCst) > 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the reflector never retried during the outage");
    }
}

impl RequestHook for Outage {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        if self.on.load(Ordering::SeqCst)
            && req.resource == "leases"
            && self.verbs.contains(&req.verb)
        {
            self.refused.fetch_add(1, Ordering::SeqCst);
            HookDecision::Fail {
                // Not 429/503/504: kube-client retries those itself, up to 15 times.
                error: ApiError::new(500, "InternalError", "injected outage"),
                retry_after: None,
            }
        } else {
            HookDecision::Continue
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relist_after_a_watch_outage_yields_tombstones_with_last_known_state_and_adds() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    for n in ["a", "b", "c"] {
        api.create(&PostParams::default(), &cm(n, "1"))
            .await
            .expect("create");
    }
    let outage = Outage::new(&["list", "watch"]);
    cluster.env().set_hook(Some(outage.clone()));
    let cancel = CancellationToken::new();
    let config = ReflectorConfig::default().backoff(fast_backoff());
    let reflector = Reflector::<Lease>::new(cluster.client(), Some(NS), config);
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
    let mut state = BTreeMap::new();
    for d in until_list_complete(&mut deltas).await {
        apply(&mut state, &d);
    }
    let b_before = state.get("default/b").cloned().expect("b cached");

    // The watch goes down and stays down while objects change.
    outage.on.store(true, Ordering::SeqCst);
    cluster.env().drop_watches();
    // Change nothing before the old watch is gone: an event it still delivered would arrive as
    // a watch delta instead of through the relist under test.
    outage.wait_for_a_refusal().await;
    api.delete("b", &DeleteParams::default())
        .await
        .expect("delete b");
    api.create(&PostParams::default(), &cm("d", "1"))
        .await
        .expect("create d");
    let mut a = api.get("a").await.expect("get a");
    a.spec = Some(LeaseSpec {
        holder_identity: Some("2".to_string()),
        ..LeaseSpec::default()
    });
    api.replace("a", &PostParams::default(), &a)
        .await
        .expect("update a");
    cluster.env().compact();
    outage.on.store(false, Ordering::SeqCst);

    let relist = until_list_complete(&mut deltas).await;
    let mut tombstones = Vec::new();
    let mut replaced = Vec::new();
    for d in &relist {
        match d {
            Delta::Deleted(DeletedObject::Unknown(t)) => {
                assert!(
                    replaced.is_empty(),
                    "tombstones come before replaced objects"
                );
                tombstones.push((
                    t.key.to_string(),
                    t.obj.metadata.resource_version.clone().unwrap_or_default(),
                ));
            }
            Delta::Replaced(o) => replaced.push(o.metadata.name.clone().unwrap_or_default()),
            Delta::ListComplete { .. } => {}
            other => panic!("unexpected delta in a relist: {other:?}"),
        }
        apply(&mut state, d);
    }
    assert_eq!(tombstones, [("default/b".to_string(), b_before)]);
    replaced.sort();
    assert_eq!(replaced, ["a", "c", "d"]);
    assert_eq!(state, server_state(&api).await);
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_forces_a_relist_and_the_cache_matches_the_server() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    create_many(&api, 50).await;
    let metrics = Arc::new(CountingMetrics::default());
    let cancel = CancellationToken::new();
    let config = ReflectorConfig::default()
        .backoff(fast_backoff())
        .metrics(metrics.clone());
    let reflector = Reflector::<Lease>::new(cluster.client(), Some(NS), config);
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
    let mut state = BTreeMap::new();
    for d in until_list_complete(&mut deltas).await {
        apply(&mut state, &d);
    }
    // A compaction alone leaves the open watch alone (as kube-apiserver's watch cache does); the
    // watch dropped after it resumes from a compacted revision, gets 410 and relists.
    cluster.env().compact();
    cluster.env().drop_watches();
    // Everything after the compaction must come from a relist (the old RV is gone).
    for d in until_list_complete(&mut deltas).await {
        apply(&mut state, &d);
    }
    assert_eq!(metrics.lists.load(Ordering::Relaxed), 2);
    assert_eq!(state, server_state(&api).await);
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_reaches_the_same_state_as_a_paginated_list() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    create_many(&api, 1_200).await;
    let cancel = CancellationToken::new();
    let metrics = Arc::new(CountingMetrics::default());
    let mut results = Vec::new();
    for config in [
        ReflectorConfig::default(),
        ReflectorConfig::default()
            .streaming_list()
            .metrics(metrics.clone()),
    ] {
        let reflector = Reflector::<Lease>::new(cluster.client(), Some(NS), config);
        let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
        let mut state = BTreeMap::new();
        for d in until_list_complete(&mut deltas).await {
            apply(&mut state, &d);
        }
        results.push(state);
    }
    assert_eq!(results[0].len(), 1_200);
    assert_eq!(results[0], results[1]);
    assert_eq!(metrics.lists.load(Ordering::Relaxed), 1);
    assert_eq!(
        metrics.streaming_list_errors.load(Ordering::Relaxed),
        0,
        "the streaming list must not have fallen back"
    );
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_falls_back_to_a_paginated_list_when_the_server_refuses_it() {
    let cluster = cluster().await;
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    create_many(&api, 20).await;
    let refuse_watch = Outage::new(&["watch"]);
    refuse_watch.on.store(true, Ordering::SeqCst);
    cluster.env().set_hook(Some(refuse_watch.clone()));
    let cancel = CancellationToken::new();
    let metrics = Arc::new(CountingMetrics::default());
    let config = ReflectorConfig::default()
        .streaming_list()
        .backoff(fast_backoff())
        .metrics(metrics.clone());
    let reflector = Reflector::<Lease>::new(cluster.client(), Some(NS), config);
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));
    let mut state = BTreeMap::new();
    // Every watch is refused, so this state can only come from the fallback LIST.
    for d in until_list_complete(&mut deltas).await {
        apply(&mut state, &d);
    }
    assert!(metrics.streaming_list_errors.load(Ordering::Relaxed) >= 1);
    assert_eq!(state, server_state(&api).await);
    refuse_watch.on.store(false, Ordering::SeqCst);
    api.create(&PostParams::default(), &cm("late", "1"))
        .await
        .expect("create");
    loop {
        let d = next_delta(&mut deltas).await;
        apply(&mut state, &d);
        if state.contains_key("default/late") {
            break;
        }
    }
    assert_eq!(state, server_state(&api).await);
    cancel.cancel();
}
