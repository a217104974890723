//! Adopting and releasing dependents (upstream `pkg/controller/controller_ref_manager.go`:
//! `BaseControllerRefManager.ClaimObject`, `PodControllerRefManager.ClaimPods`,
//! `ReplicaSetControllerRefManager.ClaimReplicaSets`, `RecheckDeletionTimestamp`).
//!
//! [`claim_decision`] is the pure rule table; [`ControllerRefManager`] applies it
//! with strategic-merge patches:
//!
//! * adopt: `{"metadata":{"ownerReferences":[{"apiVersion":…,"kind":…,"name":…,"uid":…,"controller":true,"blockOwnerDeletion":true}],"uid":"<dependent uid>"}}`
//! * release: `{"metadata":{"uid":"<dependent uid>","ownerReferences":[{"$patch":"delete","uid":"<owner uid>"}]}}`
//!
//! The first adoption of a claim pass runs the `can_adopt` check once (a live,
//! uncached read of the owner; see [`recheck_deletion_timestamp`]); if it fails
//! every adoption of the pass fails with it.

use std::fmt;
use std::future::Future;
use std::ops::Deref;

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::Serialize;

use crate::api_write::log_write;
use crate::error::ControlError;
use crate::pod_control::PodControl;
use crate::pod_util::controller_ref;
use crate::rs_control::ReplicaSetControl;

/// The controller doing the claiming.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ControllerRefOwner {
    /// e.g. `apps/v1`.
    pub api_version: String,
    /// e.g. `ReplicaSet`.
    pub kind: String,
    /// Owner name.
    pub name: String,
    /// Owner namespace (dependents in other namespaces are never adopted).
    pub namespace: String,
    /// Owner UID.
    pub uid: String,
    /// Whether the owner (as cached) has a deletionTimestamp.
    pub deleting: bool,
}

impl ControllerRefOwner {
    /// The owner described by `obj`'s type and metadata.
    pub fn of<K>(obj: &K) -> Self
    where
        K: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta>,
    {
        let m = obj.metadata();
        Self {
            api_version: K::API_VERSION.to_string(),
            kind: K::KIND.to_string(),
            name: m.name.clone().unwrap_or_default(),
            namespace: m.namespace.clone().unwrap_or_default(),
            uid: m.uid.clone().unwrap_or_default(),
            deleting: m.deletion_timestamp.is_some(),
        }
    }

    /// The controller reference dependents get: controller and blockOwnerDeletion true.
    pub fn controller_ref(&self) -> OwnerReference {
        OwnerReference {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }
}

/// What to do with one candidate dependent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimDecision {
    /// Not ours (or not to be touched now): leave it, not claimed.
    Ignore,
    /// Already ours and matching: claimed, no API call.
    Keep,
    /// Ours but no longer matching: release it (not claimed).
    Release,
    /// A matching orphan: adopt it (claimed if the patch succeeds).
    Adopt,
}

/// Upstream `ClaimObject`'s rules for a dependent with metadata `dep` whose
/// labels `matches` the owner's selector.
pub fn claim_decision(
    owner: &ControllerRefOwner,
    dep: &ObjectMeta,
    matches: bool,
) -> ClaimDecision {
    if let Some(r) = controller_ref(dep) {
        if r.uid != owner.uid {
            return ClaimDecision::Ignore;
        }
        if matches {
            // Owned and matching: claimed even while the owner is being deleted.
            return ClaimDecision::Keep;
        }
        if owner.deleting {
            return ClaimDecision::Ignore;
        }
        return ClaimDecision::Release;
    }
    if owner.deleting || !matches {
        return ClaimDecision::Ignore;
    }
    if dep.deletion_timestamp.is_some() {
        return ClaimDecision::Ignore;
    }
    let dep_ns = dep.namespace.as_deref().unwrap_or_default();
    if !owner.namespace.is_empty() && owner.namespace != dep_ns {
        return ClaimDecision::Ignore;
    }
    ClaimDecision::Adopt
}

#[derive(Serialize)]
struct AdoptPatch<'a> {
    metadata: AdoptMeta<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AdoptMeta<'a> {
    owner_references: [OwnerRefJson<'a>; 1],
    uid: &'a str,
}

/// An owner reference serialized in Go's field order (k8s-openapi sorts keys).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OwnerRefJson<'a> {
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    uid: &'a str,
    controller: bool,
    block_owner_deletion: bool,
}

#[derive(Serialize)]
struct ReleasePatch<'a> {
    metadata: ReleaseMeta<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReleaseMeta<'a> {
    uid: &'a str,
    owner_references: [DeleteOwnerRef<'a>; 1],
}

#[derive(Serialize)]
struct DeleteOwnerRef<'a> {
    #[serde(rename = "$patch")]
    patch: &'static str,
    uid: &'a str,
}

