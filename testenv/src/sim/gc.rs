//! The garbage collector (upstream `pkg/controller/garbagecollector`): asynchronous deletion of
//! dependents whose owners are gone, foreground deletion (dependents first, honouring
//! `blockOwnerDeletion`), and orphaning (owner references removed, then the `orphan` finalizer).
//! Owners are checked with live GETs (by name, then uid) before anything is deleted.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use kube::Api;
use kube::api::{
    DeleteParams, DynamicObject, Patch, PatchParams, Preconditions, PropagationPolicy,
};
use parking_lot::RwLock;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::gc_graph::{FOREGROUND, Graph, GraphNode, ORPHAN, OwnerRef, Work};
use super::gc_queue::WorkQueue;
use super::informer::{Change, spawn_informer};
use super::kinds::{KINDS, KindInfo, custom_kinds, resolve};

const RETRY: Duration = Duration::from_millis(100);
/// How often dependents of custom-resource owners are checked again: the collector watches only
/// the built-in kinds, so it cannot see such an owner go (upstream watches every resource).
const CUSTOM_OWNER_RECHECK: Duration = Duration::from_secs(1);
const CONFLICT_ATTEMPTS: usize = 5;

/// Concurrent GC workers (upstream `--concurrent-gc-syncs` defaults to 20).
const WORKERS: usize = 4;

/// Run the garbage collector until `token` is cancelled.
pub(crate) async fn run(client: kube::Client, token: CancellationToken) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, Change<DynamicObject>)>();
    let mut caches = Vec::new();
    for (i, kind) in KINDS.iter().enumerate() {
        let (ktx, mut krx) = mpsc::unbounded_channel();
        let (cache, _task) = spawn_informer(kind.api(&client, None), ktx, token.clone());
        caches.push(cache);
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some(c) = krx.recv().await {
                if tx.send((i, c)).is_err() {
                    break;
                }
            }
        });
    }
    // Process only once every informer has listed (or after a while, if a kind is not served).
    let synced = join_all(caches.iter().map(|c| c.wait_synced()));
    tokio::select! {
        _ = token.cancelled() => return,
        _ = tokio::time::timeout(Duration::from_secs(5), synced) => {}
    }
    let graph = Arc::new(RwLock::new(Graph::default()));
    let queue = Arc::new(WorkQueue::new());
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let (client, graph, queue, token) =
            (client.clone(), graph.clone(), queue.clone(), token.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let w = tokio::select! {
                    _ = token.cancelled() => return,
                    w = queue.get() => w,
                };
                let result = match &w {
                    Work::AttemptToDelete(uid) => attempt_to_delete(&client, &graph, uid).await,
                    Work::Orphan(uid) => orphan(&client, &graph, uid).await,
                };
                queue.done(&w);
                if let Err(e) = result {
                    tracing::debug!(work = ?w, error = %e, "sim gc: retrying");
                    let queue = queue.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(RETRY).await;
                        queue.add(w);
                    });
                }
            }
        }));
    }
    let mut recheck = tokio::time::interval(CUSTOM_OWNER_RECHECK);
    loop {
        let c = tokio::select! {
            _ = token.cancelled() => break,
            _ = recheck.tick() => {
                let custom = |r: &OwnerRef| resolve(&r.api_version, &r.kind).is_none();
                for uid in graph.read().with_unobserved_owners(custom) {
                    queue.add(Work::AttemptToDelete(uid));
                }
                continue;
            }
            c = rx.recv() => c,
        };
        let Some((kind, change)) = c else { break };
        let work = {
            let mut g = graph.write();
            match change {
                Change::Applied(obj) => match GraphNode::from_object(kind, &obj) {
                    Some(n) => g.upsert(n),
                    None => Vec::new(),
                },
                Change::Deleted(obj) => match &obj.metadata.uid {
                    Some(uid) => g.remove(uid),
                    None => Vec::new(),
                },
            }
        };
        for w in work {
            queue.add(w);
        }
    }
    for w in workers {
        let _ = w.await;
    }
}

