//! Emptying a terminating namespace (upstream `pkg/controller/namespace/deletion/
//! namespaced_resources_deleter.go`): every namespaced resource discovery lists with the
//! `delete` verb is deleted — pods first, then the rest — by `deletecollection` where supported,
//! else one by one; what remains is counted into the namespace's conditions; when nothing is
//! left, the `kubernetes` finalizer is removed through `/finalize`.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams, Preconditions, PropagationPolicy};

use super::super::discovery::{Discovery, Resource};
use super::conditions::ConditionUpdater;

/// The spec finalizer the namespace controller owns.
pub(crate) const KUBERNETES_FINALIZER: &str = "kubernetes";
/// Upstream's estimate for content held by finalizers.
const FINALIZER_ESTIMATE_SECONDS: u64 = 15;

/// Why a namespace is not finished yet.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeleteError {
    /// Content remains that should go by itself within about this many seconds.
    #[error("some content remains in the namespace, estimate {0} seconds before it is removed")]
    ResourcesRemaining(u64),
    /// Something failed.
    #[error("{0}")]
    Failed(String),
}

impl From<kube::Error> for DeleteError {
    fn from(e: kube::Error) -> Self {
        DeleteError::Failed(e.to_string())
    }
}

fn code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// Empty and finalize namespace `name` (upstream `namespacedResourcesDeleter.Delete`).
/// `max_grace` caps a pod's grace period, as the simulated kubelet caps it.
pub(crate) async fn delete(
    client: &kube::Client,
    name: &str,
    max_grace: Duration,
) -> Result<(), DeleteError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let Some(mut ns) = api.get_opt(name).await? else {
        return Ok(());
    };
    let Some(deleted_at) = ns.metadata.deletion_timestamp.clone() else {
        return Ok(());
    };
    if ns.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Terminating") {
        let mut terminating = ns.clone();
        terminating
            .status
            .get_or_insert_with(Default::default)
            .phase = Some("Terminating".into());
        match api
            .replace_status(name, &PostParams::default(), &terminating)
            .await
        {
            Ok(updated) => ns = updated,
            Err(e) if code(&e) == Some(404) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    if spec_finalizers(&ns).is_empty() {
        return delete_when_done(&api, &ns).await;
    }
    let estimate = delete_all_content(client, &api, &mut ns, &deleted_at, max_grace).await?;
    if estimate > 0 {
        return Err(DeleteError::ResourcesRemaining(estimate));
    }
    finalize(&api, &ns).await
}

fn spec_finalizers(ns: &Namespace) -> Vec<String> {
    ns.spec
        .as_ref()
        .and_then(|s| s.finalizers.clone())
        .unwrap_or_default()
}

