//! The index paths answer as upstream's namespace-wide reads, over generated namespaces.
//!
//! Each case builds two caches from the same generated history (objects added, then updated
//! to another controller or labels, or deleted): one with the indexes the controllers register,
//! one without. Then:
//!
//! * `getReplicaSetsForDeployment`: claiming [`claim_candidates`] read through the index (and
//!   through the fallback) must give what claiming every ReplicaSet of the namespace gives,
//!   upstream's algorithm, with the namespace in name order: the same claimed ReplicaSets, the
//!   same adopt and release patches in the same order, the same error, and the same number of
//!   uncached re-reads of the Deployment (`RecheckDeletionTimestamp`);
//! * `FilterPodsByOwner`: the same pods, in the same order, as a namespace scan keeping the
//!   owner's pods then the orphans;
//! * `getIndirectlyRelatedPods`: the same pods as listing, for each ReplicaSet with the same
//!   controller (in any namespace), its namespace with its selector.
//!
//! The namespaces hold orphans, objects of other controllers, of a deleted owner (same name,
//! old UID), of a reference with the owner's UID but another kind and name, non-controller
//! references to the owner, labels that do or do not match, objects being deleted, objects in
//! another namespace; the owner may be being deleted, its re-read may fail, patches may fail
//! (not found, invalid, conflict).
//!
//! Case count: 1,024 per property (`PROPTEST_CASES` overrides it).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, Time,
};
use k8s_openapi::jiff::Timestamp;
use kcm_controller::ControlError;
use kcm_controller::PodView;
use kcm_controller::controller_ref_manager::{ControllerRefManager, ControllerRefOwner};
use kcm_controller::label_index::POD_TEMPLATE_HASH_INDEX;
use kcm_controller::owner_index::{
    CONTROLLER_UID_INDEX, Owner, claim_candidates, controller_uid_index_fn, filter_by_owner,
};
use kcm_controller::pod_util::controller_ref;
use kcm_controller::related_pods::indirectly_related_pods;
use kcm_controller::rs_control::ReplicaSetControl;
use kcm_store::{Lister, Selector};
use parking_lot::Mutex;
use proptest::prelude::*;
use proptest::strategy::ValueTree;

#[path = "owner_index_equivalence/namespaces.rs"]
mod namespaces;
use namespaces::*;

/// What a patch of one ReplicaSet answers.
#[derive(Debug, Clone, Copy)]
enum PatchResult {
    Ok,
    NotFound,
    Invalid,
    Conflict,
}

fn patch_result() -> impl Strategy<Value = PatchResult> {
    prop_oneof![
        6 => Just(PatchResult::Ok),
        1 => Just(PatchResult::NotFound),
        1 => Just(PatchResult::Invalid),
        1 => Just(PatchResult::Conflict),
    ]
}

/// Records patches and answers them from a table by name.
#[derive(Default)]
struct RecordingControl {
    results: HashMap<String, PatchResult>,
    patches: Mutex<Vec<(String, String, String)>>,
}

impl ReplicaSetControl for RecordingControl {
    fn patch_replica_set<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        patch: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            self.patches
                .lock()
                .push((namespace.into(), name.into(), patch.into()));
            match self.results.get(name).copied().unwrap_or(PatchResult::Ok) {
                PatchResult::Ok => Ok(()),
                PatchResult::NotFound => Err(ControlError::not_found("replicasets", name)),
                PatchResult::Invalid => Err(ControlError::api(422, "Invalid", "invalid")),
                PatchResult::Conflict => Err(ControlError::api(409, "Conflict", "conflict")),
            }
        })
    }
}

/// What one claim pass did.
#[derive(Debug, PartialEq, Eq)]
struct ClaimOutcome {
    claimed: Vec<String>,
    patches: Vec<(String, String, String)>,
    error: Option<String>,
    rechecks: usize,
}

/// The Deployment the ReplicaSets are claimed for.
fn deployment(deleting: bool, selector: usize) -> Deployment {
    let mut d = Deployment::default();
    d.metadata.namespace = Some(NS.into());
    d.metadata.name = Some(OWNER_NAME.into());
    d.metadata.uid = Some(OWNER_UID.into());
    d.metadata.deletion_timestamp = deleting.then_some(Time(Timestamp::UNIX_EPOCH));
    d.spec.selector = match selector {
        0 => LabelSelector {
            match_labels: labels(1),
            ..Default::default()
        },
        1 => LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "app".into(),
                operator: "In".into(),
                values: Some(vec!["web".into(), "db".into()]),
            }]),
            ..Default::default()
        },
        _ => LabelSelector {
            match_labels: labels(3),
            ..Default::default()
        },
    };
    d
}

