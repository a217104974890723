//! The garbage collector (upstream `pkg/controller/garbagecollector`): every resource discovery
//! lists with the `delete`, `list` and `watch` verbs is watched by metadata ([`monitors`]), custom
//! resources included; the watch events build the ownership graph ([`graph_builder`]), which
//! queues objects whose owners may be gone, owners deleting in the foreground and owners
//! orphaning their dependents on kcm-workqueue rate-limited queues; workers
//! ([`attempt_to_delete`]) verify owners with live GETs before anything is deleted.
//!
//! Discovery is read again every [`RESYNC_PERIOD`] and whenever a CustomResourceDefinition
//! changes (upstream's `Sync` polls every 30 s; the trigger makes a new kind collectable at once).

mod absent_owners;
mod attempt_to_delete;
mod collector;
mod graph;
mod graph_builder;
#[cfg(test)]
mod graph_builder_tests;
mod monitors;
mod operations;
mod rest_mapper;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcm_informer::{EventHandlerFns, ReflectorConfig, SharedIndexInformer};
use kcm_workqueue::{RateLimitingQueue, default_controller_rate_limiter};
use parking_lot::Mutex;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::discovery::{Discovery, Resource};
use super::events;
use absent_owners::{AbsentOwnerCache, CAPACITY};
use attempt_to_delete::{Outcome, attempt_to_delete_worker, attempt_to_orphan_worker};
use collector::Collector;
use graph::Graph;
use graph_builder::Effects;
use monitors::{Monitors, ResourceKey, key_of};
use rest_mapper::RestMapper;

/// How often discovery is read again without a CustomResourceDefinition change (upstream: 30 s).
const RESYNC_PERIOD: Duration = Duration::from_secs(30);
/// How long the workers wait for every monitor's first list before they start anyway.
const INITIAL_SYNC_TIMEOUT: Duration = Duration::from_secs(5);
/// Workers per queue (upstream `--concurrent-gc-syncs`: 20).
const WORKERS: usize = 20;
/// Resources never watched (upstream `DefaultIgnoredResources`).
const IGNORED: [(&str, &str); 2] = [("", "events"), ("events.k8s.io", "events")];

/// Run the garbage collector until `token` is cancelled. `crds` is the shared informer of
/// CustomResourceDefinitions; `reflector` configures every monitor's reflector; `events` turns
/// the collector's Events on.
pub(crate) async fn run(
    client: kube::Client,
    crds: SharedIndexInformer<CustomResourceDefinition>,
    reflector: ReflectorConfig,
    events: bool,
    token: CancellationToken,
) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let queue = |name: &str| {
        RateLimitingQueue::builder()
            .name(name)
            .rate_limiter(default_controller_rate_limiter())
            .build()
    };
    let gc = Arc::new(Collector {
        mapper: RestMapper::new(client.clone()),
        client: client.clone(),
        graph: Mutex::new(Graph::default()),
        absent: Mutex::new(AbsentOwnerCache::new(CAPACITY)),
        attempt_to_delete: queue("garbage_collector_attempt_to_delete"),
        attempt_to_orphan: queue("garbage_collector_attempt_to_orphan"),
        graph_changes: tx.clone(),
        events,
    });
    let resync = Arc::new(Notify::new());
    let notify = resync.clone();
    let on_change = move || notify.notify_one();
    let registration = crds.add_event_handler(
        EventHandlerFns::new()
            .on_add({
                let f = on_change.clone();
                move |_, _| f()
            })
            .on_update({
                let f = on_change.clone();
                move |_, _| f()
            })
            .on_delete(move |_| on_change()),
    );
    if let Err(e) = &registration {
        tracing::warn!(error = %e, "sim gc: not following CustomResourceDefinitions; new kinds are found every {RESYNC_PERIOD:?}");
    }
    // The graph builder: one task applies every event in order.
    let builder = tokio::spawn({
        let gc = gc.clone();
        async move {
            while let Some(event) = rx.recv().await {
                let effects = gc.graph.lock().process(&event);
                apply(&gc, effects);
            }
        }
    });
    let mut monitors = Monitors::new(client.clone(), reflector, tx, token.child_token());
    let mut watched: BTreeMap<ResourceKey, Resource> = BTreeMap::new();
    let mut workers = Vec::new();
    loop {
        sync(&gc, &mut monitors, &mut watched).await;
        if workers.is_empty() {
            // Start collecting once the monitors have listed, or after a while regardless.
            let deadline = tokio::time::Instant::now() + INITIAL_SYNC_TIMEOUT;
            while !monitors.is_synced() && tokio::time::Instant::now() < deadline {
                tokio::select! {
                    _ = token.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                }
            }
            workers = start_workers(&gc);
        }
        tokio::select! {
            _ = token.cancelled() => break,
            _ = tokio::time::sleep(RESYNC_PERIOD) => {}
            _ = resync.notified() => {}
        }
    }
    if let Ok(r) = registration {
        crds.remove_event_handler(&r);
    }
    gc.attempt_to_delete.shutdown();
    gc.attempt_to_orphan.shutdown();
    drop(monitors);
    builder.abort();
    for w in workers {
        let _ = w.await;
    }
}