fn is_gone(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// The live object, if it still exists with this uid.
async fn live(
    client: &kube::Client,
    kind: &KindInfo,
    namespace: Option<&str>,
    name: &str,
    uid: &str,
) -> Result<Option<DynamicObject>, kube::Error> {
    let obj = kind.api(client, namespace).get_opt(name).await?;
    Ok(obj.filter(|o| o.metadata.uid.as_deref() == Some(uid)))
}

enum OwnerState {
    Solid,
    Dangling,
    WaitingForDependents,
}

async fn classify(
    client: &kube::Client,
    dependent_ns: Option<&str>,
    r: &OwnerRef,
) -> Result<OwnerState, kube::Error> {
    let Some(kind) = resolve(&r.api_version, &r.kind) else {
        return classify_custom(client, dependent_ns, r).await;
    };
    if kind.namespaced && dependent_ns.is_none() {
        // A cluster-scoped dependent cannot have a namespaced owner: the reference is unresolvable.
        return Ok(OwnerState::Dangling);
    }
    let ns = if kind.namespaced { dependent_ns } else { None };
    Ok(owner_state(live(client, kind, ns, &r.name, &r.uid).await?))
}

/// What the live owner (`None`: gone, or another object of that name) means for a dependent.
fn owner_state(owner: Option<DynamicObject>) -> OwnerState {
    match owner {
        None => OwnerState::Dangling,
        Some(o) => {
            let deleting = o.metadata.deletion_timestamp.is_some();
            let fg = o
                .metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == FOREGROUND);
            if deleting && fg {
                OwnerState::WaitingForDependents
            } else {
                OwnerState::Solid
            }
        }
    }
}

/// An owner of a kind the collector does not watch: a namespaced custom resource of an
/// established CRD is looked up in the dependent's namespace; anything else is left alone.
async fn classify_custom(
    client: &kube::Client,
    dependent_ns: Option<&str>,
    r: &OwnerRef,
) -> Result<OwnerState, kube::Error> {
    let group = r.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let Some(ns) = dependent_ns else {
        return Ok(OwnerState::Solid);
    };
    let Some((_, resource)) = custom_kinds(client)
        .await?
        .into_iter()
        .find(|(_, ar)| ar.group == group && ar.kind == r.kind)
    else {
        // Not a kind this server serves: leave the dependent alone.
        return Ok(OwnerState::Solid);
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource);
    let owner = api.get_opt(&r.name).await?;
    Ok(owner_state(owner.filter(|o| {
        o.metadata.uid.as_deref() == Some(r.uid.as_str())
    })))
}

