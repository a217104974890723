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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::jiff::Timestamp;
use kcm_controller::ControlError;
use kcm_controller::PodView;
use kcm_controller::controller_ref_manager::{ControllerRefManager, ControllerRefOwner};
use kcm_controller::label_index::POD_TEMPLATE_HASH_INDEX;
use kcm_controller::owner_index::{
    CONTROLLER_UID_INDEX, Dependent, Owner, claim_candidates, controller_uid_index_fn,
    filter_by_owner,
};
use kcm_controller::pod_util::controller_ref;
use kcm_controller::related_pods::indirectly_related_pods;
use kcm_controller::rs_control::ReplicaSetControl;
use kcm_store::{Lister, ObjectKey, Selector, Store};
use parking_lot::Mutex;
use proptest::prelude::*;
use proptest::strategy::ValueTree;

const NS: &str = "a";
const OTHER_NS: &str = "b";
const OWNER_UID: &str = "uid-owner";
const OWNER_NAME: &str = "web";

/// Who controls a generated object.
#[derive(Debug, Clone, Copy)]
enum Ctrl {
    /// Nobody: an orphan.
    Orphan,
    /// The owner (its kind, name and UID).
    Owner,
    /// The owner's UID under another kind and name.
    OwnerUidOtherRef,
    /// Another live controller.
    Foreign,
    /// A deleted owner of the same name (an old UID).
    DeletedOwner,
    /// A reference to the owner without `controller: true` (still an orphan).
    NonController,
}

fn ctrl() -> impl Strategy<Value = Ctrl> {
    prop_oneof![
        3 => Just(Ctrl::Orphan),
        3 => Just(Ctrl::Owner),
        1 => Just(Ctrl::OwnerUidOtherRef),
        2 => Just(Ctrl::Foreign),
        1 => Just(Ctrl::DeletedOwner),
        1 => Just(Ctrl::NonController),
    ]
}

/// Label sets the generated selectors match or not.
const LABELS: &[&[(&str, &str)]] = &[
    &[],
    &[("app", "web")],
    &[("app", "db")],
    &[("app", "web"), ("tier", "x")],
    &[("app", "web"), ("pod-template-hash", "h1")],
    &[("app", "web"), ("pod-template-hash", "h2")],
    &[("app", "db"), ("pod-template-hash", "h1")],
    &[("pod-template-hash", "h1")],
];

/// One generated object: namespace, name, controller, labels, being deleted.
#[derive(Debug, Clone)]
struct Obj {
    other_ns: bool,
    name: u8,
    ctrl: Ctrl,
    labels: usize,
    deleting: bool,
}

fn obj() -> impl Strategy<Value = Obj> {
    (
        prop::bool::weighted(0.2),
        0u8..16,
        ctrl(),
        0..LABELS.len(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(other_ns, name, ctrl, labels, deleting)| Obj {
            other_ns,
            name,
            ctrl,
            labels,
            deleting,
        })
}

/// A change after the objects were added: a new controller and labels, or a deletion.
#[derive(Debug, Clone)]
enum Change {
    Update(usize, Ctrl, usize),
    Delete(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (any::<prop::sample::Index>(), ctrl(), 0..LABELS.len())
            .prop_map(|(i, c, l)| Change::Update(i.index(usize::MAX), c, l)),
        1 => any::<prop::sample::Index>().prop_map(|i| Change::Delete(i.index(usize::MAX))),
    ]
}

fn labels(i: usize) -> Option<BTreeMap<String, String>> {
    let set = LABELS[i % LABELS.len()];
    (!set.is_empty()).then(|| {
        set.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    })
}

fn owner_ref(kind: &str, name: &str, uid: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(controller),
        block_owner_deletion: Some(true),
    }
}

/// The metadata of `o` for an owner of kind `owner_kind`.
fn metadata(o: &Obj, owner_kind: &str) -> ObjectMeta {
    let namespace = if o.other_ns { OTHER_NS } else { NS };
    let refs = match o.ctrl {
        Ctrl::Orphan => None,
        Ctrl::Owner => Some(owner_ref(owner_kind, OWNER_NAME, OWNER_UID, true)),
        Ctrl::OwnerUidOtherRef => Some(owner_ref("StatefulSet", "other", OWNER_UID, true)),
        Ctrl::Foreign => Some(owner_ref(owner_kind, "db", "uid-foreign", true)),
        Ctrl::DeletedOwner => Some(owner_ref(owner_kind, OWNER_NAME, "uid-deleted", true)),
        Ctrl::NonController => Some(owner_ref(owner_kind, OWNER_NAME, OWNER_UID, false)),
    };
    ObjectMeta {
        namespace: Some(namespace.into()),
        name: Some(format!("obj-{:02}", o.name)),
        uid: Some(format!("{namespace}-{}", o.name)),
        labels: labels(o.labels),
        owner_references: refs.map(|r| vec![r]),
        deletion_timestamp: o.deleting.then_some(Time(Timestamp::UNIX_EPOCH)),
        ..Default::default()
    }
}

/// Two stores with the same history: one with `indexes`, one without any.
fn stores<T: Dependent>(
    objs: Vec<T>,
    changes: &[Change],
    update: impl Fn(&T, Ctrl, usize) -> T,
    indexes: &[(&str, kcm_store::IndexFn<T>)],
) -> (Lister<T>, Lister<T>) {
    let indexed: Store<T> = Store::new();
    for (name, f) in indexes {
        indexed.add_indexer(name, f.clone()).expect("index");
    }
    let plain: Store<T> = Store::new();
    let objs: Vec<Arc<T>> = objs.into_iter().map(Arc::new).collect();
    for o in &objs {
        indexed.add(o.clone());
        plain.add(o.clone());
    }
    for c in changes {
        if objs.is_empty() {
            break;
        }
        match *c {
            Change::Update(i, ctrl, labels) => {
                let new = Arc::new(update(&objs[i % objs.len()], ctrl, labels));
                indexed.update(new.clone());
                plain.update(new);
            }
            Change::Delete(i) => {
                let key = ObjectKey::from_meta(objs[i % objs.len()].metadata());
                indexed.delete(&key);
                plain.delete(&key);
            }
        }
    }
    (Lister::new(indexed), Lister::new(plain))
}

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

fn names<T: Dependent>(objs: &[Arc<T>]) -> Vec<String> {
    objs.iter()
        .map(|o| ObjectKey::from_meta(o.metadata()).to_string())
        .collect()
}

fn by_name<T: Dependent>(mut objs: Vec<Arc<T>>) -> Vec<Arc<T>> {
    objs.sort_by(|a, b| a.metadata().name.cmp(&b.metadata().name));
    objs
}

fn replica_set(o: &Obj) -> ReplicaSet {
    ReplicaSet {
        metadata: metadata(o, "Deployment"),
        ..Default::default()
    }
}

fn pod(o: &Obj) -> PodView {
    PodView {
        metadata: metadata(o, "ReplicaSet"),
        ..Default::default()
    }
}

/// A copy of `meta` with the controller and labels of a change.
fn changed(meta: &ObjectMeta, ctrl: Ctrl, labels: usize, owner_kind: &str) -> ObjectMeta {
    let o = Obj {
        other_ns: meta.namespace.as_deref() == Some(OTHER_NS),
        name: 0,
        ctrl,
        labels,
        deleting: meta.deletion_timestamp.is_some(),
    };
    ObjectMeta {
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        ..metadata(&o, owner_kind)
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