/// Remove `kubernetes` from `spec.finalizers` through `/finalize` (upstream `finalizeNamespace`,
/// retried on conflict with the latest namespace).
async fn finalize(api: &Api<Namespace>, ns: &Namespace) -> Result<(), DeleteError> {
    let mut latest = ns.clone();
    loop {
        let mut rest: Vec<String> = spec_finalizers(&latest)
            .into_iter()
            .filter(|f| f != KUBERNETES_FINALIZER)
            .collect();
        rest.sort();
        rest.dedup();
        let body = Namespace {
            metadata: latest.metadata.clone(),
            spec: Some(k8s_openapi::api::core::v1::NamespaceSpec {
                finalizers: Some(rest),
            }),
            status: None,
        };
        let name = latest.metadata.name.clone().unwrap_or_default();
        match api
            .replace_subresource("finalize", &name, &PostParams::default(), &body)
            .await
        {
            Ok(done) => return delete_when_done(api, &done).await,
            Err(e) if code(&e) == Some(404) => return Ok(()),
            Err(e) if code(&e) == Some(409) => {
                let Some(again) = api.get_opt(&name).await? else {
                    return Ok(());
                };
                if again.metadata.uid != latest.metadata.uid {
                    return Err(DeleteError::Failed(
                        "namespace uid has changed across retries".into(),
                    ));
                }
                latest = again;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// kube-apiserver deletes a terminating namespace as soon as an update leaves it without spec
/// and metadata finalizers (`ShouldDeleteNamespaceDuringUpdate`); kcm-testenv does not yet, so
/// such a namespace is deleted again here (on kube-apiserver it is already gone: a 404).
async fn delete_when_done(api: &Api<Namespace>, ns: &Namespace) -> Result<(), DeleteError> {
    let metadata_finalizers = ns
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| !f.is_empty());
    if !spec_finalizers(ns).is_empty() || metadata_finalizers {
        return Ok(());
    }
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid: ns.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let name = ns.metadata.name.clone().unwrap_or_default();
    match api.delete(&name, &dp).await {
        Ok(_) => Ok(()),
        Err(e) if matches!(code(&e), Some(404 | 409)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// What one resource's deletion left behind (upstream `gvrDeletionMetadata`).
#[derive(Debug, Default)]
struct Remaining {
    estimate: u64,
    count: usize,
    finalizers: BTreeMap<String, usize>,
}

/// What one pass over the namespace found (upstream `allGVRDeletionMetadata`, the errors and
/// the condition updater).
#[derive(Default)]
struct Totals {
    estimate: u64,
    remaining: BTreeMap<String, usize>,
    finalizers: BTreeMap<String, usize>,
    errors: Vec<String>,
    conditions: ConditionUpdater,
}

impl Totals {
    fn record(&mut self, r: &Resource, result: Result<Remaining, (Remaining, String)>) {
        let left = match result {
            Ok(left) => left,
            Err((left, e)) => {
                self.errors.push(e.clone());
                self.conditions.delete_failed(e);
                left
            }
        };
        self.estimate = self.estimate.max(left.estimate);
        if left.count > 0 {
            self.remaining.insert(r.group_resource(), left.count);
            for (f, n) in left.finalizers {
                *self.finalizers.entry(f).or_default() += n;
            }
        }
    }

    fn result(self) -> Result<u64, DeleteError> {
        if self.errors.is_empty() {
            Ok(self.estimate)
        } else {
            Err(DeleteError::Failed(self.errors.join(", ")))
        }
    }
}

fn is_pods(r: &Resource) -> bool {
    r.group.is_empty() && r.version == "v1" && r.plural == "pods"
}

/// Delete everything in the namespace; the seconds to wait before trying again (upstream
/// `deleteAllContent`). The namespace's conditions are written when they change.
async fn delete_all_content(
    client: &kube::Client,
    api: &Api<Namespace>,
    ns: &mut Namespace,
    deleted_at: &Time,
    max_grace: Duration,
) -> Result<u64, DeleteError> {
    let name = ns.metadata.name.clone().unwrap_or_default();
    let mut totals = Totals::default();
    let resources: Vec<Resource> = match Discovery::fetch(client).await {
        Ok(d) => {
            if let Some(failure) = d.failure() {
                totals.errors.push(failure.clone());
                totals
                    .conditions
                    .discovery_failed(&failure, Some(d.failed_count()));
            }
            d.preferred()
                .into_iter()
                .filter(|r| r.namespaced && r.supports(&["delete"]))
                .collect()
        }
        Err(e) => {
            totals.errors.push(e.to_string());
            totals.conditions.discovery_failed(&e.to_string(), None);
            Vec::new()
        }
    };
    // Pods first: the rest waits until every pod has terminated gracefully (and the remaining
    // pods are not counted in the conditions, as upstream does not count them).
    if let Some(pods) = resources.iter().find(|r| is_pods(r)) {
        let result = delete_resource(client, pods, &name, deleted_at, max_grace).await;
        totals.record(pods, result);
        if totals.remaining.contains_key(&pods.group_resource()) {
            write_conditions(api, ns, &totals.conditions).await;
            return totals.result();
        }
    }
    for r in resources.iter().filter(|r| !is_pods(r)) {
        let result = delete_resource(client, r, &name, deleted_at, max_grace).await;
        totals.record(r, result);
    }
    let (remaining, finalizers) = (totals.remaining.clone(), totals.finalizers.clone());
    totals.conditions.content_totals(&remaining, &finalizers);
    write_conditions(api, ns, &totals.conditions).await;
    totals.result()
}

async fn write_conditions(api: &Api<Namespace>, ns: &mut Namespace, updater: &ConditionUpdater) {
    let now = Time(jiff::Timestamp::now());
    let status = ns.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    if !updater.update(conditions, &now) {
        return;
    }
    let name = ns.metadata.name.clone().unwrap_or_default();
    match api.replace_status(&name, &PostParams::default(), ns).await {
        Ok(updated) => *ns = updated,
        Err(e) => {
            tracing::debug!(namespace = %name, error = %e, "sim ns: couldn't update status conditions")
        }
    }
}

/// Delete one resource's content in the namespace and count what is left (upstream
/// `deleteAllContentForGroupVersionResource`).
async fn delete_resource(
    client: &kube::Client,
    r: &Resource,
    ns: &str,
    deleted_at: &Time,
    max_grace: Duration,
) -> Result<Remaining, (Remaining, String)> {
    let fail = |estimate: u64, e: String| {
        (
            Remaining {
                estimate,
                ..Remaining::default()
            },
            e,
        )
    };
    let estimate = if r.group.is_empty() && r.plural == "pods" {
        pods_estimate(client, ns, deleted_at, max_grace)
            .await
            .map_err(|e| fail(0, e.to_string()))?
    } else {
        0
    };
    let api = r.api(client, Some(ns));
    let background = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    let mut collection_deleted = false;
    if r.supports(&["deletecollection"]) {
        match api
            .delete_collection(&background, &ListParams::default())
            .await
        {
            Ok(_) => collection_deleted = true,
            Err(e) if matches!(code(&e), Some(404 | 405)) => {}
            Err(e) => return Err(fail(estimate, e.to_string())),
        }
    }
    if !r.supports(&["list"]) {
        return Ok(Remaining {
            estimate,
            ..Remaining::default()
        });
    }
    if !collection_deleted {
        let items = match api.list_metadata(&ListParams::default()).await {
            Ok(l) => l.items,
            Err(e) if matches!(code(&e), Some(404 | 405)) => Vec::new(),
            Err(e) => return Err(fail(estimate, e.to_string())),
        };
        for item in items {
            let name = item.metadata.name.unwrap_or_default();
            match api.delete(&name, &background).await {
                Ok(_) => {}
                Err(e) if matches!(code(&e), Some(404 | 405)) => {}
                Err(e) => return Err(fail(estimate, e.to_string())),
            }
        }
    }
    let left = match api.list_metadata(&ListParams::default()).await {
        Ok(l) => l.items,
        Err(e) if matches!(code(&e), Some(404 | 405)) => Vec::new(),
        Err(e) => return Err(fail(estimate, e.to_string())),
    };
    if left.is_empty() {
        return Ok(Remaining::default());
    }
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for item in &left {
        for f in item.metadata.finalizers.iter().flatten() {
            *finalizers.entry(f.clone()).or_default() += 1;
        }
    }
    let count = left.len();
    if estimate > 0 {
        return Ok(Remaining {
            estimate,
            count,
            finalizers,
        });
    }
    if !finalizers.is_empty() {
        return Ok(Remaining {
            estimate: FINALIZER_ESTIMATE_SECONDS,
            count,
            finalizers,
        });
    }
    let gvr = format!("{}/{}, Resource={}", r.group, r.version, r.plural);
    Err((
        Remaining {
            estimate,
            count,
            ..Remaining::default()
        },
        format!("unexpected items still remain in namespace: {ns} for gvr: {gvr}"),
    ))
}

/// The longest grace period of the namespace's pods still running, in seconds, or 0 once that
/// long has passed since the namespace's deletion (upstream `estimateGracefulTermination`). A
/// pod's grace is capped at `max_grace`, as the simulated kubelet caps it.
async fn pods_estimate(
    client: &kube::Client,
    ns: &str,
    deleted_at: &Time,
    max_grace: Duration,
) -> Result<u64, kube::Error> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let cap = max_grace.as_secs_f64().ceil() as i64;
    let mut estimate = 0i64;
    for pod in pods.list(&ListParams::default()).await?.items {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded" | "Failed")) {
            continue;
        }
        if let Some(grace) = pod
            .spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
        {
            estimate = estimate.max(grace.min(cap));
        }
    }
    let since = jiff::Timestamp::now().duration_since(deleted_at.0);
    if since >= jiff::SignedDuration::from_secs(estimate) {
        return Ok(0);
    }
    Ok(estimate.max(0) as u64)
}