/// The adoption patch (upstream `ownerRefControllerPatch`).
pub fn adopt_patch(
    owner: &ControllerRefOwner,
    dependent_uid: &str,
) -> Result<String, ControlError> {
    Ok(serde_json::to_string(&AdoptPatch {
        metadata: AdoptMeta {
            owner_references: [OwnerRefJson {
                api_version: &owner.api_version,
                kind: &owner.kind,
                name: &owner.name,
                uid: &owner.uid,
                controller: true,
                block_owner_deletion: true,
            }],
            uid: dependent_uid,
        },
    })?)
}

/// The release patch (upstream `GenerateDeleteOwnerRefStrategicMergeBytes`).
pub fn release_patch(owner_uid: &str, dependent_uid: &str) -> Result<String, ControlError> {
    Ok(serde_json::to_string(&ReleasePatch {
        metadata: ReleaseMeta {
            uid: dependent_uid,
            owner_references: [DeleteOwnerRef {
                patch: "delete",
                uid: owner_uid,
            }],
        },
    })?)
}

fn go_time(t: &Time) -> String {
    // Go's time.Time String() for a UTC instant.
    k8s_openapi::jiff::fmt::strtime::format("%Y-%m-%d %H:%M:%S +0000 UTC", t.0)
        .unwrap_or_else(|_| t.0.to_string())
}

/// Upstream `RecheckDeletionTimestamp` + the ReplicaSet/Deployment controllers'
/// UID check, applied to the result of a fresh (uncached) GET of the owner.
pub fn recheck_deletion_timestamp(
    owner: &ControllerRefOwner,
    fresh: Result<ObjectMeta, ControlError>,
) -> Result<(), String> {
    let fresh = fresh.map_err(|e| format!("can't recheck DeletionTimestamp: {e}"))?;
    let fresh_uid = fresh.uid.as_deref().unwrap_or_default();
    if fresh_uid != owner.uid {
        return Err(format!(
            "can't recheck DeletionTimestamp: original {} {}/{} is gone: got uid {}, wanted {}",
            owner.kind, owner.namespace, owner.name, fresh_uid, owner.uid
        ));
    }
    if let Some(ts) = &fresh.deletion_timestamp {
        return Err(format!(
            "{}/{} has just been deleted at {}",
            fresh.namespace.as_deref().unwrap_or_default(),
            fresh.name.as_deref().unwrap_or_default(),
            go_time(ts)
        ));
    }
    Ok(())
}

/// A live `can_adopt` check: awaits `get_owner`, a fresh (uncached) GET of the owner's
/// metadata that runs only when the first adoption of a claim pass needs it, and applies
/// [`recheck_deletion_timestamp`].
///
/// ```
/// use kcm_controller::controller_ref_manager::{ControllerRefOwner, live_can_adopt};
/// use kcm_controller::ControlError;
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// # async fn example(api: kube::Api<k8s_openapi::api::apps::v1::Deployment>, owner: ControllerRefOwner) {
/// let name = owner.name.clone();
/// let can_adopt = live_can_adopt(owner, async move {
///     api.get(&name).await.map(|d| d.metadata).map_err(ControlError::from)
/// });
/// # let _: Result<ObjectMeta, ControlError> = Ok(ObjectMeta::default());
/// # }
/// ```
pub fn live_can_adopt(
    owner: ControllerRefOwner,
    get_owner: impl Future<Output = Result<ObjectMeta, ControlError>> + Send + 'static,
) -> CanAdopt<'static> {
    Box::new(move || {
        Box::pin(async move {
            let fresh = get_owner.await;
            recheck_deletion_timestamp(&owner, fresh)
        })
    })
}

/// The once-only adoption pre-check (`CanAdoptFunc`).
pub type CanAdopt<'a> = Box<dyn FnOnce() -> BoxFuture<'a, Result<(), String>> + Send + 'a>;

/// Claimed dependents and the aggregated error of a claim pass.
#[derive(Debug)]
pub struct ClaimResult<R> {
    /// Dependents now owned (kept or adopted), in input order.
    pub claimed: Vec<R>,
    /// All adopt/release failures (`None` if none).
    pub error: Option<ControlError>,
}

impl<R> ClaimResult<R> {
    /// `Ok(claimed)` or the error, as the controllers use it.
    pub fn into_result(self) -> Result<Vec<R>, ControlError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.claimed),
        }
    }
}

/// Claims dependents for one owner during one sync (create a new one per sync,
/// as the `can_adopt` check runs at most once).
pub struct ControllerRefManager<'a> {
    owner: ControllerRefOwner,
    can_adopt: Option<CanAdopt<'a>>,
    can_adopt_result: Option<Result<(), String>>,
}

impl fmt::Debug for ControllerRefManager<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ControllerRefManager")
            .field("owner", &self.owner)
            .field("can_adopt_result", &self.can_adopt_result)
            .finish_non_exhaustive()
    }
}

enum Target<'c> {
    Pods(&'c dyn PodControl),
    ReplicaSets(&'c dyn ReplicaSetControl),
}

impl Target<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Target::Pods(_) => "Pod",
            Target::ReplicaSets(_) => "ReplicaSet",
        }
    }

    fn resource(&self) -> &'static str {
        match self {
            Target::Pods(_) => "pods",
            Target::ReplicaSets(_) => "replicasets",
        }
    }

    async fn patch(&self, ns: &str, name: &str, body: &str) -> Result<(), ControlError> {
        match self {
            Target::Pods(c) => c.patch_pod(ns, name, body).await,
            Target::ReplicaSets(c) => c.patch_replica_set(ns, name, body).await,
        }
    }
}