/// `ClaimReplicaSets` of `sets` for `d` (the re-read of `d` succeeds if `recheck_ok`).
async fn claim(
    d: &Deployment,
    recheck_ok: bool,
    results: &HashMap<String, PatchResult>,
    sets: &[Arc<ReplicaSet>],
) -> ClaimOutcome {
    let selector = Selector::from_label_selector(&d.spec.selector).expect("selector");
    let rechecks = Arc::new(AtomicUsize::new(0));
    let counter = rechecks.clone();
    let can_adopt = Box::new(move || -> BoxFuture<'static, Result<(), String>> {
        Box::pin(async move {
            counter.fetch_add(1, Ordering::SeqCst);
            if recheck_ok {
                Ok(())
            } else {
                Err("a/web has just been deleted".to_string())
            }
        })
    });
    let control = RecordingControl {
        results: results.clone(),
        ..Default::default()
    };
    let mut manager = ControllerRefManager::new(ControllerRefOwner::of(d), can_adopt);
    let result = manager
        .claim_replica_sets(&control, sets, |rs: &ReplicaSet| {
            selector.matches_opt(rs.metadata.labels.as_ref())
        })
        .await;
    ClaimOutcome {
        claimed: names(&result.claimed),
        patches: control.patches.lock().clone(),
        error: result.error.map(|e| e.to_string()),
        rechecks: rechecks.load(Ordering::SeqCst),
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

/// Upstream's `FilterPodsByOwner` over a namespace scan: the owner's pods, then the orphans.
fn filter_pods_by_owner_reference(
    lister: &Lister<PodView>,
    owner: Owner<'_>,
    include_orphans: bool,
) -> Vec<Arc<PodView>> {
    let all = by_name(
        lister
            .namespaced(owner.namespace)
            .list(&Selector::everything()),
    );
    let mut out: Vec<Arc<PodView>> = all
        .iter()
        .filter(|p| {
            controller_ref(&p.metadata)
                .is_some_and(|r| r.kind == owner.kind && r.name == owner.name && r.uid == owner.uid)
        })
        .cloned()
        .collect();
    if include_orphans {
        out.extend(
            all.iter()
                .filter(|p| controller_ref(&p.metadata).is_none())
                .cloned(),
        );
    }
    out
}

/// Selectors of generated sibling ReplicaSets (the last one is invalid).
fn sibling_selector(i: usize) -> LabelSelector {
    let expr = |op: &str, values: &[&str]| LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: "pod-template-hash".into(),
            operator: op.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }]),
        ..Default::default()
    };
    match i % 7 {
        0 => LabelSelector {
            match_labels: labels(4),
            ..Default::default()
        },
        1 => LabelSelector {
            match_labels: labels(5),
            ..Default::default()
        },
        2 => expr("In", &["h1"]),
        3 => expr("In", &["h1", "h2"]),
        4 => LabelSelector {
            match_labels: labels(1),
            ..Default::default()
        },
        5 => LabelSelector::default(),
        _ => expr("Bogus", &["h1"]),
    }
}

/// Upstream's `getIndirectlyRelatedPods` over namespace-wide lists: every ReplicaSet with the
/// same controller (a scan of all), the pods of its namespace its selector matches, by UID.
fn related_pods_reference(
    rs_lister: &Lister<ReplicaSet>,
    pod_lister: &Lister<PodView>,
    rs: &ReplicaSet,
) -> Vec<String> {
    let Some(ctrl) = controller_ref(&rs.metadata) else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    for sibling in rs_lister.list(&Selector::everything()) {
        if controller_ref(&sibling.metadata).is_none_or(|r| r.uid != ctrl.uid) {
            continue;
        }
        let Ok(selector) = Selector::from_label_selector(&sibling.spec.selector) else {
            continue;
        };
        let ns = sibling.metadata.namespace.as_deref().unwrap_or_default();
        for p in pod_lister.namespaced(ns).list(&selector) {
            seen.insert(p.metadata.uid.clone().unwrap_or_default());
        }
    }
    let mut uids: Vec<String> = seen.into_iter().collect();
    uids.sort();
    uids
}

