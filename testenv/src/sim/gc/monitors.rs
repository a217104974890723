//! The collector's resource monitors (upstream `graph_builder.go`: `syncMonitors`,
//! `startMonitors`, `controllerFor`): one metadata reflector per watched resource, whose cache
//! turns the reflector's output into graph events with the previous state (what a metadata
//! informer's handlers receive), sent to the graph builder.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kcm_reflector::delta::into_arcs;
use kcm_reflector::{Reflector, ReflectorConfig, ReflectorStore, relist_tombstones};
use kcm_store::{ObjectKey, Store};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::discovery::Resource;
use super::super::metadata::{MetadataListerWatcher, MetadataObject};
use super::graph_builder::{EventKind, GraphEvent, Observed};

/// A monitored resource: its group, version and plural.
pub(crate) type ResourceKey = (String, String, String);

/// The key of a discovered resource.
pub(crate) fn key_of(r: &Resource) -> ResourceKey {
    (r.group.clone(), r.version.clone(), r.plural.clone())
}

struct Monitor {
    stop: CancellationToken,
    synced: Arc<AtomicBool>,
}

/// The running monitors.
pub(crate) struct Monitors {
    client: kube::Client,
    reflector: ReflectorConfig,
    events: mpsc::UnboundedSender<GraphEvent>,
    token: CancellationToken,
    running: HashMap<ResourceKey, Monitor>,
}

impl Monitors {
    /// Monitors sending to `events`, each reflector configured by `reflector`, all stopped by
    /// `token`.
    pub(crate) fn new(
        client: kube::Client,
        reflector: ReflectorConfig,
        events: mpsc::UnboundedSender<GraphEvent>,
        token: CancellationToken,
    ) -> Self {
        Monitors {
            client,
            reflector,
            events,
            token,
            running: HashMap::new(),
        }
    }

    /// Run exactly the monitors of `resources`: start the new ones, stop those not listed.
    pub(crate) fn sync(&mut self, resources: &[Resource]) {
        let wanted: HashSet<ResourceKey> = resources.iter().map(key_of).collect();
        self.running.retain(|key, m| {
            let keep = wanted.contains(key);
            if !keep {
                m.stop.cancel();
            }
            keep
        });
        let (mut added, kept) = (0, self.running.len());
        for r in resources {
            if self.running.contains_key(&key_of(r)) {
                continue;
            }
            let stop = self.token.child_token();
            let synced = Arc::new(AtomicBool::new(false));
            let mut store = MonitorStore {
                api_version: r.api_version(),
                kind: r.kind.clone(),
                cache: Store::new(),
                events: self.events.clone(),
                synced: synced.clone(),
            };
            let lw = MetadataListerWatcher::new(self.client.clone(), r.collection_path(None));
            let config = self
                .reflector
                .clone()
                .name(format!("gc {}", r.group_resource()));
            let mut reflector = Reflector::with_lister_watcher(lw, config);
            let task_stop = stop.clone();
            tokio::spawn(async move { reflector.run(&mut store, task_stop).await });
            self.running.insert(key_of(r), Monitor { stop, synced });
            added += 1;
        }
        tracing::debug!(
            added,
            kept,
            running = self.running.len(),
            "sim gc: synced monitors"
        );
    }

    /// Whether every monitor has listed once (false with none, as upstream's `IsSynced`).
    pub(crate) fn is_synced(&self) -> bool {
        !self.running.is_empty()
            && self
                .running
                .values()
                .all(|m| m.synced.load(Ordering::Acquire))
    }

    /// Whether the monitor of `key` runs and has listed once.
    pub(crate) fn is_resource_synced(&self, key: &ResourceKey) -> bool {
        self.running
            .get(key)
            .is_some_and(|m| m.synced.load(Ordering::Acquire))
    }
}

impl Drop for Monitors {
    fn drop(&mut self) {
        for m in self.running.values() {
            m.stop.cancel();
        }
    }
}

/// One monitor's cache: keeps the last state of every object to hand the graph builder the
/// previous state with each update, and tombstones for what a relist no longer lists.
struct MonitorStore {
    api_version: String,
    kind: String,
    cache: Store<MetadataObject>,
    events: mpsc::UnboundedSender<GraphEvent>,
    synced: Arc<AtomicBool>,
}

impl MonitorStore {
    fn observed(&self, obj: &MetadataObject) -> Observed {
        Observed::from_meta(&self.api_version, &self.kind, &obj.metadata)
    }

    fn send(&self, kind: EventKind, obj: &MetadataObject, old: Option<&MetadataObject>) {
        let event = GraphEvent {
            virtual_: false,
            kind,
            obj: self.observed(obj),
            old: old.map(|o| self.observed(o)),
        };
        // The receiver is gone only when the collector stops.
        let _ = self.events.send(event);
    }

    fn upsert(&mut self, obj: Arc<MetadataObject>) {
        match self.cache.add(obj.clone()) {
            Some(old) => self.send(EventKind::Update, &obj, Some(&old)),
            None => self.send(EventKind::Add, &obj, None),
        }
    }
}

/// Managed fields are never read by the collector: not kept.
fn slim(mut obj: MetadataObject) -> Arc<MetadataObject> {
    obj.metadata.managed_fields = None;
    Arc::new(obj)
}

impl ReflectorStore<MetadataObject> for MonitorStore {
    fn add(&mut self, obj: MetadataObject) {
        self.upsert(slim(obj));
    }

    fn update(&mut self, obj: MetadataObject) {
        self.upsert(slim(obj));
    }

    fn delete(&mut self, obj: MetadataObject) {
        let obj = slim(obj);
        self.cache.delete(&ObjectKey::from_meta(&obj.metadata));
        self.send(EventKind::Delete, &obj, None);
    }

    fn replace(&mut self, objects: Vec<MetadataObject>, _resource_version: String) {
        let objects = into_arcs(objects, slim);
        let listed: HashSet<ObjectKey> = objects
            .iter()
            .map(|o| ObjectKey::from_meta(&o.metadata))
            .collect();
        let cached = self.cache.list();
        let gone = relist_tombstones(
            cached
                .iter()
                .map(|o| (ObjectKey::from_meta(&o.metadata), o)),
            &listed,
        );
        for t in gone {
            self.cache.delete(&t.key);
            self.send(EventKind::Delete, &t.obj, None);
        }
        for obj in objects {
            self.upsert(obj);
        }
        self.synced.store(true, Ordering::Release);
    }
}