/// Read discovery; when the deletable resources changed, reset the REST mapper and run exactly
/// their monitors (upstream `GarbageCollector.Sync`, `GetDeletableResources`).
async fn sync(
    gc: &Collector,
    monitors: &mut Monitors,
    watched: &mut BTreeMap<ResourceKey, Resource>,
) {
    let discovery = match Discovery::fetch(&gc.client).await {
        Ok(d) => d,
        Err(e) => {
            tracing::debug!(error = %e, "sim gc: discovery failed, skipping this sync");
            return;
        }
    };
    if let Some(failure) = discovery.failure() {
        tracing::info!(%failure, "sim gc: failed to discover some groups");
    }
    let mut resources: BTreeMap<ResourceKey, Resource> = discovery
        .preferred()
        .into_iter()
        .filter(|r| r.supports(&["delete", "list", "watch"]))
        .filter(|r| !IGNORED.contains(&(r.group.as_str(), r.plural.as_str())))
        .map(|r| (key_of(&r), r))
        .collect();
    if resources.is_empty() {
        tracing::debug!("sim gc: no resources reported by discovery, skipping this sync");
        return;
    }
    // A group that failed keeps the monitors that already synced.
    for (key, r) in watched.iter() {
        if discovery.failed_group_version(&r.group, &r.version) && monitors.is_resource_synced(key)
        {
            resources.insert(key.clone(), r.clone());
        }
    }
    gc.mapper.reset(Arc::new(discovery));
    if resources.keys().eq(watched.keys()) {
        return;
    }
    let list: Vec<Resource> = resources.values().cloned().collect();
    monitors.sync(&list);
    tracing::debug!(resources = list.len(), "sim gc: monitors follow discovery");
    *watched = resources;
}

/// Hand the graph builder's effects to the queues, the absent-owner cache and the recorder.
fn apply(gc: &Collector, fx: Effects) {
    for uid in fx.attempt_to_delete {
        gc.attempt_to_delete.add(uid);
    }
    for uid in fx.attempt_to_delete_later {
        gc.attempt_to_delete.add_rate_limited(uid);
    }
    for uid in fx.attempt_to_orphan {
        gc.attempt_to_orphan.add(uid);
    }
    if !fx.absent_owners.is_empty() {
        let mut absent = gc.absent.lock();
        for r in fx.absent_owners {
            absent.add(r);
        }
    }
    for (dependent, owner) in fx.invalid_namespace {
        let invalid = owner.coordinates(&dependent.namespace);
        tracing::info!(item = %dependent, owner = %invalid, "sim gc: item references an owner but does not match namespaces");
        if gc.events {
            let message = format!(
                "ownerRef {invalid} does not exist in namespace {:?}",
                dependent.namespace
            );
            let client = gc.client.clone();
            tokio::spawn(async move {
                let involved = serde_json::json!({
                    "apiVersion": dependent.api_version, "kind": dependent.kind,
                    "namespace": dependent.namespace, "name": dependent.name, "uid": dependent.uid,
                });
                events::controller_event(
                    &client,
                    &dependent.namespace,
                    involved,
                    "garbage-collector-controller",
                    "Warning",
                    "OwnerRefInvalidNamespace",
                    message,
                )
                .await;
            });
        }
    }
}

fn start_workers(gc: &Arc<Collector>) -> Vec<tokio::task::JoinHandle<()>> {
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let g = gc.clone();
        workers.push(tokio::spawn(async move {
            while let Some(uid) = g.attempt_to_delete.get().await {
                match attempt_to_delete_worker(&g, &uid).await {
                    Outcome::Forget => g.attempt_to_delete.forget(&uid),
                    Outcome::Requeue => g.attempt_to_delete.add_rate_limited(uid.clone()),
                }
                g.attempt_to_delete.done(&uid);
            }
        }));
        let g = gc.clone();
        workers.push(tokio::spawn(async move {
            while let Some(uid) = g.attempt_to_orphan.get().await {
                match attempt_to_orphan_worker(&g, &uid).await {
                    Outcome::Forget => g.attempt_to_orphan.forget(&uid),
                    Outcome::Requeue => g.attempt_to_orphan.add_rate_limited(uid.clone()),
                }
                g.attempt_to_orphan.done(&uid);
            }
        }));
    }
    workers
}