/// One generated claim: the namespace's history, the owner, the API's answers.
#[derive(Debug, Clone)]
struct ClaimCase {
    objs: Vec<Obj>,
    changes: Vec<Change>,
    owner_deleting: bool,
    selector: usize,
    recheck_ok: bool,
    results: Vec<PatchResult>,
}

fn claim_case() -> impl Strategy<Value = ClaimCase> {
    (
        prop::collection::vec(obj(), 0..24),
        prop::collection::vec(change(), 0..8),
        prop::bool::weighted(0.2),
        0usize..3,
        prop::bool::weighted(0.8),
        prop::collection::vec(patch_result(), 16),
    )
        .prop_map(
            |(objs, changes, owner_deleting, selector, recheck_ok, results)| ClaimCase {
                objs,
                changes,
                owner_deleting,
                selector,
                recheck_ok,
                results,
            },
        )
}

/// A claim case run three ways.
struct ClaimRun {
    namespace_len: usize,
    candidates: Vec<String>,
    fallback_candidates: Vec<String>,
    /// Upstream: claiming every ReplicaSet of the namespace (in name order).
    reference: ClaimOutcome,
    /// Claiming the candidates read through the index.
    through_index: ClaimOutcome,
}

fn run_claim_case(case: &ClaimCase) -> ClaimRun {
    let sets: Vec<ReplicaSet> = case.objs.iter().map(replica_set).collect();
    let (indexed, plain) = stores(
        sets,
        &case.changes,
        |rs, c, l| ReplicaSet {
            metadata: changed(&rs.metadata, c, l, "Deployment"),
            ..rs.clone()
        },
        &[(CONTROLLER_UID_INDEX, controller_uid_index_fn())],
    );
    let results: HashMap<String, PatchResult> = case
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("obj-{i:02}"), *r))
        .collect();
    let d = deployment(case.owner_deleting, case.selector);
    let rt = rt();
    let namespace = by_name(plain.namespaced(NS).list(&Selector::everything()));
    let candidates = claim_candidates(&indexed, NS, OWNER_UID);
    ClaimRun {
        namespace_len: namespace.len(),
        fallback_candidates: names(&claim_candidates(&plain, NS, OWNER_UID)),
        reference: rt.block_on(claim(&d, case.recheck_ok, &results, &namespace)),
        through_index: rt.block_on(claim(&d, case.recheck_ok, &results, &candidates)),
        candidates: names(&candidates),
    }
}

