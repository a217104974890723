//! The namespace controller (upstream `pkg/controller/namespace`): a namespace with a
//! deletionTimestamp is emptied (every namespaced kind, pods gracefully), its status conditions
//! report what remains, and once nothing is left the `kubernetes` finalizer is removed through
//! `PUT /finalize` and the namespace is deleted.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{
    DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, Preconditions,
    PropagationPolicy,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::clock::now_time;
use super::informer::{Change, spawn_informer};
use super::kinds::{KINDS, custom_kinds};

/// The spec finalizer the namespace controller owns.
pub const KUBERNETES_FINALIZER: &str = "kubernetes";
const POLL: Duration = Duration::from_millis(100);

/// Run the namespace controller until `token` is cancelled.
pub(crate) async fn run(client: kube::Client, token: CancellationToken) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (_cache, informer) =
        spawn_informer(Api::<Namespace>::all(client.clone()), tx, token.clone());
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<String>();
    let mut active: HashSet<String> = HashSet::new();
    loop {
        tokio::select! {
            _ = token.cancelled() => break,
            d = done_rx.recv() => { if let Some(n) = d { active.remove(&n); } }
            c = rx.recv() => {
                let Some(Change::Applied(ns)) = c else {
                    if c.is_none() { break }
                    continue;
                };
                if ns.metadata.deletion_timestamp.is_none() { continue }
                let name = ns.metadata.name.clone().unwrap_or_default();
                if !active.insert(name.clone()) { continue }
                let client = client.clone();
                let token = token.clone();
                let done = done_tx.clone();
                tokio::spawn(async move {
                    delete_namespace(&client, ns, &token).await;
                    let _ = done.send(name);
                });
            }
        }
    }
    let _ = informer.await;
}