async fn attempt_to_delete(
    client: &kube::Client,
    graph: &RwLock<Graph>,
    uid: &str,
) -> Result<(), kube::Error> {
    let Some(item) = graph.read().get(uid).cloned() else {
        return Ok(());
    };
    let kind = &KINDS[item.kind];
    let ns = item.namespace.as_deref();
    let Some(latest) = live(client, kind, ns, &item.name, uid).await? else {
        return Ok(());
    };
    let Some(current) = GraphNode::from_object(item.kind, &latest) else {
        return Ok(());
    };
    if current.deleting_dependents() {
        return process_deleting_dependents(client, graph, &current).await;
    }
    if current.deleting || current.owners.is_empty() {
        return Ok(());
    }
    let mut solid = 0;
    let mut remove: Vec<String> = Vec::new();
    let mut waiting = 0;
    for r in &current.owners {
        match classify(client, ns, r).await? {
            OwnerState::Solid => solid += 1,
            OwnerState::Dangling => remove.push(r.uid.clone()),
            OwnerState::WaitingForDependents => {
                waiting += 1;
                remove.push(r.uid.clone());
            }
        }
    }
    if solid > 0 {
        if !remove.is_empty() {
            remove_owner_refs(client, kind, ns, &current.name, uid, &remove).await?;
        }
        return Ok(());
    }
    let dependents: Vec<GraphNode> = graph.read().dependents(uid).into_iter().cloned().collect();
    let policy = if waiting > 0 && !dependents.is_empty() {
        if dependents.iter().any(|d| d.deleting_dependents()) {
            // Possible cycle: make this object's references non-blocking before deleting it in
            // the foreground (upstream `unblockOwnerReferencesStrategicMergePatch`).
            unblock_owner_refs(client, kind, ns, &current).await?;
        }
        PropagationPolicy::Foreground
    } else if current.finalizers.iter().any(|f| f == ORPHAN) {
        PropagationPolicy::Orphan
    } else if current.finalizers.iter().any(|f| f == FOREGROUND) {
        PropagationPolicy::Foreground
    } else {
        PropagationPolicy::Background
    };
    let dp = DeleteParams {
        propagation_policy: Some(policy),
        preconditions: Some(Preconditions {
            uid: Some(uid.to_string()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    // A 409 is retried: the next attempt's live GET tells a replaced object (skip) from an
    // injected conflict (delete again).
    match kind.api(client, ns).delete(&current.name, &dp).await {
        Ok(_) => Ok(()),
        Err(e) if is_gone(&e) => Ok(()),
        Err(e) => Err(e),
    }
}

/// A foreground-deleting owner: wait for blocking dependents, then drop `foregroundDeletion`.
async fn process_deleting_dependents(
    client: &kube::Client,
    graph: &RwLock<Graph>,
    owner: &GraphNode,
) -> Result<(), kube::Error> {
    let blocking: Vec<GraphNode> = graph
        .read()
        .blocking_dependents(&owner.uid)
        .into_iter()
        .cloned()
        .collect();
    if blocking.is_empty() {
        return remove_finalizer(client, owner, FOREGROUND).await;
    }
    for dep in blocking {
        if !dep.deleting_dependents() && !dep.deleting {
            Box::pin(attempt_to_delete(client, graph, &dep.uid)).await?;
        }
    }
    Ok(())
}

/// Remove the owner's references from every dependent, then its `orphan` finalizer.
async fn orphan(
    client: &kube::Client,
    graph: &RwLock<Graph>,
    uid: &str,
) -> Result<(), kube::Error> {
    let (owner, dependents) = {
        let g = graph.read();
        let Some(owner) = g.get(uid).cloned() else {
            return Ok(());
        };
        let deps: Vec<GraphNode> = g.dependents(uid).into_iter().cloned().collect();
        (owner, deps)
    };
    for dep in dependents {
        let kind = &KINDS[dep.kind];
        remove_owner_refs(
            client,
            kind,
            dep.namespace.as_deref(),
            &dep.name,
            &dep.uid,
            &[uid.to_string()],
        )
        .await?;
    }
    remove_finalizer(client, &owner, ORPHAN).await
}

/// Upstream `deleteOwnerRefStrategicMergePatch`: a strategic merge patch deleting the references by
/// uid, with the dependent's uid as precondition.
async fn remove_owner_refs(
    client: &kube::Client,
    kind: &KindInfo,
    ns: Option<&str>,
    name: &str,
    uid: &str,
    owner_uids: &[String],
) -> Result<(), kube::Error> {
    let refs: Vec<Value> = owner_uids
        .iter()
        .map(|u| json!({"$patch": "delete", "uid": u}))
        .collect();
    let patch = json!({"metadata": {"ownerReferences": refs, "uid": uid}});
    match kind
        .api(client, ns)
        .patch(name, &PatchParams::default(), &Patch::Strategic(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if is_gone(&e) => Ok(()),
        Err(e) if is_conflict(&e) => match live(client, kind, ns, name, uid).await? {
            // Replaced by another object with the same name: nothing to patch.
            None => Ok(()),
            Some(_) => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// Set `blockOwnerDeletion: false` on every blocking reference of `item`.
async fn unblock_owner_refs(
    client: &kube::Client,
    kind: &KindInfo,
    ns: Option<&str>,
    item: &GraphNode,
) -> Result<(), kube::Error> {
    let refs: Vec<Value> = item
        .owners
        .iter()
        .filter(|r| r.block_owner_deletion)
        .map(|r| json!({"uid": r.uid, "blockOwnerDeletion": false}))
        .collect();
    if refs.is_empty() {
        return Ok(());
    }
    let patch = json!({"metadata": {"ownerReferences": refs, "uid": item.uid}});
    match kind
        .api(client, ns)
        .patch(
            &item.name,
            &PatchParams::default(),
            &Patch::Strategic(&patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if is_gone(&e) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Upstream `removeFinalizer`: GET, then a merge patch of `finalizers` with the resourceVersion,
/// retried on conflict.
async fn remove_finalizer(
    client: &kube::Client,
    item: &GraphNode,
    finalizer: &str,
) -> Result<(), kube::Error> {
    let kind = &KINDS[item.kind];
    let api = kind.api(client, item.namespace.as_deref());
    for attempt in 0..CONFLICT_ATTEMPTS {
        let Some(obj) = live(
            client,
            kind,
            item.namespace.as_deref(),
            &item.name,
            &item.uid,
        )
        .await?
        else {
            return Ok(());
        };
        let finalizers = obj.metadata.finalizers.clone().unwrap_or_default();
        if !finalizers.iter().any(|f| f == finalizer) {
            return Ok(());
        }
        let rest: Vec<&String> = finalizers.iter().filter(|f| *f != finalizer).collect();
        let list = if rest.is_empty() {
            Value::Null
        } else {
            json!(rest)
        };
        let patch = json!({"metadata": {"finalizers": list, "resourceVersion": obj.metadata.resource_version}});
        match api
            .patch(&item.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if is_gone(&e) => return Ok(()),
            Err(e) if is_conflict(&e) && attempt + 1 < CONFLICT_ATTEMPTS => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