/// The generator is not vacuous: over 256 cases the reference claim adopts, releases, keeps,
/// fails, and rechecks the owner, and the namespace holds objects the index path never reads.
#[test]
fn generated_claims_reach_every_outcome() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = claim_case();
    let (mut adopts, mut releases, mut kept, mut errors, mut rechecks, mut skipped) =
        (0, 0, 0, 0, 0, 0);
    for _ in 0..256 {
        let case = strategy.new_tree(&mut runner).expect("case").current();
        let run = run_claim_case(&case);
        let r = &run.reference;
        adopts += r.patches.iter().filter(|p| !p.2.contains("$patch")).count();
        releases += r.patches.iter().filter(|p| p.2.contains("$patch")).count();
        kept += r.claimed.len();
        errors += usize::from(r.error.is_some());
        rechecks += r.rechecks;
        skipped += run.namespace_len - run.candidates.len();
    }
    for (what, n) in [
        ("adoptions", adopts),
        ("releases", releases),
        ("claimed", kept),
        ("errors", errors),
        ("rechecks", rechecks),
        ("objects of other controllers", skipped),
    ] {
        assert!(n >= 20, "only {n} {what} in 256 cases");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// `getReplicaSetsForDeployment` through the index claims and writes as upstream's
    /// namespace-wide claim.
    #[test]
    fn replica_set_claim_through_the_index_is_upstream_s(case in claim_case()) {
        let run = run_claim_case(&case);
        prop_assert!(run.candidates.len() <= run.namespace_len);
        prop_assert_eq!(&run.candidates, &run.fallback_candidates);
        prop_assert_eq!(&run.through_index, &run.reference);
    }

    /// `FilterPodsByOwner` through the index lists the pods of a namespace scan, in order.
    #[test]
    fn filter_by_owner_through_the_index_is_the_namespace_scan(
        objs in prop::collection::vec(obj(), 0..24),
        changes in prop::collection::vec(change(), 0..8),
        include_orphans in any::<bool>(),
    ) {
        let pods: Vec<PodView> = objs.iter().map(pod).collect();
        let (indexed, plain) = stores(
            pods,
            &changes,
            |p, c, l| PodView {
                metadata: changed(&p.metadata, c, l, "ReplicaSet"),
                ..p.clone()
            },
            &[(CONTROLLER_UID_INDEX, controller_uid_index_fn())],
        );
        let owner = Owner { kind: "ReplicaSet", namespace: NS, name: OWNER_NAME, uid: OWNER_UID };
        let reference = names(&filter_pods_by_owner_reference(&plain, owner, include_orphans));
        prop_assert_eq!(names(&filter_by_owner(&indexed, owner, include_orphans)), reference.clone());
        prop_assert_eq!(names(&filter_by_owner(&plain, owner, include_orphans)), reference);
    }

    /// `getIndirectlyRelatedPods` through the indexes finds the pods of namespace-wide lists.
    #[test]
    fn related_pods_through_the_indexes_are_upstream_s(
        sets in prop::collection::vec((obj(), 0usize..7, 0usize..3), 1..12),
        pods in prop::collection::vec((obj(), any::<prop::sample::Index>()), 0..32),
        target in any::<prop::sample::Index>(),
    ) {
        // ReplicaSets controlled by one of two Deployments or none, with assorted selectors.
        let sets: Vec<ReplicaSet> = sets
            .iter()
            .enumerate()
            .map(|(i, (o, sel, d))| {
                let mut meta = metadata(o, "Deployment");
                meta.name = Some(format!("rs-{i:02}"));
                meta.uid = Some(format!("rs-uid-{i:02}"));
                meta.owner_references = match d {
                    0 => Some(vec![owner_ref("Deployment", "web", "d1", true)]),
                    1 => Some(vec![owner_ref("Deployment", "db", "d2", true)]),
                    _ => None,
                };
                let mut rs = ReplicaSet { metadata: meta, ..Default::default() };
                rs.spec.selector = sibling_selector(*sel);
                rs
            })
            .collect();
        // Pods controlled by one of the ReplicaSets, or as generated.
        let pods: Vec<PodView> = pods
            .iter()
            .enumerate()
            .map(|(i, (o, rs))| {
                let mut p = pod(o);
                p.metadata.name = Some(format!("pod-{i:02}"));
                p.metadata.uid = Some(format!("pod-uid-{i:02}"));
                if matches!(o.ctrl, Ctrl::Owner) {
                    let rs = &sets[rs.index(sets.len())];
                    let name = rs.metadata.name.clone().unwrap_or_default();
                    let uid = rs.metadata.uid.clone().unwrap_or_default();
                    p.metadata.owner_references =
                        Some(vec![owner_ref("ReplicaSet", &name, &uid, true)]);
                }
                p
            })
            .collect();
        let rs = sets[target.index(sets.len())].clone();
        let (rs_indexed, rs_plain) = stores(
            sets,
            &[],
            |rs, _, _| rs.clone(),
            &[(CONTROLLER_UID_INDEX, controller_uid_index_fn())],
        );
        let (pods_indexed, pods_plain) = stores(
            pods,
            &[],
            |p, _, _| p.clone(),
            &[
                (CONTROLLER_UID_INDEX, controller_uid_index_fn()),
                (POD_TEMPLATE_HASH_INDEX.name, POD_TEMPLATE_HASH_INDEX.index_fn()),
            ],
        );
        let uids = |pods: Vec<Arc<PodView>>| {
            let mut v: Vec<String> =
                pods.iter().map(|p| p.metadata.uid.clone().unwrap_or_default()).collect();
            v.sort();
            v
        };
        let reference = related_pods_reference(&rs_plain, &pods_plain, &rs);
        let through_index = indirectly_related_pods(&rs_indexed, &pods_indexed, &rs);
        prop_assert_eq!(through_index.len(), reference.len(), "each pod once");
        prop_assert_eq!(uids(through_index), reference.clone());
        prop_assert_eq!(uids(indirectly_related_pods(&rs_plain, &pods_plain, &rs)), reference);
    }
}