async fn delete_namespace(client: &kube::Client, ns: Arc<Namespace>, token: &CancellationToken) {
    let name = ns.metadata.name.clone().unwrap_or_default();
    let uid = ns.metadata.uid.clone().unwrap_or_default();
    // What the namespace already reports, so that an unchanged state writes nothing.
    let mut last_conditions = Value::from(
        ns.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        json!({"type": c.type_, "status": c.status, "reason": c.reason, "message": c.message})
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default(),
    );
    loop {
        if token.is_cancelled() {
            return;
        }
        match sweep(client, &name).await {
            Ok(remaining) => {
                let conditions = conditions(&remaining);
                if conditions != last_conditions {
                    write_conditions(client, &name, &conditions).await;
                    last_conditions = conditions;
                }
                if remaining.is_empty() {
                    match finalize(client, &name, &uid).await {
                        Ok(()) => return,
                        Err(e) => {
                            tracing::debug!(namespace = %name, error = %e, "sim ns: finalize failed")
                        }
                    }
                }
            }
            Err(e) => tracing::debug!(namespace = %name, error = %e, "sim ns: sweep failed"),
        }
        tokio::select! {
            _ = token.cancelled() => return,
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// What is left per resource: (instances, instances with finalizers).
type Remaining = BTreeMap<String, (usize, BTreeMap<String, usize>)>;

/// Delete what is not yet terminating and count what remains, in every namespaced kind and
/// custom resource (found through the server's CRDs, as upstream finds them in discovery).
async fn sweep(client: &kube::Client, ns: &str) -> Result<Remaining, kube::Error> {
    let mut remaining = Remaining::new();
    let mut targets: Vec<(String, Api<DynamicObject>)> = KINDS
        .iter()
        .filter(|k| k.namespaced)
        .map(|k| (k.plural.to_string(), k.api(client, Some(ns))))
        .collect();
    for (name, ar) in custom_kinds(client).await? {
        targets.push((name, Api::namespaced_with(client.clone(), ns, &ar)));
    }
    for (resource, api) in targets {
        let items: Vec<DynamicObject> = match api.list(&ListParams::default()).await {
            Ok(l) => l.items,
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 405 => continue,
            Err(e) => return Err(e),
        };
        if items.is_empty() {
            continue;
        }
        if items
            .iter()
            .any(|o| o.metadata.deletion_timestamp.is_none())
        {
            let dp = DeleteParams {
                propagation_policy: Some(PropagationPolicy::Background),
                ..DeleteParams::default()
            };
            match api.delete_collection(&dp, &ListParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 || s.code == 405 => {
                    for o in items
                        .iter()
                        .filter(|o| o.metadata.deletion_timestamp.is_none())
                    {
                        let dp = DeleteParams {
                            propagation_policy: Some(PropagationPolicy::Background),
                            preconditions: Some(Preconditions {
                                uid: o.metadata.uid.clone(),
                                resource_version: None,
                            }),
                            ..DeleteParams::default()
                        };
                        match api
                            .delete(o.metadata.name.as_deref().unwrap_or(""), &dp)
                            .await
                        {
                            Ok(_) => {}
                            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
                            Err(e) => return Err(e),
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
        let left = match api.list(&ListParams::default()).await {
            Ok(l) => l.items,
            Err(e) => return Err(e),
        };
        if !left.is_empty() {
            let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
            for o in &left {
                for f in o.metadata.finalizers.iter().flatten() {
                    *finalizers.entry(f.clone()).or_default() += 1;
                }
            }
            remaining.insert(resource, (left.len(), finalizers));
        }
    }
    Ok(remaining)
}

/// The deletion conditions upstream's namespace controller writes.
fn conditions(remaining: &Remaining) -> Value {
    let cond = |t: &str, status: bool, reason: &str, message: String| json!({"type": t, "status": if status { "True" } else { "False" }, "reason": reason, "message": message});
    let content = if remaining.is_empty() {
        cond(
            "NamespaceContentRemaining",
            false,
            "ContentRemoved",
            "All content successfully removed".into(),
        )
    } else {
        let parts: Vec<String> = remaining
            .iter()
            .map(|(k, (n, _))| format!("{k} has {n} resource instances"))
            .collect();
        cond(
            "NamespaceContentRemaining",
            true,
            "SomeResourcesRemain",
            format!("Some resources are remaining: {}", parts.join(", ")),
        )
    };
    let mut fins: BTreeMap<&String, usize> = BTreeMap::new();
    for (_, (_, f)) in remaining.iter() {
        for (name, n) in f {
            *fins.entry(name).or_default() += n;
        }
    }
    let finalizers = if fins.is_empty() {
        cond(
            "NamespaceFinalizersRemaining",
            false,
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished".into(),
        )
    } else {
        let parts: Vec<String> = fins
            .iter()
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        cond(
            "NamespaceFinalizersRemaining",
            true,
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                parts.join(", ")
            ),
        )
    };
    json!([
        cond(
            "NamespaceDeletionDiscoveryFailure",
            false,
            "ResourcesDiscovered",
            "All resources successfully discovered".into()
        ),
        cond(
            "NamespaceDeletionGroupVersionParsingFailure",
            false,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".into()
        ),
        cond(
            "NamespaceDeletionContentFailure",
            false,
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".into()
        ),
        content,
        finalizers,
    ])
}

async fn write_conditions(client: &kube::Client, name: &str, conditions: &Value) {
    let now = now_time();
    let stamped: Vec<Value> = conditions
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let mut c = c.clone();
            c["lastTransitionTime"] = now.as_str().into();
            c
        })
        .collect();
    let api: Api<Namespace> = Api::all(client.clone());
    let patch = json!({"status": {"conditions": stamped}});
    if let Err(e) = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        tracing::debug!(namespace = %name, error = %e, "sim ns: status write failed");
    }
}

/// Remove `kubernetes` from `spec.finalizers` with `PUT /finalize`, then, when no spec finalizer
/// is left, delete the namespace again (upstream `deleteNamespaceWhenDone`); metadata finalizers
/// and other spec finalizers are their owners' business.
async fn finalize(client: &kube::Client, name: &str, uid: &str) -> Result<(), kube::Error> {
    let api: Api<Namespace> = Api::all(client.clone());
    let Some(mut ns) = api.get_opt(name).await? else {
        return Ok(());
    };
    if ns.metadata.uid.as_deref() != Some(uid) {
        return Ok(());
    }
    let has = ns
        .spec
        .as_ref()
        .and_then(|s| s.finalizers.as_ref())
        .is_some_and(|f| f.iter().any(|x| x == KUBERNETES_FINALIZER));
    if has {
        if let Some(f) = ns.spec.as_mut().and_then(|s| s.finalizers.as_mut()) {
            f.retain(|x| x != KUBERNETES_FINALIZER);
        }
        match api
            .replace_subresource::<Namespace>("finalize", name, &PostParams::default(), &ns)
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    let Some(after) = api.get_opt(name).await? else {
        return Ok(());
    };
    let spec_empty = after
        .spec
        .as_ref()
        .and_then(|s| s.finalizers.as_ref())
        .is_none_or(|f| f.is_empty());
    if !spec_empty {
        // Another spec finalizer is pending; its owner finishes the job.
        return Ok(());
    }
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        preconditions: Some(Preconditions {
            uid: Some(uid.to_string()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match api.delete(name, &dp).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => return Ok(()),
        Err(e) => return Err(e),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condition_messages() {
        let empty = conditions(&Remaining::new());
        assert_eq!(empty[3]["reason"], "ContentRemoved");
        assert_eq!(empty[4]["status"], "False");
        let mut r = Remaining::new();
        r.insert(
            "pods".to_string(),
            (2, BTreeMap::from([("foregroundDeletion".to_string(), 1)])),
        );
        let c = conditions(&r);
        assert_eq!(
            c[3]["message"],
            "Some resources are remaining: pods has 2 resource instances"
        );
        assert_eq!(
            c[4]["message"],
            "Some content in the namespace has finalizers remaining: foregroundDeletion in 1 resource instances"
        );
    }
}