impl<'a> ControllerRefManager<'a> {
    /// A manager for `owner` whose first adoption runs `can_adopt`.
    pub fn new(owner: ControllerRefOwner, can_adopt: CanAdopt<'a>) -> Self {
        Self {
            owner,
            can_adopt: Some(can_adopt),
            can_adopt_result: None,
        }
    }

    /// A manager without an adoption pre-check.
    pub fn without_recheck(owner: ControllerRefOwner) -> Self {
        Self {
            owner,
            can_adopt: None,
            can_adopt_result: Some(Ok(())),
        }
    }

    /// The owner.
    pub fn owner(&self) -> &ControllerRefOwner {
        &self.owner
    }

    async fn can_adopt(&mut self) -> Result<(), String> {
        if let Some(r) = &self.can_adopt_result {
            return r.clone();
        }
        let r = match self.can_adopt.take() {
            Some(f) => f().await,
            None => Ok(()),
        };
        self.can_adopt_result = Some(r.clone());
        r
    }

    /// Adopts matching orphan pods and releases owned pods that stopped matching
    /// (upstream `ClaimPods`); `matches` is the selector (plus any filters).
    pub async fn claim_pods<P, R>(
        &mut self,
        control: &dyn PodControl,
        pods: &[R],
        matches: impl Fn(&P) -> bool,
    ) -> ClaimResult<R>
    where
        P: k8s_openapi::Metadata<Ty = ObjectMeta>,
        R: Deref<Target = P> + Clone,
    {
        self.claim(Target::Pods(control), pods, matches).await
    }

    /// Adopts matching orphan ReplicaSets and releases owned ones that stopped
    /// matching (upstream `ClaimReplicaSets`).
    pub async fn claim_replica_sets<T, R>(
        &mut self,
        control: &dyn ReplicaSetControl,
        sets: &[R],
        matches: impl Fn(&T) -> bool,
    ) -> ClaimResult<R>
    where
        T: k8s_openapi::Metadata<Ty = ObjectMeta>,
        R: Deref<Target = T> + Clone,
    {
        self.claim(Target::ReplicaSets(control), sets, matches)
            .await
    }

    async fn claim<T, R>(
        &mut self,
        target: Target<'_>,
        objs: &[R],
        matches: impl Fn(&T) -> bool,
    ) -> ClaimResult<R>
    where
        T: k8s_openapi::Metadata<Ty = ObjectMeta>,
        R: Deref<Target = T> + Clone,
    {
        let mut claimed = Vec::new();
        let mut errors = Vec::new();
        for obj in objs {
            let meta = obj.metadata();
            let ns = meta.namespace.as_deref().unwrap_or_default();
            let name = meta.name.as_deref().unwrap_or_default();
            let uid = meta.uid.as_deref().unwrap_or_default();
            match claim_decision(&self.owner, meta, matches(obj)) {
                ClaimDecision::Ignore => {}
                ClaimDecision::Keep => claimed.push(obj.clone()),
                ClaimDecision::Release => {
                    let res = match release_patch(&self.owner.uid, uid) {
                        Ok(body) => target.patch(ns, name, &body).await,
                        Err(e) => Err(e),
                    };
                    log_write(
                        "patch",
                        target.resource(),
                        ns,
                        name,
                        format_args!(
                            "release from {} {ns}/{}: labels no longer match its selector",
                            self.owner.kind, self.owner.name
                        ),
                        res.as_ref().map(|_| ()),
                    );
                    // Gone, or no longer carrying our reference (422): nothing to release.
                    if let Err(e) = res
                        && !e.is_not_found()
                        && !e.is_invalid()
                    {
                        errors.push(e);
                    }
                }
                ClaimDecision::Adopt => {
                    if let Err(why) = self.can_adopt().await {
                        errors.push(ControlError::Other(format!(
                            "can't adopt {} {ns}/{name} ({uid}): {why}",
                            target.kind()
                        )));
                        continue;
                    }
                    let res = match adopt_patch(&self.owner, uid) {
                        Ok(body) => target.patch(ns, name, &body).await,
                        Err(e) => Err(e),
                    };
                    log_write(
                        "patch",
                        target.resource(),
                        ns,
                        name,
                        format_args!(
                            "adopt by {} {ns}/{}: orphan whose labels match its selector",
                            self.owner.kind, self.owner.name
                        ),
                        res.as_ref().map(|_| ()),
                    );
                    match res {
                        Ok(()) => claimed.push(obj.clone()),
                        Err(e) if e.is_not_found() => {}
                        Err(e) => errors.push(e),
                    }
                }
            }
        }
        ClaimResult {
            claimed,
            error: ControlError::aggregate(errors),
        }
    }
}

#[cfg(test)]
#[path = "controller_ref_manager_tests.rs"]
mod tests;
